"""Replies built from other replies: a note added under one, and the answer to an id the library does not
have. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from bot.model.case import Case, Lang
from bot.model.results import Reply
from bot.replies.catalog import text
from bot.replies.mrkdwn import escape_mrkdwn, truncate
from bot.replies.render import case_list_reply, message_reply


def with_note(reply: Reply, note: str) -> Reply:
    """``reply`` with ``note`` as a context block at the end (escaped)."""
    block = {"type": "context", "elements": [{"type": "mrkdwn", "text": truncate(escape_mrkdwn(note), 2000)}]}
    return reply.model_copy(update={"blocks": [*reply.blocks, block][:50], "plain": f"{reply.plain}\n\n{note}"})


def unknown_id_reply(raw: str, suggestions: Sequence[Case], langs: Sequence[Lang]) -> Reply:
    lang = langs[0]
    said = " ".join(text("unknown.intro", lg, raw=repr(raw)) for lg in langs)
    if not suggestions:
        return message_reply(said)
    closest = text("unknown.closest", lang)
    return case_list_reply(suggestions, f"{said} {closest}:", langs, "")
