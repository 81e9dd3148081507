"""The message shortcut "Match to known incidents": an explicit match of any message, including one in a
thread (where slash commands cannot be used). The answer goes in the message's thread; when the bot is
not in the conversation (``not_in_channel``), only the clicker sees it, through the ``response_url``."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.nodes import Where
from bot.app.services import Services
from bot.ops.settings import Settings
from bot.replies.catalog import both_langs
from bot.replies.render import message_reply
from handlers.common import LocaleCache, busy_reply, matched, send_via_response_url, user_langs
from handlers.messages import paste_from_message, post_reply

SHORTCUT_ID = "match_known_incidents"
# chat.postMessage errors that mean "the bot cannot post here" (a private conversation it is not in
# answers channel_not_found).
_NOT_A_MEMBER = frozenset({"not_in_channel", "channel_not_found"})


def register(app: AsyncApp, services: Services, settings: Settings, locales: LocaleCache) -> None:
    @app.message_shortcut(SHORTCUT_ID)
    async def match_known_incidents(
        ack: AsyncAck, shortcut: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient
    ) -> None:
        await ack()
        message: dict[str, Any] = shortcut.get("message") or {}
        channel = str((shortcut.get("channel") or {}).get("id") or "")
        user_id = str((shortcut.get("user") or {}).get("id") or "")
        langs = await user_langs(services, locales, client, user_id or None)
        paste = await paste_from_message(message, client, settings)
        if paste is None or not paste.data:
            note = (paste.error if paste else None) or both_langs("paste.message_empty")
            await send_via_response_url(services, respond, message_reply(note), channel=channel, user=user_id)
            return
        result = await matched(services, True, services.incident.match, paste.data, slack_encoded=paste.slack_encoded)
        if result is None:
            await send_via_response_url(services, respond, busy_reply(langs), channel=channel, user=user_id)
            return
        ts = str(message.get("ts") or "")
        where = Where(channel, ts)
        render = services.feedback.render_interactive
        reply = await services.pools.io(render, result, langs, explicit=True, where=where)
        try:
            await post_reply(
                services,
                client,
                channel=channel,
                thread_ts=message.get("thread_ts") or ts,
                answered_ts=ts,
                reply=reply,
                source="shortcut",
            )
        except SlackApiError as error:
            if error.response.get("error") not in _NOT_A_MEMBER:
                raise
            private, _ = await services.pools.io(
                services.feedback.private_match_reply, result, langs, user_id or channel, "shortcut"
            )  # the answer above already remembered its hosts
            await send_via_response_url(services, respond, private, channel=channel, user=user_id)
