"""Fixed messages of the slash command in both languages: help, usage lines and confirmations. Pure.

Each message is shown in the reader's language, with the other language under it in smaller type
(``bot.replies.render.bilingual_reply``)."""

from __future__ import annotations

from bot.model.case import Lang

HELP: dict[Lang, str] = {
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
}

MESSAGES: dict[str, dict[Lang, str]] = {
    "recent": {"en": "Recent cases", "ko": "최근 사례"},
    "library.empty": {"en": "The library is empty.", "ko": "라이브러리가 비어 있습니다."},
    "search.usage": {"en": "Usage: /incident search WORDS", "ko": "사용법: /incident search 단어"},
    "search.heading": {"en": "Search: {words}", "ko": "검색: {words}"},
    "search.none": {"en": "No case matches those words.", "ko": "그 단어에 맞는 사례가 없습니다."},
    "similar.usage": {"en": "Usage: /incident similar ID", "ko": "사용법: /incident similar ID"},
    "similar.heading": {"en": "Similar to {id}", "ko": "{id} 와 비슷한 사례"},
    "similar.none": {"en": "No similar case.", "ko": "비슷한 사례가 없습니다."},
    "similar.remote_failed": {
        "en": "The incident library's API did not answer ({error}); local similarity only.",
        "ko": "incident library API 가 응답하지 않았습니다({error}). 로컬 유사도만 보여 줍니다.",
    },
    "similar.remote": {"en": "From the incident library:", "ko": "incident library 에서:"},
    "nothing": {"en": "(nothing)", "ko": "(없음)"},
    "lang.usage": {"en": "Usage: /incident lang en|ko|both", "ko": "사용법: /incident lang en|ko|both"},
    "lang.no_user": {"en": "Language preferences need a user.", "ko": "언어 설정은 사용자별로만 저장됩니다."},
    "lang.saved": {
        "en": "Saved: answers will be in {value} only (the language button or /incident lang both shows both).",
        "ko": "저장했습니다: 답변을 {value}로만 보여 줍니다 (언어 버튼이나 /incident lang both 로 두 언어 모두 보기).",
    },
    "lang.saved_both": {
        "en": "Saved: answers show both languages, your Slack language first (Korean first for a Korean locale).",
        "ko": "저장했습니다: 답변에 두 언어를 모두 보여 주고, Slack 언어 설정의 언어를 먼저 보여 줍니다.",
    },
    "topics.heading": {"en": "Topics", "ko": "주제"},
    "topics.kind": {
        "en": "/incident topics class (component, cause, symptom) lists one kind in full",
        "ko": "/incident topics class (component, cause, symptom) 로 한 종류를 모두 봅니다",
    },
    "topics.hint": {
        "en": "/incident topic NAME lists its cases; narrow a word with class:, component:, cause: or symptom:",
        "ko": "/incident topic 이름 으로 사례를 봅니다. class:, component:, cause:, symptom: 으로 좁힐 수 있습니다.",
    },
    "topic.usage": {"en": "Usage: /incident topic NAME [page]", "ko": "사용법: /incident topic 이름 [쪽]"},
    "topic.unknown": {
        "en": "No topic {words}. Closest: {closest} (/incident topics lists them all)",
        "ko": "{words} 라는 주제가 없습니다. 가까운 주제: {closest} (/incident topics 로 전체 보기)",
    },
    "topic.heading": {"en": "Topic {words}: {n} case(s)", "ko": "주제 {words}: 사례 {n}건"},
    "topic.page": {"en": "{names} · page {page} of {pages}", "ko": "{names} · {pages}쪽 중 {page}쪽"},
    "topic.next": {"en": "next: /incident topic {words} {page}", "ko": "다음: /incident topic {words} {page}"},
    "review.usage": {"en": "Usage: /incident review ID [note]", "ko": "사용법: /incident review ID [메모]"},
    "review.not_allowed": {
        "en": "Only the reviewers listed in REVIEWERS may record a review.",
        "ko": "REVIEWERS 에 등록된 검토자만 검토를 기록할 수 있습니다.",
    },
    "review.refused": {
        "en": "{id} was not marked reviewed: it fails validation ({reason}).",
        "ko": "{id} 는 검증을 통과하지 못해 검토로 기록하지 않았습니다({reason}).",
    },
    "review.no_reviewer": {
        "en": "A review needs the reviewer's name (--by NAME).",
        "ko": "검토에는 검토자 이름이 필요합니다(--by 이름).",
    },
    "review.saved.digested": {
        "en": "{id} reviewed by {who} on {when}. It was already in an earlier digest, which names each case once.",
        "ko": "{id} 를 {who} 가 {when} 에 검토했습니다. 이미 지난 주간 요약에 실렸습니다(사례마다 한 번만 실립니다).",
    },
    "review.saved": {
        "en": "{id} reviewed by {who} on {when}: the next weekly digest will carry it.",
        "ko": "{id} 를 {who} 가 {when} 에 검토했습니다. 다음 주간 요약에 실립니다.",
    },
    "forget.not_allowed": {
        "en": "Only the reviewers listed in REVIEWERS may list or delete confirmed examples.",
        "ko": "REVIEWERS 에 등록된 검토자만 확인된 예시를 보거나 삭제할 수 있습니다.",
    },
    "forget.usage": {"en": "Usage: /incident forget [ID]", "ko": "사용법: /incident forget [ID]"},
    "forget.none": {
        "en": "No confirmed examples are stored.",
        "ko": "저장된 확인 예시가 없습니다.",
    },
    "forget.heading": {
        "en": "Confirmed examples, most rejected first (/incident forget ID deletes one):",
        "ko": "확인된 예시, 거절이 많은 순서 (/incident forget ID 로 하나 삭제):",
    },
    "forget.unknown": {
        "en": "There is no confirmed example #{id} (it may have expired or been deleted).",
        "ko": "확인된 예시 #{id} 가 없습니다 (만료되었거나 이미 삭제되었을 수 있습니다).",
    },
    "forget.done": {
        "en": "Example #{id} of {case} deleted ({n} confirmation(s)); every replica stops using it on its next check.",
        "ko": "{case} 의 예시 #{id} 를 삭제했습니다 (확인 {n}건). 모든 복제본이 다음 확인 때 더 이상 쓰지 않습니다.",
    },
    "auto.usage": {"en": "Usage: /incident auto off|on", "ko": "사용법: /incident auto off|on"},
    "auto.no_channel": {
        "en": "Automatic replies are set per channel; run this in a channel.",
        "ko": "자동 답변은 채널별로 설정합니다. 채널에서 실행해 주세요.",
    },
    "auto.saved.by": {
        "en": "{user} turned automatic replies to pasted errors {value} in this channel."
        " /incident auto {back} turns them {back} again.",
        "ko": "{user} 님이 이 채널에서 붙여 넣은 오류에 대한 자동 답변을 {value} 로 바꿨습니다."
        " /incident auto {back} 로 다시 바꿀 수 있습니다.",
    },
    "auto.saved": {
        "en": "Automatic replies to pasted errors are now {value} in this channel.",
        "ko": "이 채널에서 붙여 넣은 오류에 대한 자동 답변을 {value} 로 바꿨습니다.",
    },
}


def message(key: str, lang: Lang, **values: str) -> str:
    """The fixed message ``key`` in ``lang`` with ``values`` filled. KeyError for an unknown key (a bug)."""
    return MESSAGES[key][lang].format(**values)
