"""``POST /alertmanager``: Alertmanager's webhook (payload version 4) on the bot's HTTP listener.

Authenticated by a bearer token (``ALERTMANAGER_TOKEN``, as Alertmanager sends it from
``http_config.authorization.credentials_file``) or basic auth (``ALERTMANAGER_USER`` /
``ALERTMANAGER_PASSWORD``); anything else 401, a body over ``MAX_ALERT_BYTES`` 413, a body that is not a
version 4 notification 400. It answers 200 only after the notification is stored, so Alertmanager's retry
on a 5xx never loses one; the stored notifications are then posted (``AlertPoster``), also those a crash
left unposted.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import logging
from datetime import datetime
from typing import Any

from aiohttp import web
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.alerts import (
    SHOWN,
    SUMMARY_AFTER,
    AlertDesk,
    AlertPlan,
    NotificationError,
    read_notification,
    resolved_block,
)
from bot.app.nodes import Where
from bot.app.services import Services
from bot.model.nodestate import AlertPost
from bot.model.results import Reply
from bot.slack.guard import read_body
from bot.storage.base import StorageError
from handlers.nodeline import follow

log = logging.getLogger(__name__)
ALERT_PATH = "/alertmanager"
MAX_ALERT_BYTES = 2 << 20  # the listener's own cap (aiohttp answers 413 past it too)


def authorized(header: str, token: str | None, user: str | None, password: str | None) -> bool:
    """Constant-time check of an ``Authorization`` header against the configured bearer token or basic auth."""
    scheme, _, value = header.partition(" ")
    if token and scheme.lower() == "bearer":
        return hmac.compare_digest(value.strip().encode(), token.encode())
    if user and password and scheme.lower() == "basic":
        expected = base64.b64encode(f"{user}:{password}".encode()).decode()
        return hmac.compare_digest(value.strip().encode(), expected.encode())
    return False


class AlertPoster:
    """Posts stored notifications, one at a time (a lock: two notifications of one group never race)."""

    def __init__(self, services: Services, desk: AlertDesk, client: AsyncWebClient, *, silence: bool = False) -> None:
        self.services = services
        self.desk = desk
        self.client = client
        self.silence = silence  # a Silence button under each message (ALERTMANAGER_URL set)
        self._lock = asyncio.Lock()

    async def drain(self) -> None:
        async with self._lock:
            pending = await self.services.pools.io(self.services.incident.storage.pending_alert_notifications)
            for notification_id, body in pending:
                try:
                    await self._one(json.loads(body))
                except Exception:  # one bad notification must not hold the others back
                    log.warning("alert notification %d not posted", notification_id, exc_info=True)
                await self.services.pools.io(self.services.incident.storage.finish_alert_notification, notification_id)

    async def _one(self, data: Any) -> None:
        notification = read_notification(data)
        plans = await self.services.pools.match(self.desk.plans, notification)
        storage = self.services.incident.storage
        firing = [p for p in plans if p.firing]
        shown = plans
        if len(firing) > SUMMARY_AFTER:
            shown = [p for p in plans if not p.firing] + firing[:SHOWN]
            await self._summary(notification.group_key, firing, notification.truncated)
        for plan in shown:
            channel = self.desk.channel_for(plan.alerts)
            post = await self.services.pools.io(storage.get_alert_post, notification.group_key, plan.node)
            await self._plan(notification.group_key, plan, channel, post)

    async def _summary(self, group_key: str, firing: list[AlertPlan], truncated: int) -> None:
        storage = self.services.incident.storage
        channel = self.desk.channel_for(firing[0].alerts)
        claim = AlertPost(group_key, "*", channel, "claimed", "", self.services.incident.now())
        if await self.services.pools.io(storage.claim_alert_post, claim) is None:
            return
        nodes = ", ".join(p.node or "?" for p in firing[:20])
        more = f" and {len(firing) - 20} more" if len(firing) > 20 else ""
        left = f"; Alertmanager left out {truncated} more alerts" if truncated else ""
        name = firing[0].alerts[0].name
        said = f"{sum(len(p.alerts) for p in firing)} alerts {name} on {len(firing)} nodes: {nodes}{more}{left}. "
        said += f"The first {SHOWN} follow as their own messages."
        await self._post(channel, None, said, None)

    async def _post(self, channel: str, thread: str | None, text: str, blocks: list[Any] | None) -> str:
        try:
            response = await self.client.chat_postMessage(
                channel=channel, thread_ts=thread, text=text[:3000], blocks=blocks, unfurl_links=False
            )
            return str(response.get("ts") or "")
        except SlackApiError as exc:
            log.warning("alert: chat.postMessage failed: %s", exc.response.get("error"))
            return ""

    def _with_silence(self, plan: AlertPlan) -> Reply:
        """The plan's reply with a "Silence 4 h" button for the first alert's name and host labels."""
        if not self.silence or not plan.alerts:
            return plan.reply
        first = plan.alerts[0]
        keys = [k for k in ("alertname", "Hostname", "hostname", "instance", "gpu") if k in first.labels]
        value = json.dumps({k: first.labels[k] for k in keys}, separators=(",", ":"), sort_keys=True)
        button = {
            "type": "button",
            "text": {"type": "plain_text", "text": "Silence 4 h"},
            "action_id": "silence_alert",
            "value": value,
        }
        return plan.reply.model_copy(update={"blocks": [*plan.reply.blocks, {"type": "actions", "elements": [button]}]})

    async def _plan(self, group_key: str, plan: AlertPlan, channel: str, post: AlertPost | None) -> None:
        storage, now = self.services.incident.storage, self.services.incident.now()
        if not plan.firing:
            if post is not None and post.status == "firing" and post.ts:
                kept = self.services.feedback.seal(self._with_silence(plan), post.channel, None)
                blocks = [*kept.blocks, resolved_block(f"{now:%H:%M} UTC")]
                try:
                    await self.client.chat_update(channel=post.channel, ts=post.ts, text=plan.reply.text, blocks=blocks)
                except SlackApiError as exc:
                    log.warning("alert: chat.update failed: %s", exc.response.get("error"))
                await self.services.pools.io(storage.update_alert_post, post.id or 0, status="resolved", updated_at=now)
            return
        if post is None:
            claim = AlertPost(group_key, plan.node, channel, "claimed", plan.fingerprints, now)
            mine = await self.services.pools.io(storage.claim_alert_post, claim)
            if mine is not None and mine.id is not None:
                reply = self._with_silence(plan)
                sealed = self.services.feedback.seal(reply, channel, None)
                ts = await self._post(channel, None, sealed.text, sealed.blocks)
                follow(self.services, self.client, channel, ts, sealed)  # the node's scheduler state, if any
                case_id = plan.result.best.case_id if plan.result.best and plan.result.reply else ""
                await self.services.pools.io(
                    storage.update_alert_post, mine.id, ts=ts, status="firing", case_id=case_id, updated_at=now
                )
                if case_id and plan.node:  # node memory counts a group once: when its message is posted
                    await self.services.pools.io(self.services.incident.nodes.remember, plan.result, Where(channel, ts))
                return
            post = await self.services.pools.io(storage.get_alert_post, group_key, plan.node)
            if post is None:
                return
        if post.fingerprints == plan.fingerprints and post.status == "firing":
            return  # a re-send (repeat_interval) or another replica's copy: posted once
        new = [a for a in plan.alerts if a.status == "firing" and a.fingerprint not in post.fingerprints.split(",")]
        again = post.status == "resolved"
        if post.ts and (new or again):
            names = ", ".join(sorted({a.name for a in new})) or plan.alerts[0].name
            said = f"Firing again: {names}" if again and not new else f"{len(new)} more alert(s) in this group: {names}"
            await self._post(post.channel, post.ts, said, None)
        await self.services.pools.io(
            storage.update_alert_post, post.id or 0, fingerprints=plan.fingerprints, status="firing", updated_at=now
        )


_in_flight: set[asyncio.Task[None]] = set()


def alert_tasks() -> list[asyncio.Task[None]]:
    """Posting work started by notifications and not finished: shutdown waits for it (bounded)."""
    return [task for task in _in_flight if not task.done()]


def add_alert_route(
    web_app: web.Application,
    services: Services,
    poster: AlertPoster,
    *,
    token: str | None,
    user: str | None,
    password: str | None,
    now: Any,
) -> None:
    async def receive(request: web.Request) -> web.Response:
        if not authorized(request.headers.get("Authorization", ""), token, user, password):
            return web.json_response({"error": "unauthorized"}, status=401)
        if (request.content_length or 0) > MAX_ALERT_BYTES:
            return web.json_response({"error": "body too large"}, status=413)
        body = await read_body(request)
        if body is None:
            return web.json_response({"error": "body not received in time"}, status=408)
        if len(body) > MAX_ALERT_BYTES:
            return web.json_response({"error": "body too large"}, status=413)
        try:
            notification = read_notification(json.loads(body))
        except (ValueError, NotificationError):
            log.warning("alertmanager: a body that is not a version 4 notification (%d bytes)", len(body))
            return web.json_response({"error": "not an Alertmanager webhook notification (version 4)"}, status=400)
        moment: datetime = now()
        try:
            await services.pools.io(
                services.incident.storage.add_alert_notification,
                moment,
                notification.group_key,
                notification.status,
                body.decode("utf-8", "replace"),
            )
        except StorageError as exc:
            log.warning("alertmanager: notification not stored (%s); Alertmanager will retry", exc)
            return web.json_response({"error": "not stored, retry"}, status=503)
        task = asyncio.get_running_loop().create_task(poster.drain())
        _in_flight.add(task)
        task.add_done_callback(_in_flight.discard)
        return web.json_response({"status": "stored"})

    web_app.router.add_post(ALERT_PATH, receive)
