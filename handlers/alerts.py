"""The Silence button under an alert's message: an operator silences the alert's labels for 4 hours through
Alertmanager's API v2 (``ALERTMANAGER_URL``), and the thread says so. Values are sealed to the channel."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from typing import Any

import httpx
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.services import Services
from bot.replies.blocks import section
from bot.replies.buttons import click_from_body
from bot.replies.mrkdwn import escape_mrkdwn
from handlers.common import say_privately
from handlers.drain import who_can
from handlers.reviewers import Reviewers

log = logging.getLogger(__name__)
ACTION_SILENCE = "silence_alert"
SILENCE_HOURS = 4


def silence_body(matchers: dict[str, str], user: str, now: datetime) -> dict[str, Any]:
    """Alertmanager API v2's ``PostableSilence`` for exact matches on ``matchers``."""
    return {
        "matchers": [{"name": k, "value": v, "isRegex": False, "isEqual": True} for k, v in sorted(matchers.items())],
        "startsAt": now.isoformat().replace("+00:00", "Z"),
        "endsAt": (now + timedelta(hours=SILENCE_HOURS)).isoformat().replace("+00:00", "Z"),
        "createdBy": f"incident-bot for {user}",
        "comment": f"silenced from Slack by {user} for {SILENCE_HOURS} h",
    }


def register(app: AsyncApp, services: Services, operator_ids: list[str], alertmanager_url: str | None) -> None:
    operators = Reviewers(operator_ids)

    async def tell(respond: AsyncRespond, channel: str, user: str, said: str) -> None:
        await say_privately(services, respond, said, channel=channel, user=user)

    @app.action(ACTION_SILENCE)
    async def silence(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient) -> None:
        await ack()
        click = click_from_body(body)
        user = click.user_id
        value = services.feedback.unseal(click.value, click.channel_id, click.user_id) if click.value else None
        try:
            matchers = json.loads(value) if value else None
        except ValueError:
            matchers = None
        if not isinstance(matchers, dict) or not matchers or not alertmanager_url:
            await tell(respond, click.channel_id, click.user_id, "This button is not valid here.")
            return
        if not await operators.allows(client, click.user_id):
            await tell(
                respond, click.channel_id, click.user_id, f"Only operators can silence alerts: {who_can(operators)}."
            )
            return
        now = services.incident.now()
        try:
            async with httpx.AsyncClient(timeout=10.0) as http:
                answer = await http.post(
                    f"{alertmanager_url.rstrip('/')}/api/v2/silences", json=silence_body(matchers, click.user_id, now)
                )
            silence_id = str(answer.json().get("silenceID") or "") if answer.status_code == 200 else ""
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("silence: Alertmanager not reached: %s", type(exc).__name__)
            silence_id = ""
        if not silence_id:
            await tell(
                respond, click.channel_id, click.user_id, "Alertmanager did not take the silence; nothing changed."
            )
            return
        shown = ", ".join(f"{k}={v}" for k, v in sorted(matchers.items()))
        said = (
            f"Silenced for {SILENCE_HOURS} h by <@{user}>: {escape_mrkdwn(shown)} (silence {escape_mrkdwn(silence_id)})"
        )
        thread = click.message_ts
        try:
            await client.chat_postMessage(channel=click.channel_id, thread_ts=thread, text=said, blocks=[section(said)])
        except SlackApiError as exc:
            log.warning("silence: the thread's note was not posted: %s", exc.response.get("error"))
