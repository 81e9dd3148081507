""" "Share in channel" on ephemeral ``/incident`` answers: the button and what its click regenerates.

The value is enough to regenerate the answer: ``t:<command text>`` when the text fits a button value, else
``r:<reply-log id>`` (the case ids of the answer; the share then shows the best case).
"""

from __future__ import annotations

from bot.app.services import Services
from bot.model.case import Lang
from bot.model.results import Button, Reply
from bot.replies.buttons import with_buttons
from bot.replies.catalog import both_langs, text
from bot.replies.seal import SEAL_CHARS

SHARE_ACTION_ID = "share_in_channel"
VALUE_LIMIT = 2000  # Block Kit button value
# Verbs whose answers are personal or change settings: never offered for sharing, never re-run by a share.
_PRIVATE_VERBS = frozenset({"help", "-h", "--help", "도움말", "lang", "auto", "digest"})


def shareable(text: str) -> bool:
    """Whether the answer to ``/incident text`` may be shared (not help, settings or a digest preview)."""
    first = text.strip().partition(" ")[0]
    return "\n" in first or first.lower() not in _PRIVATE_VERBS


def share_value(text: str, reply_id: int | None) -> str | None:
    """The button value for an answer: the command text if it fits, else the reply-log id, else None."""
    if len(text) + 2 + SEAL_CHARS <= VALUE_LIMIT:
        return "t:" + text
    return f"r:{reply_id}" if reply_id is not None else None


def with_share_button(reply: Reply, value: str, lang: Lang = "en") -> Reply:
    """``reply`` with the Share button (in ``lang``) first in its actions block, kept within 50 blocks."""
    share = Button(action_id=SHARE_ACTION_ID, text=text("share.button", lang), value=value)
    return with_buttons(reply, [share], first=True)


SHARE_REFUSED = both_langs("share.refused")


def regenerate(
    services: Services, value: str, user_id: str, channel_id: str | None, langs: tuple[Lang, ...]
) -> tuple[Reply, int | None] | None:
    """The answer a Share button stands for, and its reply-log id when a match answer was logged here;
    None when the button was not shown to this user in this channel, or its answer is gone (blocking:
    storage and possibly matching)."""
    opened = services.feedback.unseal(value, channel_id or "", user_id)
    if opened is None:
        return None
    kind, _, rest = opened.partition(":")
    if kind == "t" and shareable(rest):
        # A shared match answer gets its buttons; it is posted through the response_url, so the bot never
        # learns its ts: logged first, under the channel, and the buttons carry the id.
        return services.feedback.answer(rest, user_id=user_id, channel_id=channel_id, langs=langs, log_as=channel_id)
    if kind == "r" and rest.isdigit():
        record = services.incident.storage.get_reply(int(rest))
        if record is not None and record.case_ids:
            return services.incident.lookup(record.case_ids[0], langs), None
    return None
