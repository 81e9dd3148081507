"""Buttons on answers.

"Share in channel" (``handlers.share``) posts an ephemeral ``/incident`` answer for everyone.

On every match reply (values built and parsed in ``bot.replies.buttons``; the service checks them):
"Details" shows the whole case to the clicker; "Helpful" / "Not this case" store a vote (and confirm or
withdraw an example, ``bot.app.examples``) and tell the clicker; "It was …" in Other matches confirms a
runner-up; "Save as an example" keeps a DM's lines when asked; "Other matches" shows the runner-ups to
the clicker; the language switch replaces an ephemeral answer in place and gives the clicker an ephemeral
copy of a posted one (editing a shared message would change it for everyone).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.services import Services
from bot.model.results import Reply, Vote
from bot.replies.buttons import (
    ACTION_DETAILS,
    ACTION_KEEP,
    ACTION_LANG,
    ACTION_OTHERS,
    PICK_ACTIONS,
    VOTE_ACTIONS,
    Click,
    click_from_body,
)
from bot.replies.render import message_reply
from handlers.common import LocaleCache, busy_reply, matched, send_via_response_url, user_langs
from handlers.share import SHARE_ACTION_ID, SHARE_REFUSED, regenerate, with_share_button


def register(app: AsyncApp, services: Services, locales: LocaleCache) -> None:
    @app.action(SHARE_ACTION_ID)
    async def share_in_channel(
        ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient
    ) -> None:
        await ack()
        action = (body.get("actions") or [{}])[0]
        user_id = str((body.get("user") or {}).get("id") or "")
        channel_id = (body.get("channel") or {}).get("id")
        langs = await user_langs(services, locales, client, user_id)
        value = str(action.get("value") or "")

        def share() -> tuple[tuple[Reply, int | None] | None]:  # a 1-tuple: None inside means "refused"
            return (regenerate(services, value, user_id, channel_id, langs),)

        got = await matched(services, True, share)
        if got is None or got[0] is None:  # busy, or not this user's answer in this channel: tell only them
            refusal = busy_reply(langs) if got is None else message_reply(SHARE_REFUSED)
            await send_via_response_url(services, respond, refusal, channel=channel_id, user=user_id)
            return
        reply, reply_id = got[0]
        await send_via_response_url(services, respond, reply, channel=channel_id, user=user_id, in_channel=True)
        if channel_id and reply_id is None:
            # A shared answer is a post in the channel: it counts for the noise window.
            await services.pools.io(services.incident.record_reply, channel_id, "", "", reply, "command")

    def vote_listener(vote: Vote) -> Callable[..., Awaitable[None]]:
        async def on_vote(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
            await ack()
            click = click_from_body(body)
            reply = await services.pools.io(services.feedback.record_vote, click, vote)
            await send_via_response_url(services, respond, reply, channel=click.channel_id, user=click.user_id)

        return on_vote

    for action_id, vote in VOTE_ACTIONS.items():
        app.action(action_id)(vote_listener(vote))

    def private_answer(use_case: Callable[[Click], Reply]) -> Callable[..., Awaitable[None]]:
        """A click answered to the clicker only, by ``use_case`` (run off the event loop)."""

        async def on_click(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
            await ack()
            click = click_from_body(body)
            reply = await services.pools.io(use_case, click)
            await send_via_response_url(services, respond, reply, channel=click.channel_id, user=click.user_id)

        return on_click

    feedback = services.feedback
    actions: list[tuple[str | re.Pattern[str], Callable[[Click], Reply]]] = [
        (ACTION_OTHERS, feedback.other_matches),  # the runner-ups
        (PICK_ACTIONS, feedback.pick),  # "It was …" (pick_case:0, :1, …): confirms a runner-up
        (ACTION_KEEP, feedback.keep),  # "Save as an example" (DMs)
        (ACTION_DETAILS, feedback.details),  # the whole case
    ]
    for constraint, use_case in actions:
        app.action(constraint)(private_answer(use_case))

    @app.action(ACTION_LANG)
    async def switch_language(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()
        click = click_from_body(body)
        answer = await services.pools.io(services.feedback.switch_language, click)
        reply = answer.reply
        if answer.ok and click.ephemeral and answer.share and answer.reply_id is not None:
            reply = with_share_button(reply, f"r:{answer.reply_id}")
        # Only an ephemeral answer (the clicker's own) is replaced; a posted one stays as everyone sees it.
        await send_via_response_url(
            services,
            respond,
            reply,
            channel=click.channel_id,
            user=click.user_id,
            replace=answer.ok and click.ephemeral,
        )
