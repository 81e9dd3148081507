"""Buttons on answers.

"Share in channel" on ephemeral ``/incident`` answers posts the same answer for everyone. Its value is
enough to regenerate the answer: ``t:<command text>`` when the text fits a button value, else
``r:<reply-log id>`` (the case ids of the answer; the share then shows the best case).

On every match reply (values built and parsed in ``bot.replies.buttons``; the service checks them):
"Helpful" / "Not this case" store a vote and tell the clicker; "Other matches" shows the runner-ups to
the clicker; the language switch replaces an ephemeral answer in place and gives the clicker an
ephemeral copy of a posted one (editing a shared message would change it for everyone).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.service import IncidentService
from bot.model.case import Lang
from bot.model.results import Button, Reply
from bot.replies.buttons import ACTION_LANG, ACTION_OTHERS, VOTE_ACTIONS, click_from_body, with_buttons
from bot.replies.render import message_reply
from bot.storage.base import Vote
from handlers.commands import LocaleCache, user_langs
from handlers.replies import send_via_response_url

log = logging.getLogger(__name__)

SHARE_ACTION_ID = "share_in_channel"
_VALUE_LIMIT = 2000  # Block Kit button value
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
    """``reply`` with the Share button first in its actions block, kept within 50 blocks."""
    share = Button(action_id=SHARE_ACTION_ID, text="Share in channel", value=value)
    return with_buttons(reply, [share], first=True)


def regenerate(
    service: IncidentService, value: str, user_id: str, channel_id: str | None, langs: tuple[Lang, Lang]
) -> tuple[Reply, int | None]:
    """The answer a Share button stands for, and its reply-log id when a match answer was logged here
    (blocking: storage and possibly matching)."""
    kind, _, rest = value.partition(":")
    if kind == "t" and shareable(rest):
        # A shared match answer gets its buttons; it is posted through the response_url, so the bot never
        # learns its ts: logged first, under the channel, and the buttons carry the id.
        return service.answer(rest, user_id=user_id, channel_id=channel_id, langs=langs, log_as=channel_id)
    if kind == "r" and rest.isdigit():
        record = service.storage.get_reply(int(rest))
        if record is not None and record.case_ids:
            return service.lookup(record.case_ids[0], langs), None
    return message_reply("This answer can no longer be shared; run /incident again."), None


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
        value = str(action.get("value") or "")
        reply, reply_id = await asyncio.to_thread(regenerate, service, value, user_id, channel_id, langs)
        await send_via_response_url(respond, reply, in_channel=True)
        if channel_id and reply_id is None:
            # A shared answer is a post in the channel: it counts for the noise window.
            await asyncio.to_thread(service.record_reply, channel_id, "", "", reply, "command")

    def vote_listener(vote: Vote) -> Callable[..., Awaitable[None]]:
        async def on_vote(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
            await ack()
            reply = await asyncio.to_thread(service.record_vote, click_from_body(body), vote)
            await send_via_response_url(respond, reply)

        return on_vote

    for action_id, vote in VOTE_ACTIONS.items():
        app.action(action_id)(vote_listener(vote))

    @app.action(ACTION_OTHERS)
    async def other_matches(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()
        reply = await asyncio.to_thread(service.other_matches, click_from_body(body))
        await send_via_response_url(respond, reply)

    @app.action(ACTION_LANG)
    async def switch_language(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()
        click = click_from_body(body)
        answer = await asyncio.to_thread(service.switch_language, click)
        reply = answer.reply
        if answer.ok and click.ephemeral and answer.share and answer.reply_id is not None:
            reply = with_share_button(reply, f"r:{answer.reply_id}")
        # Only an ephemeral answer (the clicker's own) is replaced; a posted one stays as everyone sees it.
        await send_via_response_url(respond, reply, replace=answer.ok and click.ephemeral)
