"""Every user-facing label in both languages, in one table (the library's own Korean section words)."""

from __future__ import annotations

from bot.model.case import Lang

LABELS: dict[str, dict[Lang, str]] = {
    "severity": {"en": "Severity", "ko": "심각도"},
    "impact.scope": {"en": "Impact scope", "ko": "영향 범위"},
    "impact.users": {"en": "Users affected", "ko": "영향 사용자"},
    "impact.region": {"en": "Region", "ko": "지역"},
    "timeline.detected_after": {"en": "Time to detect", "ko": "감지까지"},
    "timeline.resolved_after": {"en": "Time to resolve", "ko": "복구까지"},
    "summary": {"en": "Summary", "ko": "요약"},
    "symptoms_text": {"en": "Symptoms", "ko": "증상"},
    "root_cause": {"en": "Root cause", "ko": "원인"},
    "trigger": {"en": "Trigger", "ko": "촉발"},
    "detection": {"en": "Detection", "ko": "감지"},
    "remediation": {"en": "Remediation", "ko": "조치"},
    "action_items": {"en": "Follow-up actions", "ko": "후속 조치"},
    "lessons": {"en": "Lessons", "ko": "교훈"},
    "sources": {"en": "Sources", "ko": "출처"},
    "related": {"en": "Related cases", "ko": "관련 사례"},
    "components": {"en": "Components", "ko": "구성 요소"},
    "missing": {"en": "(no English text in the library yet)", "ko": "(라이브러리에 아직 한국어 글이 없습니다)"},
    "evidence": {"en": "Matched line", "ko": "일치한 줄"},
    "suspects": {"en": "Suspects", "ko": "의심 대상"},
    "also": {"en": "Also possible", "ko": "다른 후보"},
    "digest.title": {"en": "Newly reviewed incident cases", "ko": "새로 검토된 사례"},
    "digest.empty": {"en": "No newly reviewed cases this period.", "ko": "이번 기간에 새로 검토된 사례가 없습니다."},
    "digest.how_reviewed": {
        "en": "A case joins the digest once a person on your team reviews it: "
        "`incident-bot cases review ID --by NAME`, or `/incident review ID` in Slack (REVIEWERS).",
        "ko": "팀의 누군가가 사례를 검토하면 다이제스트에 실립니다: "
        "`incident-bot cases review ID --by NAME`, 또는 Slack에서 `/incident review ID` (REVIEWERS).",
    },
    "first_lesson": {"en": "Lesson", "ko": "교훈"},
    "busy": {
        "en": "I'm busy matching other pastes right now; please try again in a minute.",
        "ko": "지금 다른 로그를 확인하느라 바쁩니다. 1분 뒤에 다시 시도해 주세요.",
    },
    # buttons, votes and App Home (bot/interactive.py)
    "helpful": {"en": "Helpful", "ko": "도움됨"},
    "not_this": {"en": "Not this case", "ko": "이 사례 아님"},
    "others": {"en": "Other matches", "ko": "다른 후보"},
    "switch": {"en": "한국어 먼저", "ko": "English first"},  # names the language it switches to
    "voted.helpful": {"en": "Thanks: {case} marked helpful.", "ko": "감사합니다: {case} 도움됨으로 기록했습니다."},
    "voted.not_helpful": {
        "en": "Thanks: {case} marked as not this case.",
        "ko": "감사합니다: {case} 이 사례 아님으로 기록했습니다.",
    },
    "voted.change": {
        "en": "One vote per person per answer: click the other button to change it.",
        "ko": "답변마다 한 표입니다. 다른 버튼을 누르면 바뀝니다.",
    },
    "invalid": {
        "en": "This button is no longer valid (the answer was not found). Ask again with /incident.",
        "ko": "이 버튼은 더 이상 유효하지 않습니다. /incident 로 다시 요청해 주세요.",
    },
    "others.heading": {"en": "Other matches for {case}", "ko": "{case} 외의 다른 후보"},
    "others.none": {"en": "No other case matched this paste.", "ko": "이 로그에 맞는 다른 사례가 없습니다."},
    "others.hint": {"en": "Full case: /incident ID", "ko": "전체 사례: /incident ID"},
    "pick": {"en": "It was {case}", "ko": "{case} 였음"},
    "picked": {
        "en": "Thanks: {case} noted as the answer to this paste.",
        "ko": "감사합니다: 이 로그의 답을 {case} 로 기록했습니다.",
    },
    "keep": {"en": "Save as an example", "ko": "예시로 저장"},
    "examples.saved": {
        "en": "{n} line(s) of the paste, redacted, now help recognise {case} (kept {days} days).",
        "ko": "로그의 {n}줄을 가려서 저장했습니다. 이제 {case} 를 알아보는 데 쓰입니다({days}일 보관).",
    },
    "examples.none": {
        "en": "No line of this paste was specific enough to keep as an example.",
        "ko": "이 로그에는 예시로 남길 만큼 구체적인 줄이 없습니다.",
    },
    "examples.dm": {
        "en": "Nothing from a direct message is kept unless you ask: Save as an example.",
        "ko": "DM 의 내용은 요청하지 않으면 저장하지 않습니다. 저장하려면: 예시로 저장.",
    },
    "examples.withdrawn": {
        "en": "Your earlier confirmation of {case} for this paste was withdrawn.",
        "ko": "이 로그를 {case} 로 확인했던 기록을 철회했습니다.",
    },
    "home.title": {"en": "Incident Bot", "ko": "Incident Bot"},
    "home.intro": {
        "en": "Paste a GPU-cluster error in a channel I am in, use /incident, or the message shortcut "
        "“Match to known incidents”.",
        "ko": "제가 있는 채널에 GPU 클러스터 오류를 붙여 넣거나, /incident 또는 메시지 바로가기 "
        "“Match to known incidents”를 사용하세요.",
    },
    "home.recent": {"en": "Recently reviewed cases", "ko": "최근 검토된 사례"},
    "home.matched": {"en": "Matched most in the last 30 days", "ko": "최근 30일 동안 가장 많이 일치한 사례"},
    "home.feedback": {"en": "Were the answers helpful?", "ko": "답변이 도움이 되었나요?"},
    "home.empty": {"en": "Nothing yet.", "ko": "아직 없습니다."},
    "home.times": {"en": "{n}×", "ko": "{n}회"},
    "home.votes": {
        "en": "{helpful} of {total} votes helpful ({share}%)",
        "ko": "투표 {total}건 중 {helpful}건 도움됨 ({share}%)",
    },
    "home.no_votes": {"en": "No votes yet.", "ko": "아직 투표가 없습니다."},
    "home.rejected": {"en": "Most often “not this case”", "ko": "“이 사례 아님”이 가장 많은 사례"},
    "home.more": {"en": "and {n} more", "ko": "외 {n}건"},
}

