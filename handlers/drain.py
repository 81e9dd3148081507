"""The Drain, Approve and Resume buttons and their forms (``bot.app.drains`` decides; this only carries).

Every value is sealed to the channel it was posted in (a form's metadata also to the user who opened it),
so a forged or moved value is refused. Only ``OPERATORS`` may confirm; others are told who can."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.drains import Drains, Outcome, drain_reason
from bot.app.services import Services
from bot.replies.buttons import click_from_body
from bot.replies.drain import (
    ACTION_APPROVE,
    ACTION_DRAIN,
    ACTION_RESUME,
    DRAIN_VIEW,
    RESUME_VIEW,
    SLACK_ID,
    approve_button,
    drain_view,
    meta,
    record_blocks,
    resume_button,
    resume_view,
)
from bot.replies.mrkdwn import escape_mrkdwn
from bot.replies.seal import SEPARATOR
from handlers.common import as_dict, say_privately
from handlers.reviewers import Reviewers

log = logging.getLogger(__name__)


def _thread_of(body: dict[str, Any]) -> str:
    """The thread a clicked message is in ("" for a message that is not in one)."""
    container = as_dict(body.get("container"))
    return str(container.get("thread_ts") or as_dict(body.get("message")).get("thread_ts") or "")


def who_can(operators: Reviewers) -> str:
    """The operators as mentions (ids from OPERATORS, checked to be Slack ids; nothing else is markup)."""
    users = [f"<@{u}>" for u in sorted(operators.users) if SLACK_ID.match(u)]
    groups = [f"<!subteam^{g}>" for g in sorted(operators.groups) if SLACK_ID.match(g)]
    return ", ".join(users + groups) or "nobody (OPERATORS is empty)"


def _when(moment: datetime) -> str:
    return f"{moment:%H:%M} UTC"


def register(app: AsyncApp, services: Services, operator_ids: Iterable[str]) -> None:
    operators = Reviewers(operator_ids)
    feedback = services.feedback

    def desk() -> Drains | None:
        return services.incident.drains

    async def refuse(respond: AsyncRespond, channel: str, user: str, said: str) -> None:
        await say_privately(services, respond, said, channel=channel, user=user)

    async def record(client: AsyncWebClient, channel: str, thread: str, said: str, buttons: list[Any]) -> None:
        try:
            await client.chat_postMessage(
                channel=channel, thread_ts=thread or None, text=said, blocks=record_blocks(said, buttons)
            )
        except SlackApiError as exc:
            log.warning("drain: the thread's record was not posted: %s", exc.response.get("error"))

    async def told(client: AsyncWebClient, out: Outcome, user: str, node: str, channel: str, thread: str) -> None:
        drains = desk()
        now = services.incident.now()
        if out.status == "done" and drains is not None:
            ran = f"`{escape_mrkdwn(out.command)}` ({escape_mrkdwn(out.message)})"
            said = f"Drained {node} by <@{user}> at {_when(now)}: {ran}"
            value = feedback.seal_value(node, channel, None)
            await record(client, channel, thread, said, [resume_button(node, value)])
        elif out.status == "pending" and out.action_id is not None:
            value = feedback.seal_value(f"{out.action_id}|{node}", channel, None)
            said = f"<@{user}> asks to drain {node}: {escape_mrkdwn(out.message)}"
            await record(client, channel, thread, said, [approve_button(node, value)])
        elif out.status == "dry-run":
            await record(client, channel, thread, f"Dry run (DRY_RUN_ACTIONS): {escape_mrkdwn(out.message)}", [])
        else:
            await record(client, channel, thread, f"Drain of {node} {out.status}: {escape_mrkdwn(out.message)}", [])

    @app.action(ACTION_DRAIN)
    async def drain_clicked(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient) -> None:
        await ack()
        click = click_from_body(body)
        value = feedback.unseal(click.value, click.channel_id, click.user_id) if click.value else None
        drains = desk()
        if value is None or drains is None or value.count("|") != 2:
            await refuse(respond, click.channel_id, click.user_id, "This button is not valid here.")
            return
        if not await operators.allows(client, click.user_id):
            await refuse(
                respond, click.channel_id, click.user_id, f"Only operators can drain nodes: {who_can(operators)}."
            )
            return
        node, case_id, thread = value.split("|")
        case = services.incident.library.cases.get(case_id)
        gist = (case.gist.en if case and case.gist else None) or case_id
        link = ""
        try:
            found = await client.chat_getPermalink(channel=click.channel_id, message_ts=thread or click.message_ts)
            link = str(found.get("permalink") or "")
        except SlackApiError as exc:
            log.warning("drain: chat.getPermalink failed: %s", exc.response.get("error"))
        reason = drain_reason(case_id, gist.split(";")[0][:80], link)
        over = await services.pools.io(drains.drains_last_hour) >= drains.policy.limit_per_hour
        limited = (
            f"More than {drains.policy.limit_per_hour} drains in the last hour: a second operator will have to approve."
            if over
            else ""
        )
        sealed = feedback.seal_value(
            meta(channel=click.channel_id, thread=thread, node=node, reply=click.message_ts),
            click.channel_id,
            click.user_id,
        )
        view = drain_view(node, reason, drains.control.command(node, "drain", reason), sealed, limited)
        try:
            await client.views_open(trigger_id=str(body.get("trigger_id") or ""), view=view)
        except SlackApiError as exc:
            log.warning("drain: views.open failed: %s", exc.response.get("error"))

    def _opened(view: dict[str, Any], user: str) -> dict[str, str] | None:
        raw = str(view.get("private_metadata") or "")
        text, separator, _ = raw.rpartition(SEPARATOR)
        try:
            data = json.loads(text) if separator else None
        except ValueError:
            data = None
        if not isinstance(data, dict) or feedback.unseal(raw, str(data.get("channel", "")), user) is None:
            return None
        return {k: str(v) for k, v in data.items()}

    def _field(view: dict[str, Any], block: str, action: str) -> Any:
        return as_dict(as_dict(as_dict(as_dict(view.get("state")).get("values")).get(block)).get(action))

    @app.view(DRAIN_VIEW)
    async def drain_submitted(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        user = str(as_dict(body.get("user")).get("id") or "")
        view = as_dict(body.get("view"))
        opened = _opened(view, user)
        drains = desk()
        if opened is None or drains is None:
            await ack(response_action="errors", errors={"reason": "This form is not valid here."})
            return
        if not await operators.allows(client, user):
            await ack(response_action="errors", errors={"reason": f"Only operators can drain: {who_can(operators)}."})
            return
        await ack()
        reason = str(_field(view, "reason", "reason").get("value") or "")
        node, channel, thread = opened["node"], opened["channel"], opened["thread"]
        out = await services.pools.io(drains.request, user, node, reason, channel, thread)
        if out.status == "refused":
            try:
                await client.chat_postEphemeral(
                    channel=channel, user=user, text=f"Not drained: {escape_mrkdwn(out.message)}"
                )
            except SlackApiError as exc:
                log.warning("drain: refusal not posted: %s", exc.response.get("error"))
            return
        await told(client, out, user, node, channel, thread)

    @app.action(ACTION_APPROVE)
    async def approve_clicked(
        ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient
    ) -> None:
        await ack()
        click = click_from_body(body)
        value = feedback.unseal(click.value, click.channel_id, click.user_id) if click.value else None
        drains = desk()
        if value is None or drains is None or "|" not in value or not value.split("|")[0].isdigit():
            await refuse(respond, click.channel_id, click.user_id, "This button is not valid here.")
            return
        if not await operators.allows(client, click.user_id):
            await refuse(respond, click.channel_id, click.user_id, f"Only operators can approve: {who_can(operators)}.")
            return
        action_id, node = int(value.split("|")[0]), value.split("|", 1)[1]
        out = await services.pools.io(drains.approve, action_id, click.user_id)
        if out.status == "refused":
            await refuse(respond, click.channel_id, click.user_id, f"Not approved: {escape_mrkdwn(out.message)}")
            return
        thread = _thread_of(body)
        await told(client, out, click.user_id, node, click.channel_id, thread)

    @app.action(ACTION_RESUME)
    async def resume_clicked(
        ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient
    ) -> None:
        await ack()
        click = click_from_body(body)
        node = feedback.unseal(click.value, click.channel_id, click.user_id) if click.value else None
        drains = desk()
        if node is None or drains is None:
            await refuse(respond, click.channel_id, click.user_id, "This button is not valid here.")
            return
        if not await operators.allows(client, click.user_id):
            await refuse(respond, click.channel_id, click.user_id, f"Only operators can resume: {who_can(operators)}.")
            return
        state, problem = await services.pools.io(drains.state_of, node)
        if state is None:
            await refuse(respond, click.channel_id, click.user_id, f"Not resumed: {escape_mrkdwn(problem or '')}")
            return
        ours = await services.pools.io(drains.made_by_bot, node, state)
        thread = _thread_of(body)
        sealed = feedback.seal_value(
            meta(channel=click.channel_id, thread=thread, node=node), click.channel_id, click.user_id
        )
        try:
            await client.views_open(
                trigger_id=str(body.get("trigger_id") or ""),
                view=resume_view(node, drains.control.command(node, "resume"), sealed, ours),
            )
        except SlackApiError as exc:
            log.warning("resume: views.open failed: %s", exc.response.get("error"))

    @app.view(RESUME_VIEW)
    async def resume_submitted(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        user = str(as_dict(body.get("user")).get("id") or "")
        view = as_dict(body.get("view"))
        opened = _opened(view, user)
        drains = desk()
        if opened is None or drains is None or not await operators.allows(client, user):
            await ack(response_action="errors", errors={"note": "Only operators can resume, from a valid form."})
            return
        note = str(_field(view, "note", "note").get("value") or "")
        chosen = _field(view, "override", "override").get("selected_options") or []
        override = any(as_dict(option).get("value") == "yes" for option in chosen)
        node, channel, thread = opened["node"], opened["channel"], opened["thread"]
        out = await services.pools.io(drains.resume, user, node, channel, thread, override=override, note=note)
        if out.status == "refused":
            await ack(response_action="errors", errors={"note": out.message[:150]})
            return
        await ack()
        now = services.incident.now()
        ran = f"`{escape_mrkdwn(out.command)}` ({escape_mrkdwn(out.message)})"
        said = f"Resumed {node} by <@{user}> at {_when(now)}: {ran}"
        if note.strip():
            said += f" — note: {escape_mrkdwn(note.strip())}"
        await record(
            client,
            channel,
            thread,
            said if out.status == "done" else f"Resume of {node} {out.status}: {escape_mrkdwn(out.message)}",
            [],
        )
