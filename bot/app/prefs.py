"""Preferences: a user's language order and a channel's automatic replies (``/incident lang``, ``auto``)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence

from bot.model.case import Lang
from bot.model.results import Reply
from bot.replies.labels import lang_name
from bot.replies.render import say
from bot.storage.base import LangPref, Storage

log = logging.getLogger("incident_bot.prefs")


def langs_for(pref: LangPref | None, locale: str | None) -> tuple[Lang, ...]:
    """The languages an answer shows, in order: a saved ``en`` or ``ko`` shows that one only (the other is
    the language button away); ``both`` or no preference shows both, the Slack locale's first, else English."""
    if pref == "ko":
        return ("ko",)
    if pref == "en":
        return ("en",)
    if locale and locale.lower().startswith("ko"):
        return ("ko", "en")
    return ("en", "ko")


def lang_reply(storage: Storage, user_id: str | None, value: str, langs: Sequence[Lang]) -> Reply:
    """``/incident lang en|ko|both``: saved for the user, confirmed in the new order."""
    if value not in {"en", "ko", "both"}:
        return say("lang.usage", langs)
    if not user_id:
        return say("lang.no_user", langs)
    storage.set_user_lang(user_id, value)  # type: ignore[arg-type]  # checked just above
    if value == "both":
        return say("lang.saved_both", langs)
    chosen = langs_for(value, None)  # type: ignore[arg-type]  # en or ko
    return say("lang.saved", chosen, value=lang_name(chosen[0], chosen[0]))


_USER_ID = re.compile(r"^[UW][A-Z0-9]{2,20}$")


def auto_reply(
    storage: Storage, channel_id: str | None, value: str, langs: Sequence[Lang], user_id: str | None = None
) -> Reply:
    """``/incident auto on|off``: automatic replies to pasted errors in this channel. The confirmation names
    who changed it and how to change it back: the Slack handler posts it for the whole channel."""
    if value not in {"on", "off"}:
        return say("auto.usage", langs)
    if not channel_id:
        return say("auto.no_channel", langs)
    storage.set_channel_auto(channel_id, value == "on")
    log.info("automatic replies %s in %s by %s", value, channel_id, user_id or "unknown")
    if not user_id or not _USER_ID.match(user_id):
        return say("auto.saved", langs, value=value)
    back = "on" if value == "off" else "off"
    reply = say("auto.saved.by", langs, user=_MARK, value=value, back=back)
    # A mention, not text: the user id is checked above, and everything else stays escaped.
    mention = f"<@{user_id}>"
    blocks = json.loads(json.dumps(reply.blocks, ensure_ascii=False).replace(_MARK, mention))
    return reply.model_copy(
        update={
            "blocks": blocks,
            "text": reply.text.replace(_MARK, mention),
            "plain": reply.plain.replace(_MARK, user_id),
        }
    )


_MARK = "\u2063USER\u2063"  # an invisible separator around a word no message contains