TIER_TEXT: dict[str, dict[Lang, str]] = {
    "exact": {"en": "exact match", "ko": "정확히 일치"},
    "strong": {"en": "strong match", "ko": "유력한 후보"},
    "weak": {"en": "weak match", "ko": "약한 후보"},
}


def label(key: str, lang: Lang) -> str:
    """The label for ``key`` in ``lang``. Raises KeyError for an unknown key (a bug, not user input)."""
    return LABELS[key][lang]


# Digest labels (appended by the digest work; keep existing keys stable).
LABELS.update(
    {
        "org": {"en": "Org", "ko": "조직"},
        "date": {"en": "Date", "ko": "날짜"},
        "digest.count": {"en": "Cases: {n}", "ko": "사례 {n}건"},
        "digest.nodes": {
            "en": "Nodes that failed more than once this week",
            "ko": "이번 주 두 번 이상 실패한 노드",
        },
    }
)

# The one-screen first reply (bot/replies/first.py) and the full case.
LABELS.update(
    {
        "do_now": {"en": "Do now", "ko": "지금 할 일"},
        "why": {"en": "Why", "ko": "원인"},
        "line": {"en": "line {n}", "ko": "{n}번째 줄"},
        "line.end": {"en": "line {n} from the end", "ko": "끝에서 {n}번째 줄"},
        "evidence.signature": {"en": "a line this failure prints", "ko": "이 장애가 남기는 줄"},
        "evidence.text": {"en": "close to a line this case quotes", "ko": "이 사례가 인용한 줄과 비슷함"},
        "evidence.example": {
            "en": "close to a line people confirmed for this case",
            "ko": "사람들이 이 사례로 확인한 줄과 비슷함",
        },
        "also.named": {"en": "also", "ko": "함께"},
        "suspects.failed": {"en": "Failed on {hosts}", "ko": "실패 노드 {hosts}"},
        "suspects.reported": {"en": "Reported by {hosts}", "ko": "보고한 노드 {hosts}"},
        "suspects.job": {"en": "job {job}", "ko": "작업 {job}"},
        "suspects.collective": {
            "en": "every rank reports a stalled collective; the failing one may have printed nothing",
            "ko": "모든 rank 가 멈춘 collective 를 보고한다. 실패한 rank 는 아무것도 남기지 않았을 수 있다",
        },
        "details": {"en": "Details", "ko": "자세히"},
        "runbook": {"en": "Next time: what to do", "ko": "다음에 할 일"},
        "remediation.then": {"en": "What was done then", "ko": "당시 조치"},
        "assumes": {"en": "Assumes", "ko": "전제"},
        "reviewed": {"en": "Reviewed by {who} on {when}", "ko": "{when} {who} 검토"},
        "notes.skipped": {
            "en": "The middle of the paste ({size} bytes{lines}) was skipped.",
            "ko": "로그 가운데 부분({size}바이트{lines})은 건너뛰었습니다.",
        },
        "notes.skipped.lines": {"en": ", {n} lines", "ko": ", {n}줄"},
        "notes.unread": {
            "en": "The last {n} bytes of the file were not fetched (over MAX_FILE_BYTES).",
            "ko": "파일의 마지막 {n}바이트는 가져오지 않았습니다(MAX_FILE_BYTES 초과).",
        },
        "notes.long": {
            "en": "{n} lines over 4,000 characters were matched by their start and end.",
            "ko": "4,000자를 넘는 줄 {n}개는 앞부분과 끝부분으로 대조했습니다.",
        },
        "notes.deadline": {
            "en": "Matching hit its deadline; this is what was found in time.",
            "ko": "대조가 제한 시간에 걸렸습니다. 그때까지 찾은 결과입니다.",
        },
        "cut": {"en": "Cut to fit Slack's limits.", "ko": "Slack 한도에 맞춰 잘랐습니다."},
        "full_case": {"en": "Full case", "ko": "전체 사례"},
        "details.none": {
            "en": "This case is no longer in the library.",
            "ko": "이 사례는 더 이상 라이브러리에 없습니다.",
        },
    }
)


# A language named in the reader's language: LANG_NAMES[reader][lang].
LANG_NAMES: dict[Lang, dict[Lang, str]] = {
    "en": {"en": "English", "ko": "Korean"},
    "ko": {"en": "영어", "ko": "한국어"},
}
