"""Every fixed text the bot shows people, in English and Korean, in one typed table. Pure.

One table rather than gettext ``.po`` files: the ``replies`` package is pure (it reads no files, so a
catalog it loads at import would be the one exception), every entry is checked by mypy and by
``tests/test_catalog.py`` (both languages, the same ``{placeholders}`` on both sides, the glossary's
Korean terms, particles attached), and the keys say where a text is used. ``tools/export_po.py`` writes
the table as a ``.po`` file for translators' tools, and reads one back.

Keys are dotted by use: bare keys label the full case, the first reply, buttons, App Home and the digest;
``tier.`` how sure a match is; ``lang.READER.LANGUAGE`` a language named in the reader's language;
``msg.`` the slash command's messages; ``draft.`` the draft form; ``nodes.`` node memory (``sched.`` the
scheduler, in catalog_sched.py); ``topics.`` topic kinds; ``nomatch.``/``unknown.`` replies with no case."""

from __future__ import annotations

from bot.model.case import Lang
from bot.replies.catalog_sched import SCHEDULER

CATALOG: dict[str, dict[Lang, str]] = {
    # -- labels: the full case, the first reply, buttons, App Home, the digest
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
        "en": (
            "A case joins the digest once a person on your team reviews it: `incident-bot cases review "
            "ID --by NAME`, or `/incident review ID` in Slack (REVIEWERS)."
        ),
        "ko": (
            "팀의 누군가가 사례를 검토하면 다이제스트에 실립니다: `incident-bot cases review ID --by "
            "NAME`, 또는 Slack에서 `/incident review ID` (REVIEWERS)."
        ),
    },
    "first_lesson": {"en": "Lesson", "ko": "교훈"},
    "busy": {
        "en": "I'm busy matching other pastes right now; please try again in a minute.",
        "ko": "지금 다른 로그를 확인하느라 바쁩니다. 1분 뒤에 다시 시도해 주세요.",
    },
    "helpful": {"en": "Helpful", "ko": "도움됨"},
    "not_this": {"en": "Not this case", "ko": "이 사례 아님"},
    "others": {"en": "Other matches", "ko": "다른 후보"},
    "switch": {"en": "한국어 먼저", "ko": "English first"},
    "voted.helpful": {"en": "Thanks: {case} marked helpful.", "ko": "감사합니다: {case} 도움됨으로 기록했습니다."},
    "voted.not_helpful": {
        "en": "Thanks: {case} marked as not this case.",
        "ko": "감사합니다: {case}이 사례 아님으로 기록했습니다.",
    },
    "voted.change": {
        "en": "One vote per person per answer: click the other button to change it.",
        "ko": "답변마다 한 표입니다. 다른 버튼을 누르면 바뀝니다.",
    },
    "invalid": {
        "en": "This button is no longer valid (the answer was not found). Ask again with /incident.",
        "ko": "이 버튼은 더 이상 유효하지 않습니다. /incident로 다시 요청해 주세요.",
    },
    "others.heading": {"en": "Other matches for {case}", "ko": "{case} 외의 다른 후보"},
    "others.none": {"en": "No other case matched this paste.", "ko": "이 로그에 맞는 다른 사례가 없습니다."},
    "others.hint": {"en": "Full case: /incident ID", "ko": "전체 사례: /incident ID"},
    "pick": {"en": "It was {case}", "ko": "{case} 였음"},
    "picked": {
        "en": "Thanks: {case} noted as the answer to this paste.",
        "ko": "감사합니다: 이 로그의 답을 {case}로 기록했습니다.",
    },
    "keep": {"en": "Save as an example", "ko": "예시로 저장"},
    "examples.saved": {
        "en": "{n} line(s) of the paste, redacted, now help recognise {case} (kept {days} days).",
        "ko": "로그의 {n}줄을 가려서 저장했습니다. 이제 {case}를 알아보는 데 쓰입니다({days}일 보관).",
    },
    "examples.none": {
        "en": "No line of this paste was specific enough to keep as an example.",
        "ko": "이 로그에는 예시로 남길 만큼 구체적인 줄이 없습니다.",
    },
    "examples.dm": {
        "en": "Nothing from a direct message is kept unless you ask: Save as an example.",
        "ko": "DM의 내용은 요청하지 않으면 저장하지 않습니다. 저장하려면: 예시로 저장.",
    },
    "examples.withdrawn": {
        "en": "Your earlier confirmation of {case} for this paste was withdrawn.",
        "ko": "이 로그를 {case}로 확인했던 기록을 철회했습니다.",
    },
    "home.title": {"en": "Incident Bot", "ko": "Incident Bot"},
    "home.intro": {
        "en": (
            "Paste a GPU-cluster error in a channel I am in, use /incident, or the message shortcut "
            "“Match to known incidents”."
        ),
        "ko": (
            "제가 있는 채널에 GPU 클러스터 오류를 붙여 넣거나, /incident 또는 메시지 바로가기 “Match to "
            "known incidents”를 사용하세요."
        ),
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
    "org": {"en": "Org", "ko": "조직"},
    "date": {"en": "Date", "ko": "날짜"},
    "digest.count": {"en": "Cases: {n}", "ko": "사례 {n}건"},
    "digest.nodes": {"en": "Nodes that failed more than once this week", "ko": "이번 주 두 번 이상 실패한 노드"},
    "do_now": {"en": "Do now", "ko": "지금 할 일"},
    "hint.node": {
        "en": "NODE: the paste does not name it. Find it with `sacct -j {job} -X -o NodeList%60`.",
        "ko": "NODE: 로그에 노드 이름이 없습니다. `sacct -j {job} -X -o NodeList%60`로 찾습니다.",
    },
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
        "ko": "모든 rank가 멈춘 collective를 보고한다. 실패한 rank는 아무것도 남기지 않았을 수 있다",
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
    "notes.transient": {
        "en": "The gradient norm was NaN or inf only briefly and finite values followed: "
        "that is loss scaling skipping a step, not divergence.",
        "ko": "그래디언트 노름이 잠깐만 NaN 또는 inf였고 그 뒤로 유한한 값이 이어졌습니다. "
        "발산이 아니라 loss scaling이 스텝 하나를 건너뛴 것입니다.",
    },
    "cut": {"en": "Cut to fit Slack's limits.", "ko": "Slack 한도에 맞춰 잘랐습니다."},
    "full_case": {"en": "Full case", "ko": "전체 사례"},
    "details.none": {
        "en": "This case is no longer in the library.",
        "ko": "이 사례는 더 이상 라이브러리에 없습니다.",
    },
    # -- how sure a match is
    "tier.exact": {"en": "exact match", "ko": "정확히 일치"},
    "tier.strong": {"en": "strong match", "ko": "유력한 후보"},
    "tier.weak": {"en": "weak match", "ko": "약한 후보"},
    # -- a language named in the reader's language (lang.READER.LANGUAGE: the same in both columns)
    "lang.en.en": {"en": "English", "ko": "English"},
    "lang.en.ko": {"en": "Korean", "ko": "Korean"},
    "lang.ko.en": {"en": "영어", "ko": "영어"},
    "lang.ko.ko": {"en": "한국어", "ko": "한국어"},
    # -- the slash command: help, usage lines, confirmations
    "msg.recent": {"en": "Recent cases", "ko": "최근 사례"},
    "msg.library.empty": {"en": "The library is empty.", "ko": "라이브러리가 비어 있습니다."},
    "msg.search.usage": {"en": "Usage: /incident search WORDS", "ko": "사용법: /incident search 단어"},
    "msg.search.heading": {"en": "Search: {words}", "ko": "검색: {words}"},
    "msg.search.none": {"en": "No case matches those words.", "ko": "그 단어에 맞는 사례가 없습니다."},
    "msg.similar.usage": {"en": "Usage: /incident similar ID", "ko": "사용법: /incident similar ID"},
    "msg.similar.heading": {"en": "Similar to {id}", "ko": "{id}와 비슷한 사례"},
    "msg.similar.none": {"en": "No similar case.", "ko": "비슷한 사례가 없습니다."},
    "msg.similar.remote_failed": {
        "en": "The incident library's API did not answer ({error}); local similarity only.",
        "ko": "incident library API가 응답하지 않았습니다({error}). 로컬 유사도만 보여 줍니다.",
    },
    "msg.similar.remote": {"en": "From the incident library:", "ko": "incident library에서:"},
    "msg.nothing": {"en": "(nothing)", "ko": "(없음)"},
    "msg.lang.usage": {"en": "Usage: /incident lang en|ko|both", "ko": "사용법: /incident lang en|ko|both"},
    "msg.lang.no_user": {"en": "Language preferences need a user.", "ko": "언어 설정은 사용자별로만 저장됩니다."},
    "msg.lang.saved": {
        "en": "Saved: answers will be in {value} only (the language button or /incident lang both shows both).",
        "ko": "저장했습니다: 답변을 {value}로만 보여 줍니다 (언어 버튼이나 /incident lang both로 두 언어 모두 보기).",
    },
    "msg.lang.saved_both": {
        "en": "Saved: answers show both languages, your Slack language first (Korean first for a Korean locale).",
        "ko": "저장했습니다: 답변에 두 언어를 모두 보여 주고, Slack 언어 설정의 언어를 먼저 보여 줍니다.",
    },
    "msg.topics.heading": {"en": "Topics", "ko": "주제"},
    "msg.topics.kind": {
        "en": "/incident topics class (component, cause, symptom) lists one kind in full",
        "ko": "/incident topics class (component, cause, symptom)로 한 종류를 모두 봅니다",
    },
    "msg.topics.hint": {
        "en": "/incident topic NAME lists its cases; narrow a word with class:, component:, cause: or symptom:",
        "ko": "/incident topic 이름 으로 사례를 봅니다. class:, component:, cause:, symptom: 으로 좁힐 수 있습니다.",
    },
    "msg.topic.usage": {"en": "Usage: /incident topic NAME [page]", "ko": "사용법: /incident topic 이름 [쪽]"},
    "msg.topic.unknown": {
        "en": "No topic {words}. Closest: {closest} (/incident topics lists them all)",
        "ko": "{words}라는 주제가 없습니다. 가까운 주제: {closest} (/incident topics로 전체 보기)",
    },
    "msg.topic.heading": {"en": "Topic {words}: {n} case(s)", "ko": "주제 {words}: 사례 {n}건"},
    "msg.topic.page": {"en": "{names} · page {page} of {pages}", "ko": "{names} · {pages}쪽 중 {page}쪽"},
    "msg.topic.next": {"en": "next: /incident topic {words} {page}", "ko": "다음: /incident topic {words} {page}"},
    "msg.review.usage": {"en": "Usage: /incident review ID [note]", "ko": "사용법: /incident review ID [메모]"},
    "msg.review.not_allowed": {
        "en": "Only the reviewers listed in REVIEWERS may record a review.",
        "ko": "REVIEWERS에 등록된 검토자만 검토를 기록할 수 있습니다.",
    },
    "msg.review.refused": {
        "en": "{id} was not marked reviewed: it fails validation ({reason}).",
        "ko": "{id}는 검증을 통과하지 못해 검토로 기록하지 않았습니다({reason}).",
    },
    "msg.review.no_reviewer": {
        "en": "A review needs the reviewer's name (--by NAME).",
        "ko": "검토에는 검토자 이름이 필요합니다(--by 이름).",
    },
    "msg.review.saved.digested": {
        "en": "{id} reviewed by {who} on {when}. It was already in an earlier digest, which names each case once.",
        "ko": "{id}를 {who}가 {when}에 검토했습니다. 이미 지난 주간 요약에 실렸습니다(사례마다 한 번만 실립니다).",
    },
    "msg.review.saved": {
        "en": "{id} reviewed by {who} on {when}: the next weekly digest will carry it.",
        "ko": "{id}를 {who}가 {when}에 검토했습니다. 다음 주간 요약에 실립니다.",
    },
    "msg.forget.not_allowed": {
        "en": "Only the reviewers listed in REVIEWERS may list or delete confirmed examples.",
        "ko": "REVIEWERS에 등록된 검토자만 확인된 예시를 보거나 삭제할 수 있습니다.",
    },
    "msg.forget.usage": {"en": "Usage: /incident forget [ID]", "ko": "사용법: /incident forget [ID]"},
    "msg.forget.none": {"en": "No confirmed examples are stored.", "ko": "저장된 확인 예시가 없습니다."},
    "msg.forget.heading": {
        "en": "Confirmed examples, most rejected first (/incident forget ID deletes one):",
        "ko": "확인된 예시, 거절이 많은 순서 (/incident forget ID로 하나 삭제):",
    },
    "msg.forget.unknown": {
        "en": "There is no confirmed example #{id} (it may have expired or been deleted).",
        "ko": "확인된 예시 #{id}가 없습니다 (만료되었거나 이미 삭제되었을 수 있습니다).",
    },
    "msg.forget.done": {
        "en": "Example #{id} of {case} deleted ({n} confirmation(s)); every replica stops using it on its next check.",
        "ko": "{case}의 예시 #{id}를 삭제했습니다 (확인 {n}건). 모든 복제본이 다음 확인 때 더 이상 쓰지 않습니다.",
    },
    "msg.auto.usage": {"en": "Usage: /incident auto off|on", "ko": "사용법: /incident auto off|on"},
    "msg.auto.no_channel": {
        "en": "Automatic replies are set per channel; run this in a channel.",
        "ko": "자동 답변은 채널별로 설정합니다. 채널에서 실행해 주세요.",
    },
    "msg.auto.saved.by": {
        "en": (
            "{user} turned automatic replies to pasted errors {value} in this channel. /incident auto "
            "{back} turns them {back} again."
        ),
        "ko": (
            "{user} 님이 이 채널에서 붙여 넣은 오류에 대한 자동 답변을 {value}로 바꿨습니다. /incident "
            "auto {back}로 다시 바꿀 수 있습니다."
        ),
    },
    "msg.auto.saved": {
        "en": "Automatic replies to pasted errors are now {value} in this channel.",
        "ko": "이 채널에서 붙여 넣은 오류에 대한 자동 답변을 {value}로 바꿨습니다.",
    },
    "msg.help": {
        "en": """\
/incident IL-0427            show a case (English and Korean)
/incident                    the most recent cases
/incident search WORDS       search titles, summaries, components and root causes (component:nccl filters)
/incident similar ID         cases that share components, root cause or symptoms
/incident nodes              hosts that failed more than once lately, with their cases and threads
/incident topics             the library's topics: failure classes, components, causes, symptoms
/incident topic nccl [page]  every case of a topic (class:, component:, cause:, symptom: narrow it)
/incident lang en|ko|both    which language comes first in answers (both: follow your Slack locale)
/incident auto off|on        automatic replies to pasted errors in this channel
/incident digest             preview the next weekly digest
/incident review ID [note]   record a review of a case (reviewers only); the digest carries it
/incident forget [ID]        list confirmed examples, or delete one (reviewers only)
/incident <pasted error>     match an error or stack trace against the library
Paste a log in a channel the bot is in and it answers in the thread when it recognises the failure.\
""",
        "ko": """\
/incident IL-0427            사례 보기 (영어와 한국어)
/incident                    최근 사례
/incident search 단어        제목, 요약, 구성 요소, 근본 원인에서 찾기
/incident similar ID         구성 요소, 근본 원인, 증상이 겹치는 사례
/incident nodes              최근 두 번 이상 실패한 노드와 그 사례, 스레드
/incident topics             라이브러리의 주제: 장애 유형, 구성 요소, 원인, 증상
/incident topic nccl [쪽]    한 주제의 모든 사례 (class:, component:, cause:, symptom: 으로 좁히기)
/incident lang en|ko|both    답변에서 먼저 보일 언어 (both: Slack 언어 설정을 따름)
/incident auto off|on        이 채널에 붙여 넣은 오류에 자동으로 답할지
/incident digest             다음 주간 요약 미리 보기
/incident review ID [메모]   사례 검토 기록 (검토자만), 주간 요약에 실림
/incident forget [ID]        확인된 예시 목록, 또는 하나 삭제 (검토자만)
/incident <붙여 넣은 오류>   오류나 스택 트레이스를 라이브러리와 대조
봇이 있는 채널에 로그를 붙여 넣으면, 아는 장애일 때 스레드에 답합니다.\
""",
    },
    # -- the case-draft form
    "draft.button": {"en": "Start a case draft", "ko": "사례 초안 시작"},
    "draft.title": {"en": "New case draft", "ko": "새 사례 초안"},
    "draft.submit": {"en": "Save draft", "ko": "초안 저장"},
    "draft.close": {"en": "Cancel", "ko": "취소"},
    "draft.loading": {"en": "Reading the paste's error lines…", "ko": "로그의 오류 줄을 읽는 중…"},
    "draft.title_en": {"en": "Title (English)", "ko": "제목 (영어)"},
    "draft.title_ko": {"en": "Title (Korean)", "ko": "제목 (한국어)"},
    "draft.summary_en": {"en": "Summary (English)", "ko": "요약 (영어)"},
    "draft.summary_ko": {"en": "Summary (Korean)", "ko": "요약 (한국어)"},
    "draft.runbook_en": {"en": "Runbook, one step per line (English)", "ko": "런북, 한 줄에 한 단계 (영어)"},
    "draft.runbook_ko": {"en": "Runbook, one step per line (Korean)", "ko": "런북, 한 줄에 한 단계 (한국어)"},
    "draft.signatures": {"en": "Signatures, one per line", "ko": "시그니처, 한 줄에 하나"},
    "draft.signatures.hint": {
        "en": (
            "Most specific first. A plain line is an exact string; re: starts an RE2 pattern; a leading "
            "! makes it proof on its own (otherwise a hint). Each is checked like a case file's."
        ),
        "ko": (
            "구체적인 것부터. 그냥 쓴 줄은 정확한 문자열, re: 로 시작하면 RE2 패턴, 맨 앞의 ! 는 그 "
            "줄만으로 증거가 된다는 뜻입니다(없으면 힌트). 사례 파일과 같은 검사를 거칩니다."
        ),
    },
    "draft.suspects": {"en": "Suspects at the time: {s}", "ko": "당시 의심 노드: {s}"},
    "draft.no_lines": {
        "en": "No error line of the paste passed the checks: write the signatures yourself.",
        "ko": "검사를 통과한 오류 줄이 없습니다. 시그니처를 직접 써 주세요.",
    },
    "draft.saved": {
        "en": "Case draft D-{id} saved by <@{user}>: {title}. Export it with `incident-bot cases draft export {id}`.",
        "ko": "<@{user}>가 사례 초안 D-{id}를 저장했습니다: {title}. 내보내기: `incident-bot cases draft export {id}`",
    },
    "draft.expired": {
        "en": "This form is not yours, or it expired. Start the draft again from the answer.",
        "ko": "본인의 양식이 아니거나 만료되었습니다. 답변에서 초안을 다시 시작해 주세요.",
    },
    # -- node memory
    "nodes.repeat": {
        "en": "{host} failed {n} times since {since} ({kinds})",
        "ko": "{host}: {since} 이후 {n}번 실패 ({kinds})",
    },
    "nodes.repeat.once": {
        "en": "{host} failed before, on {since} ({kinds})",
        "ko": "{host}: {since}에 실패한 적 있음 ({kinds})",
    },
    "nodes.earlier": {"en": "earlier", "ko": "이전"},
    "nodes.heading": {"en": "Nodes that failed more than once", "ko": "두 번 이상 실패한 노드"},
    "nodes.none": {
        "en": "No node failed more than once in the last {days} days.",
        "ko": "최근 {days}일 동안 두 번 이상 실패한 노드가 없습니다.",
    },
    "nodes.week": {"en": "Nodes that failed more than once this week", "ko": "이번 주 두 번 이상 실패한 노드"},
    # -- topic kinds
    "topics.class": {"en": "Failure classes", "ko": "장애 유형"},
    "topics.component": {"en": "Components", "ko": "구성 요소"},
    "topics.cause": {"en": "Root causes", "ko": "근본 원인"},
    "topics.symptom": {"en": "Symptoms", "ko": "증상"},
    # -- replies with no case
    "nomatch.headline": {"en": "No known case fits this paste.", "ko": "이 로그에 맞는 알려진 사례가 없습니다."},
    "nomatch.job_error": {
        "en": "This looks like an error in the job, not the cluster:",
        "ko": "클러스터가 아니라 작업 자체의 오류로 보입니다:",
    },
    "nomatch.closest": {"en": "Closest weak candidates", "ko": "가장 가까운 약한 후보"},
    "unknown.intro": {"en": "No case {raw} in the library.", "ko": "라이브러리에 {raw} 사례가 없습니다."},
    # -- said by the Slack handlers before the reader's language is known (both languages, ``both_langs``)
    "paste.not_text": {
        "en": "Only text files and snippets can be matched; paste the log, or share it as a text file.",
        "ko": "텍스트 파일과 스니펫만 대조할 수 있습니다. 로그를 붙여 넣거나 텍스트 파일로 공유해 주세요.",
    },
    "paste.external": {
        "en": "Files kept outside Slack (Google Drive, Dropbox, ...) can't be fetched; share the log as a Slack file.",
        "ko": "Slack 밖(Google Drive, Dropbox 등)에 있는 파일은 가져올 수 없습니다. 로그를 Slack 파일로 공유해 주세요.",
    },
    "paste.lookup_failed": {
        "en": "The shared file could not be looked up in Slack (files.info).",
        "ko": "공유된 파일을 Slack에서 찾지 못했습니다(files.info).",
    },
    "paste.nothing": {"en": "Nothing to match.", "ko": "대조할 내용이 없습니다."},
    "paste.thread_unreadable": {
        "en": "I could not read the first message of this thread.",
        "ko": "이 스레드의 첫 메시지를 읽지 못했습니다.",
    },
    "paste.thread_empty": {
        "en": "The first message of this thread has nothing to match.",
        "ko": "이 스레드의 첫 메시지에는 대조할 내용이 없습니다.",
    },
    "paste.message_empty": {
        "en": "This message has no text or text file to match.",
        "ko": "이 메시지에는 대조할 텍스트나 텍스트 파일이 없습니다.",
    },
    "file.download_failed": {
        "en": "The file could not be downloaded from Slack.",
        "ko": "Slack에서 파일을 내려받지 못했습니다.",
    },
    "file.http": {
        "en": "Slack answered HTTP {status} for the file.",
        "ko": "Slack이 파일 요청에 HTTP {status}로 답했습니다.",
    },
    "file.login_page": {
        "en": "Slack sent a login page instead of the file: the bot token is missing the files:read scope or cannot"
        " see this conversation.",
        "ko": "Slack이 파일 대신 로그인 페이지를 보냈습니다. 봇 토큰에 files:read 권한이 없거나 이 대화를 볼 수"
        " 없습니다.",
    },
    "share.button": {"en": "Share in channel", "ko": "채널에 공유"},
    "share.refused": {
        "en": "This answer can no longer be shared; run /incident again.",
        "ko": "이 답변은 더 이상 공유할 수 없습니다. /incident를 다시 실행해 주세요.",
    },
    "unknown.closest": {"en": "Closest ids", "ko": "가장 가까운 id"},
    **SCHEDULER,
}


def both_langs(key: str, **values: object) -> str:
    """The text ``key`` in English, then in Korean: what is said before the reader's language is known."""
    return f"{text(key, 'en', **values)} / {text(key, 'ko', **values)}"


def text(key: str, lang: Lang, **values: object) -> str:
    """The text ``key`` in ``lang`` with ``values`` filled. KeyError for an unknown key (a bug, not input)."""
    template = CATALOG[key][lang]
    return template.format(**values) if values else template
