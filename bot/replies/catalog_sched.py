"""The catalog's entries for the scheduler's view of a node (``bot.replies.nodestate``), kept beside the main
table (``bot.replies.catalog``), which includes them. Pure."""

from __future__ import annotations

from bot.model.case import Lang

SCHEDULER: dict[str, dict[Lang, str]] = {
    "sched.heading": {"en": "Scheduler, now", "ko": "지금 스케줄러 상태"},
    "sched.state.idle": {"en": "idle", "ko": "유휴"},
    "sched.state.allocated": {"en": "allocated", "ko": "할당됨"},
    "sched.state.mixed": {"en": "mixed (partly allocated)", "ko": "일부 할당됨(mixed)"},
    "sched.state.drained": {"en": "drained", "ko": "drain 완료"},
    "sched.state.draining": {"en": "draining (jobs still running)", "ko": "drain 중(작업이 아직 실행 중)"},
    "sched.state.down": {"en": "down", "ko": "다운"},
    "sched.state.unknown": {"en": "state unknown", "ko": "상태 알 수 없음"},
    "sched.not_responding": {"en": "not responding", "ko": "응답 없음"},
    "sched.reason": {"en": "reason: {reason}", "ko": "사유: {reason}"},
    "sched.reason.by": {"en": "set by {by}", "ko": "{by}이(가) 설정"},
    "sched.reason.at": {"en": "at {at}", "ko": "{at}에"},
    "sched.jobs": {"en": "{n} job(s) running, {users} user(s)", "ko": "실행 중인 작업 {n}개, 사용자 {users}명"},
    "sched.no_jobs": {"en": "no job running", "ko": "실행 중인 작업 없음"},
    "sched.failed": {"en": "{n} job(s) failed here in 24 h", "ko": "24시간 동안 여기서 실패한 작업 {n}개"},
    "sched.unknown_node": {"en": "not a node the scheduler knows", "ko": "스케줄러가 모르는 노드"},
    "sched.unreachable": {"en": "scheduler not reachable", "ko": "스케줄러에 연결할 수 없음"},
}
