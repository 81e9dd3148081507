"""Every user-facing label in both languages, in one table (the library's own Korean section words)."""

from __future__ import annotations

from bot.models import Lang

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
    "first_lesson": {"en": "Lesson", "ko": "교훈"},
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
    }
)
