"""Preferences: a user's language order and a channel's automatic replies (``/incident lang``, ``auto``)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.model.case import Lang
from bot.model.results import Reply
from bot.replies.labels import LANG_NAMES
from bot.replies.render import say
from bot.storage.base import LangPref, Storage


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
    return say("lang.saved", chosen, value=LANG_NAMES[chosen[0]][chosen[0]])


def auto_reply(storage: Storage, channel_id: str | None, value: str, langs: Sequence[Lang]) -> Reply:
    """``/incident auto on|off``: automatic replies to pasted errors in this channel."""
    if value not in {"on", "off"}:
        return say("auto.usage", langs)
    if not channel_id:
        return say("auto.no_channel", langs)
    storage.set_channel_auto(channel_id, value == "on")
    return say("auto.saved", langs, value=value)
