"""Block Kit building blocks shared by the reply modules, each within Slack's limits."""

from __future__ import annotations

from typing import Any

from bot.model.case import Case, Lang
from bot.replies.mrkdwn import truncate

MESSAGE_BLOCKS = 50
HOME_BLOCKS = 100
ACTIONS_ELEMENTS = 25
SECTION_LIMIT = 3000
HEADER_LIMIT = 150
CONTEXT_LIMIT = 2000


def cut(value: str, limit: int) -> str:
    """Plain text cut to ``limit`` characters, ending in "…" when cut."""
    return value if len(value) <= limit else value[: limit - 1] + "…"


def section(mrkdwn: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": truncate(mrkdwn, SECTION_LIMIT)}}


def context(mrkdwn: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": truncate(mrkdwn, CONTEXT_LIMIT)}]}


def header(plain: str) -> dict[str, Any]:
    flat = " ".join(plain.split()) or "-"
    return {"type": "header", "text": {"type": "plain_text", "text": cut(flat, HEADER_LIMIT)}}


def case_title(case: Case, lang: Lang) -> str:
    """The case's title in ``lang``, else in the other language, else its id."""
    return case.title.get(lang) or case.title.get("en") or case.title.get("ko") or case.id
