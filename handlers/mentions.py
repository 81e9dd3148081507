"""``app_mention``: an explicit request. In a thread, the thread's parent message (the pasted log) is
matched; at the top level, the mention's own text minus the mention is handled like ``/incident``."""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.services import Services
from bot.model.case import Lang
from bot.model.results import Reply
from bot.ops.settings import Settings
from bot.replies.render import message_reply
from handlers.common import LocaleCache, busy_reply, matched, user_langs
from handlers.messages import Paste, paste_from_message, post_reply

_MENTION = re.compile(r"<@[UW][A-Z0-9]+(?:\|[^>]*)?>")


def strip_mentions(text: str) -> str:
    """The text of a mention without the ``<@U…>`` user mentions in it."""
    return _MENTION.sub(" ", text).strip()


def register(app: AsyncApp, services: Services, settings: Settings, locales: LocaleCache) -> None:
    @app.event("app_mention")
    async def on_mention(event: dict[str, Any], client: AsyncWebClient) -> None:
        channel = str(event["channel"])
        user_id = str(event.get("user") or "") or None
        thread_ts = event.get("thread_ts")
        langs = await user_langs(services, locales, client, user_id)
        if thread_ts and thread_ts != event.get("ts"):
            reply = await _match_parent(client, channel, str(thread_ts), langs)
        else:
            text = strip_mentions(str(event.get("text") or "")) or "help"
            got = await matched(
                services, True, services.feedback.answer, text, user_id=user_id, channel_id=channel, langs=langs
            )
            reply = got[0] if got is not None else busy_reply(langs)
        await post_reply(
            services,
            client,
            channel=channel,
            thread_ts=thread_ts or event["ts"],
            answered_ts=str(thread_ts or event["ts"]),
            reply=reply,
            source="mention",
        )

    async def _match_parent(client: AsyncWebClient, channel: str, thread_ts: str, langs: tuple[Lang, Lang]) -> Reply:
        response = await client.conversations_replies(channel=channel, ts=thread_ts, limit=1)
        messages: list[dict[str, Any]] = response.get("messages") or []
        parent = messages[0] if messages else None
        paste: Paste | None = await paste_from_message(parent, client, settings) if parent else None
        if paste is None:
            return message_reply("I could not read the first message of this thread.")
        if not paste.data:
            return message_reply(paste.error or "The first message of this thread has nothing to match.")
        result = await matched(services, True, services.incident.match, paste.data, slack_encoded=paste.slack_encoded)
        if result is None:
            return busy_reply(langs)
        return services.feedback.render_interactive(result, langs, explicit=True)
