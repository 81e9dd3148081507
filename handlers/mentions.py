"""``app_mention``: an explicit request. The mention's own message is read with its files (a log shared
together with the mention is matched). In a thread reply, what the mention says is matched together with
the thread's first message; otherwise its text minus the mention is handled like ``/incident``."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.nodes import Where
from bot.app.services import Services
from bot.model.case import Lang
from bot.model.excerpt import Excerpt
from bot.model.results import Reply
from bot.ops.settings import Settings
from bot.replies.catalog import both_langs
from bot.replies.mrkdwn import unescape_mrkdwn
from bot.replies.render import message_reply
from handlers.common import LocaleCache, busy_reply, matched, user_langs
from handlers.messages import Paste, paste_from_message, post_reply

_MENTION = re.compile(r"<@[UW][A-Z0-9]+(?:\|[^>]*)?>")


def strip_mentions(text: str) -> str:
    """The text of a mention without the ``<@U…>`` user mentions in it."""
    return _MENTION.sub(" ", text).strip()


def _with_own_text(parent: Paste, own: str) -> Paste:
    """The thread's first message followed by what the mention itself says (the error may be in either)."""
    if not own:
        return parent
    if isinstance(parent.data, Excerpt):
        extra = unescape_mrkdwn(own).encode("utf-8", "replace")
        data = parent.data
        if data.skipped_bytes:
            return Paste(replace(data, tail=data.tail + b"\n" + extra), slack_encoded=False, error=parent.error)
        return Paste(replace(data, head=data.head + b"\n" + extra), slack_encoded=False, error=parent.error)
    return Paste(f"{parent.data}\n{own}".strip(), slack_encoded=True, error=parent.error)


def register(app: AsyncApp, services: Services, settings: Settings, locales: LocaleCache) -> None:
    @app.event("app_mention")
    async def on_mention(event: dict[str, Any], client: AsyncWebClient) -> None:
        channel = str(event["channel"])
        user_id = str(event.get("user") or "") or None
        thread_ts = event.get("thread_ts")
        langs = await user_langs(services, locales, client, user_id)
        own = await paste_from_message(event, client, settings)  # its text and any file shared with it
        own_text = strip_mentions(own.data) if own is not None and isinstance(own.data, str) else ""
        if own is not None and isinstance(own.data, Excerpt):
            reply = await _match(own, langs, Where(channel, str(event["ts"])))
        elif thread_ts and thread_ts != event.get("ts") and services.feedback.is_paste(own_text or "x\ny"):
            reply = await _match_thread(client, channel, str(thread_ts), own_text, langs)
        else:
            got = await matched(
                services,
                True,
                services.feedback.answer,
                own_text or "help",
                user_id=user_id,
                channel_id=channel,
                langs=langs,
                where=Where(channel, str(thread_ts or event["ts"])),
            )
            reply = got[0] if got is not None else busy_reply(langs)
            if own is not None and own.error and reply.tier is None and services.feedback.is_paste(own_text):
                reply = message_reply(own.error)
        await post_reply(
            services,
            client,
            channel=channel,
            thread_ts=thread_ts or event["ts"],
            answered_ts=str(thread_ts or event["ts"]),
            reply=reply,
            source="mention",
        )

    async def _match_thread(
        client: AsyncWebClient, channel: str, thread_ts: str, own_text: str, langs: tuple[Lang, ...]
    ) -> Reply:
        response = await client.conversations_replies(channel=channel, ts=thread_ts, limit=1)
        messages: list[dict[str, Any]] = response.get("messages") or []
        parent = await paste_from_message(messages[0], client, settings) if messages else None
        if parent is None and not own_text:
            return message_reply(both_langs("paste.thread_unreadable"))
        paste = _with_own_text(parent or Paste("", slack_encoded=True), own_text)
        if not paste.data:
            return message_reply(paste.error or both_langs("paste.thread_empty"))
        return await _match(paste, langs, Where(channel, thread_ts))

    async def _match(paste: Paste, langs: tuple[Lang, ...], where: Where) -> Reply:
        result = await matched(services, True, services.incident.match, paste.data, slack_encoded=paste.slack_encoded)
        if result is None:
            return busy_reply(langs)
        render = services.feedback.render_interactive
        return await services.pools.io(render, result, langs, explicit=True, where=where)
