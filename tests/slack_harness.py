"""End-to-end harness: the real Bolt app in HTTP mode on 127.0.0.1 (port 0) in the test's event loop,
its Web API pointed at the fake Slack, and helpers that send Slack-signed requests shaped like Slack's.

``settle()`` waits for the listener tasks that Bolt started after acknowledging (events run after the
ack with ``process_before_response=False``, as in production), so "no reply" is asserted only once
every listener has finished, with no fixed sleeps.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import httpx
from conftest import make_settings
from fake_slack import Call, FakeSlack
from slack_sdk.signature import SignatureVerifier

from bot.app.service import IncidentService
from bot.app.services import Services
from bot.app.workers import WorkerPools
from bot.ops.settings import Settings
from bot.slack.app import create_app
from bot.slack.runtime import SlackServer, start_slack

SECRET = "test-signing-secret"
BOT_TOKEN = "xoxb-test-token"
BOT_USER = "UBOT"  # what the fake's auth.test answers
_TS = itertools.count(1)
_BASE = int(time.time()) - 1000


def event_envelope(event: dict[str, Any], event_id: str) -> dict[str, Any]:
    """An ``event_callback`` envelope shaped like Slack's, for ``event`` with ``event_id``."""
    return {
        "token": "legacy-verification-token",
        "team_id": "T1",
        "api_app_id": "A1",
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [{"enterprise_id": None, "team_id": "T1", "user_id": BOT_USER, "is_bot": True}],
        "is_ext_shared_channel": False,
    }


