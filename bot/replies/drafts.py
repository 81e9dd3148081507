"""Pure: the "Start a case draft" button value, the draft modal (loading and form views), reading a
submission, and the messages about a draft.

The button value carries the paste's redacted lines (``{"v":1,"d":1,"l":"en","x":[...]}``, sealed like
every value). The form's ``private_metadata`` is ``{"c": channel, "t": thread, "p": permalink, "s": sealed}``
where ``s`` seals the language and the lines to the channel and the user who opened it: a submission by
anyone else, or with other ids, does not unseal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.model.case import Lang
from bot.replies.buttons import LINE_CHARS, LINES, lines_value
from bot.replies.catalog import text
from bot.replies.mrkdwn import escape_mrkdwn, truncate, unescape_mrkdwn

ACTION_DRAFT = "start_case_draft"
DRAFT_CALLBACK = "case_draft"
_VALUE_BUDGET = 1_600
FORM_FIELDS = ("title_en", "title_ko", "summary_en", "summary_ko", "runbook_en", "runbook_ko", "signatures")
_MAX_LENGTH = {"title_en": 200, "title_ko": 200}
_MULTILINE = {"summary_en", "summary_ko", "runbook_en", "runbook_ko", "signatures"}


def words(key: str, lang: Lang, **values: object) -> str:
    return text(f"draft.{key}", lang, **values)


@dataclass(frozen=True)
class DraftStart:
    lang: Lang
    lines: tuple[str, ...]
    suspects: str = ""


def draft_value(lang: Lang, lines: Sequence[str], suspects: str = "") -> str:
    """The button's value: the reader's language and the paste's lines (redacted), within budget."""
    data: dict[str, Any] = {"v": 1, "d": 1, "l": lang, "x": lines_value(lines, _VALUE_BUDGET)}
    if suspects:
        data["u"] = truncate(escape_mrkdwn(suspects), 200)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def parse_draft_value(value: object) -> DraftStart | None:
    """What :func:`draft_value` wrote, or None for anything else. Never raises."""
    if not isinstance(value, str) or len(value) > 2000:
        return None
    try:
        data = json.loads(value)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not {"v", "d", "l", "x"} <= set(data) <= {"v", "d", "l", "x", "u"}:
        return None
    if data["v"] != 1 or data["d"] != 1 or not isinstance(data.get("u", ""), str) or len(data.get("u", "")) > 200:
        return None
    lines = data["x"]
    if data["l"] not in ("en", "ko") or not isinstance(lines, list) or len(lines) > LINES:
        return None
    if not all(isinstance(line, str) and len(line) <= LINE_CHARS for line in lines):
        return None
    lang: Lang = "en" if data["l"] == "en" else "ko"
    return DraftStart(lang, tuple(unescape_mrkdwn(line) for line in lines), unescape_mrkdwn(data.get("u", "")))


def _plain(text: str, limit: int = 150) -> dict[str, Any]:
    return {"type": "plain_text", "text": truncate(text, limit)}


def loading_view(lang: Lang) -> dict[str, Any]:
    """What ``views.open`` shows at once (the trigger id is valid for 3 s); ``views.update`` fills it."""
    return {
        "type": "modal",
        "callback_id": DRAFT_CALLBACK,
        "title": _plain(words("title", lang), 24),
        "close": _plain(words("close", lang), 24),
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": escape_mrkdwn(words("loading", lang))}}],
    }


def form_view(lang: Lang, initial: Mapping[str, str], metadata: str) -> dict[str, Any]:
    """The draft form: titles, summaries, runbook steps in both languages, the proposed signatures."""
    blocks: list[dict[str, Any]] = []
    for name in FORM_FIELDS:
        element: dict[str, Any] = {
            "type": "plain_text_input",
            "action_id": name,
            "multiline": name in _MULTILINE,
            "max_length": _MAX_LENGTH.get(name, 3000),
        }
        if initial.get(name):
            element["initial_value"] = truncate(initial[name], _MAX_LENGTH.get(name, 3000))
        block: dict[str, Any] = {
            "type": "input",
            "block_id": name,
            "optional": True,
            "label": _plain(words(name, lang), 150),
            "element": element,
        }
        if name == "signatures":
            block["hint"] = _plain(words("signatures.hint", lang), 2000)
        blocks.append(block)
    notes = []
    if initial.get("suspects"):
        notes.append(words("suspects", lang, s=initial["suspects"]))
    if not initial.get("signatures"):
        notes.append(words("no_lines", lang))
    if notes:
        text = escape_mrkdwn("\n".join(notes))
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": truncate(text, 2000)}]})
    return {
        **loading_view(lang),
        "submit": _plain(words("submit", lang), 24),
        "private_metadata": metadata,
        "blocks": blocks,
    }


def submitted_fields(view: Mapping[str, Any]) -> dict[str, str]:
    """The form's values from a ``view_submission`` (missing or odd entries become "")."""
    state = view.get("state")
    values = state.get("values") if isinstance(state, dict) else None
    fields: dict[str, str] = {}
    for name in FORM_FIELDS:
        block = values.get(name) if isinstance(values, dict) else None
        entry = block.get(name) if isinstance(block, dict) else None
        value = entry.get("value") if isinstance(entry, dict) else None
        fields[name] = value if isinstance(value, str) else ""
    return fields


def error_block(field: str) -> str:
    """The form block an error about ``field`` belongs to (``signatures (line 2)`` is ``signatures``)."""
    name = field.split(" ", 1)[0]
    return name if name in FORM_FIELDS else "title_en"


def saved_text(draft_id: int, user: str, title: str, lang: Lang) -> str:
    """The thread message for a stored draft; the title is escaped (it is user text)."""
    return words("saved", lang, id=draft_id, user=user, title=escape_mrkdwn(truncate(title, 150)))
