""" "Start a case draft": open the modal at once with the click's trigger id (valid for 3 s), fill it with
``views.update``; on submission, check and store the draft and answer where the paste was.

The use cases are in ``bot.app.draft_flow``; this module moves payloads and calls the Web API.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.draft_flow import DraftFlow
from bot.app.services import Services
from bot.replies.buttons import click_from_body
from bot.replies.clicks import invalid_reply
from bot.replies.drafts import ACTION_DRAFT, DRAFT_CALLBACK, loading_view
from handlers.common import as_dict, send_via_response_url

log = logging.getLogger("incident_bot.drafts")


def register(app: AsyncApp, services: Services) -> None:
    flow = DraftFlow(services.feedback)

    @app.action(ACTION_DRAFT)
    async def start_draft(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient) -> None:
        await ack()
        click = click_from_body(body)
        start = flow.start(click)
        trigger = body.get("trigger_id")
        if start is None or not isinstance(trigger, str) or not trigger:
            refusal = invalid_reply()
            await send_via_response_url(services, respond, refusal, channel=click.channel_id, user=click.user_id)
            return
        try:
            opened = await client.views_open(trigger_id=trigger, view=loading_view(start.lang))
        except SlackApiError as exc:
            log.warning("views.open failed: %s", exc.response.get("error"))
            return
        view_id = str((opened.get("view") or {}).get("id") or "")
        container = as_dict(body.get("container"))
        message = as_dict(body.get("message"))
        thread = str(container.get("thread_ts") or message.get("thread_ts") or "")
        # The paste's own message: the thread parent the answer replied under (a private answer outside a
        # thread has no message to link).
        source = thread or ("" if click.ephemeral else click.message_ts)
        permalink = ""
        if click.channel_id and source:
            try:
                found = await client.chat_getPermalink(channel=click.channel_id, message_ts=source)
                permalink = str(found.get("permalink") or "")
            except SlackApiError as exc:
                log.warning("chat.getPermalink failed: %s", exc.response.get("error"))
        form = await services.pools.io(flow.form, start, click, thread, permalink)
        try:
            await client.views_update(view_id=view_id, view=form)
        except SlackApiError as exc:
            log.warning("views.update failed: %s", exc.response.get("error"))

    @app.view(DRAFT_CALLBACK)
    async def submit_draft(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        user = str((body.get("user") or {}).get("id") or "")
        view = as_dict(body.get("view"))
        outcome = await services.pools.io(flow.submit, view, user)
        if outcome.errors:
            await ack(response_action="errors", errors=outcome.errors)
            return
        await ack()
        opened = outcome.opened
        if opened is None or not opened.channel:
            return
        try:
            if opened.thread:
                await client.chat_postMessage(channel=opened.channel, thread_ts=opened.thread, text=outcome.message)
            else:
                await client.chat_postEphemeral(channel=opened.channel, user=user, text=outcome.message)
        except SlackApiError as exc:
            log.warning("the draft's confirmation was not posted: %s", exc.response.get("error"))
