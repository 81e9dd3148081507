"""``/incident``: acknowledge at once, answer through the services off the event loop, ephemerally."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.nodes import Where
from bot.app.routing import route_command
from bot.app.services import Services
from handlers.common import LocaleCache, busy_reply, matched, send_via_response_url, user_langs
from handlers.reviewers import Reviewers
from handlers.share import share_value, shareable, with_share_button


def register(app: AsyncApp, services: Services, locales: LocaleCache) -> None:
    reviewers = Reviewers(services.incident.examples.reviewers)

    @app.command("/incident")
    async def incident_command(
        ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient
    ) -> None:
        await ack()  # first, always: Slack shows an error after 3 s
        text = str(command.get("text") or "")
        user_id = str(command.get("user_id") or "") or None
        channel_id = command.get("channel_id")
        langs = await user_langs(services, locales, client, user_id)
        verb, rest = route_command(text.strip())
        reviewer = verb in {"review", "forget"} and await reviewers.allows(client, user_id)
        # Matching is CPU-bound: a worker thread keeps the loop free to ack other requests. A match answer
        # is logged under the user (shown only to them) and its buttons carry the reply id.
        got = await matched(
            services,
            True,
            services.feedback.answer,
            text,
            user_id=user_id,
            channel_id=channel_id,
            langs=langs,
            log_as=user_id,
            share=shareable(text),
            reviewer=reviewer,
            where=Where(str(channel_id or ""), ""),
        )
        if got is None:
            await send_via_response_url(services, respond, busy_reply(langs), channel=channel_id, user=user_id)
            return
        reply, reply_id = got
        if shareable(text):
            if reply_id is None and share_value(text, None) is None and user_id:
                # Too long for a button value: keep the answer's case ids in the reply log. The
                # answer was shown only to the asker, so it is logged under the user, not the
                # channel, and does not count for the channel's noise window.
                reply_id = await services.pools.io(services.incident.record_reply, user_id, "", "", reply, "command")
            value = share_value(text, reply_id)
            if value is not None:
                reply = with_share_button(reply, value, langs[0])
        # Turning automatic replies on or off is told to the whole channel: who did it, and how to undo it.
        announce = verb == "auto" and rest.strip().lower() in {"on", "off"} and bool(channel_id)
        await send_via_response_url(services, respond, reply, channel=channel_id, user=user_id, in_channel=announce)