class HarnessSlack(FakeSlack):
    """The fake Web API plus ``conversations.replies`` (a thread's messages from the stored ones)."""

    def _api(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "conversations.replies":
            thread = str(args.get("ts"))
            found = [
                m for m in self.posted(str(args.get("channel"))) if m["ts"] == thread or m.get("thread_ts") == thread
            ]
            limit = int(args.get("limit") or 100)
            return {"ok": True, "messages": found[:limit], "has_more": len(found) > limit}
        return super()._api(method, args)


def harness_settings(fake: FakeSlack, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake.base_url,
        "SLACK_FILE_HOSTS": fake.url,  # the fake serves the files, as files.slack.com does
        "HOST": "127.0.0.1",
        "PORT": 0,
    }
    values.update(extra)
    return make_settings(values)


def new_ts() -> str:
    return f"{_BASE + next(_TS)}.000100"


def message_event(text: str, *, channel: str = "C1", user: str = "U1", **extra: Any) -> dict[str, Any]:
    ts = extra.pop("ts", None) or new_ts()
    event: dict[str, Any] = {
        "type": "message",
        "channel": channel,
        "user": user,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "team": "T1",
        "channel_type": "channel",
        "client_msg_id": str(uuid.uuid4()),
    }
    event.update(extra)
    return event


def mention_event(text: str, *, channel: str = "C1", user: str = "U1", **extra: Any) -> dict[str, Any]:
    event = message_event(text, channel=channel, user=user, **extra)
    event["type"] = "app_mention"
    event.pop("channel_type", None)
    return event


def sign(body: str, timestamp: int | None = None, secret: str = SECRET) -> dict[str, str]:
    ts = str(timestamp if timestamp is not None else int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature}


class SlackHarness:
    """Start with ``async with SlackHarness(fake, service, settings) as h``."""

    def __init__(
        self,
        fake: FakeSlack,
        service: IncidentService,
        settings: Settings,
        pools: WorkerPools | None = None,
        *,
        auth_wait: float = 5.0,
    ) -> None:
        self.auth_wait = auth_wait
        self.fake = fake
        self.service = service
        self.services = Services.around(service, pools)
        self.settings = settings
        self._tasks: set[asyncio.Task[Any]] = set()
        self._server: SlackServer | None = None
        self.http: httpx.AsyncClient | None = None
        self.url = ""

    async def __aenter__(self) -> SlackHarness:
        app = create_app(self.settings, self.services, process_before_response=False)
        original = app.async_dispatch

        async def dispatch(request: Any) -> Any:
            # Remember the listener tasks Bolt starts after its ack, for settle().
            before = asyncio.all_tasks()
            response = await original(request)
            for task in asyncio.all_tasks() - before:
                if "run_ack_function" in getattr(task.get_coro(), "__qualname__", ""):
                    self._tasks.add(task)
            return response

        app.async_dispatch = dispatch  # type: ignore[method-assign]
        self.app = app
        # The runtime's own server (HTTP mode on HOST:PORT = 127.0.0.1:0), in this test's event loop.
        self._server = await start_slack(self.settings, self.services, bolt=app, auth_wait=self.auth_wait)
        # The bot signed in (auth.test) before its port opened; tests count the calls requests make.
        if not self.fake.held("auth.test"):
            assert self.fake.calls()[-1].method == "auth.test", self.fake.calls()
            self.fake.clear_calls()
        host, port = self._server.addresses[0]
        self.url = f"http://{host}:{port}"
        self.http = httpx.AsyncClient(base_url=self.url, timeout=30)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.settle()
        if self.http is not None:
            await self.http.aclose()
        if self._server is not None:
            await self._server.stop()

    # waiting ---------------------------------------------------------------------------------------
    async def settle(self, within: float = 30.0) -> None:
        """Wait until every listener started so far has finished (raises on timeout)."""
        deadline = time.monotonic() + within
        while pending := [t for t in self._tasks if not t.done()]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{len(pending)} listener(s) still running after {within}s")
            await asyncio.wait(pending, timeout=left)

    async def wait_for(self, predicate: Callable[[], object], within: float = 10.0) -> None:
        """The fake's ``wait_for`` on a worker thread, so the app keeps running in this loop."""
        await asyncio.to_thread(self.fake.wait_for, predicate, within)

    # sending ---------------------------------------------------------------------------------------
    async def post(
        self,
        body: str,
        content_type: str,
        *,
        headers: dict[str, str] | None = None,
        timestamp: int | None = None,
        secret: str = SECRET,
    ) -> httpx.Response:
        assert self.http is not None
        sent = {"Content-Type": content_type, **sign(body, timestamp, secret), **(headers or {})}
        return await self.http.post("/slack/events", content=body.encode(), headers=sent)

    def new_response_url(self) -> str:
        return f"{self.fake.url}/hooks/{uuid.uuid4().hex}"

    async def command(
        self, text: str, *, user_id: str = "U1", channel_id: str = "C1", response_url: str | None = None
    ) -> tuple[httpx.Response, str]:
        """Send ``/incident text`` form-encoded; returns the HTTP response and the response_url used."""
        url = response_url or self.new_response_url()
        form = {
            "token": "legacy-verification-token",
            "team_id": "T1",
            "team_domain": "example",
            "channel_id": channel_id,
            "channel_name": "gpu-incidents",
            "user_id": user_id,
            "user_name": "someone",
            "command": "/incident",
            "text": text,
            "api_app_id": "A1",
            "is_enterprise_install": "false",
            "response_url": url,
            "trigger_id": "1.2.3",
        }
        response = await self.post(urlencode(form), "application/x-www-form-urlencoded")
        return response, url

    async def event(
        self,
        event: dict[str, Any],
        *,
        event_id: str | None = None,
        retry_num: int | None = None,
        retry_reason: str | None = None,
    ) -> httpx.Response:
        envelope = event_envelope(event, event_id or f"Ev{uuid.uuid4().hex[:10].upper()}")
        headers: dict[str, str] = {}
        if retry_num is not None:
            headers["X-Slack-Retry-Num"] = str(retry_num)
            headers["X-Slack-Retry-Reason"] = retry_reason or "http_timeout"
        return await self.post(json.dumps(envelope), "application/json", headers=headers)

    async def click(
        self, value: str, *, user_id: str = "U1", channel_id: str = "C1", action_id: str = "share_in_channel"
    ) -> tuple[httpx.Response, str]:
        """A ``block_actions`` click on an ephemeral message's button; returns the response_url used."""
        url = self.new_response_url()
        payload = {
            "type": "block_actions",
            "user": {"id": user_id, "username": "someone", "team_id": "T1"},
            "api_app_id": "A1",
            "token": "legacy-verification-token",
            "container": {"type": "message", "message_ts": new_ts(), "channel_id": channel_id, "is_ephemeral": True},
            "trigger_id": "1.2.3",
            "team": {"id": "T1", "domain": "example"},
            "channel": {"id": channel_id, "name": "gpu-incidents"},
            "response_url": url,
            "actions": [
                {
                    "action_id": action_id,
                    "block_id": "b1",
                    "text": {"type": "plain_text", "text": "Share in channel"},
                    "value": value,
                    "type": "button",
                    "action_ts": str(time.time()),
                }
            ],
        }
        body = urlencode({"payload": json.dumps(payload)})
        return await self.post(body, "application/x-www-form-urlencoded"), url

    # reading ---------------------------------------------------------------------------------------
    def hook_calls(self, url: str) -> list[Call]:
        """What the app posted to a response_url."""
        return self.fake.calls(url.removeprefix(self.fake.url + "/"))

    def posts(self) -> list[Call]:
        return [c for c in self.fake.calls("chat.postMessage")]
