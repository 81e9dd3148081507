"""Buttons: "Share in channel" on ephemeral ``/incident`` answers posts the same answer for everyone.

The button's value is enough to regenerate the answer: ``t:<command text>`` when the text fits a button
value, else ``r:<reply-log id>`` (the case ids of the answer; the share then shows the best case).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot.models import Lang, Reply
from bot.render import message_reply
from bot.service import IncidentService
from handlers.commands import LocaleCache, user_langs

log = logging.getLogger(__name__)

SHARE_ACTION_ID = "share_in_channel"
_VALUE_LIMIT = 2000  # Block Kit button value
_MAX_BLOCKS = 50
# Verbs whose answers are personal or change settings: never offered for sharing, never re-run by a share.
_PRIVATE_VERBS = frozenset({"help", "-h", "--help", "도움말", "lang", "auto", "digest"})


def shareable(text: str) -> bool:
    """Whether the answer to ``/incident text`` may be shared (not help, settings or a digest preview)."""
    first = text.strip().partition(" ")[0]
    return "\n" in first or first.lower() not in _PRIVATE_VERBS


def share_value(text: str, reply_id: int | None) -> str | None:
    """The button value for an answer: the command text if it fits, else the reply-log id, else None."""
    if len(text) + 2 <= _VALUE_LIMIT:
        return "t:" + text
    return f"r:{reply_id}" if reply_id is not None else None


def with_share_button(reply: Reply, value: str) -> Reply:
    """``reply`` with an actions block holding the Share button, kept within 50 blocks."""
    button: dict[str, Any] = {
        "type": "button",
        "action_id": SHARE_ACTION_ID,
        "text": {"type": "plain_text", "text": "Share in channel"},
        "value": value,
    }
    blocks = [*reply.blocks[: _MAX_BLOCKS - 1], {"type": "actions", "elements": [button]}]
    return reply.model_copy(update={"blocks": blocks})


def regenerate(
    service: IncidentService, value: str, user_id: str, channel_id: str | None, langs: tuple[Lang, Lang]
) -> Reply:
    """The answer a Share button stands for (blocking: storage and possibly matching)."""
    kind, _, rest = value.partition(":")
    if kind == "t" and shareable(rest):
        return service.command(rest, user_id=user_id, channel_id=channel_id, langs=langs)
    if kind == "r" and rest.isdigit():
        record = service.storage.get_reply(int(rest))
        if record is not None and record.case_ids:
            return service.lookup(record.case_ids[0], langs)
    return message_reply("This answer can no longer be shared; run /incident again.")


def register(app: AsyncApp, service: IncidentService, locales: LocaleCache) -> None:
    @app.action(SHARE_ACTION_ID)
    async def share_in_channel(
        ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient
    ) -> None:
        await ack()
        action = (body.get("actions") or [{}])[0]
        user_id = str((body.get("user") or {}).get("id") or "")
        channel_id = (body.get("channel") or {}).get("id")
        langs = await user_langs(service, locales, client, user_id)
        reply = await asyncio.to_thread(regenerate, service, str(action.get("value") or ""), user_id, channel_id, langs)
        await respond(
            text=reply.text,
            blocks=reply.blocks,
            response_type="in_channel",
            replace_original=False,
            unfurl_links=False,
            unfurl_media=False,
        )
        if channel_id:
            # A shared answer is a post in the channel: it counts for the noise window.
            await asyncio.to_thread(service.record_reply, channel_id, "", "", reply, "command")
