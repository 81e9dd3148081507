"""Socket Mode end to end: the real runtime connects to a loopback WebSocket that plays Slack's Socket
Mode server, acknowledges envelopes over the socket, and answers through the fake Web API."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import WSMsgType, web
from slack_harness import HarnessSlack, harness_settings, message_event

from bot.app.services import Services
from bot.cli.main import build_service
from bot.slack.runtime import start_slack

APP_TOKEN = "xapp-1-A1-1-" + "0" * 16
ECC = "[default3]:RuntimeError: CUDA error: uncorrectable ECC error encountered"


class SocketModeServer:
    """Sends a hello, then whatever envelopes a test pushes; records every frame the app sends back."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.connected = asyncio.Event()
        self._outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/link", self._socket)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"ws://127.0.0.1:{port}/link"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def push(self, envelope: dict[str, Any]) -> None:
        await self._outbox.put(envelope)

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"}})
        self.connected.set()

        async def sender() -> None:
            while True:
                await socket.send_json(await self._outbox.get())

        task = asyncio.create_task(sender())
        try:
            async for frame in socket:
                if frame.type == WSMsgType.TEXT:
                    self.received.append(json.loads(frame.data))
        finally:
            task.cancel()
        return socket


async def _until(predicate: Any, within: float = 15.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


@pytest.fixture
async def socket_bot(tmp_path: Any) -> AsyncIterator[tuple[SocketModeServer, HarnessSlack]]:
    ws = SocketModeServer()
    await ws.start()
    with HarnessSlack() as fake:
        fake.queue("apps.connections.open", status=200, body={"ok": True, "url": ws.url}, times=50)
        settings = harness_settings(
            fake, SLACK_APP_TOKEN=APP_TOKEN, DATA_DIR=str(tmp_path / "data"), SLACK_SIGNING_SECRET=None
        )
        service = build_service(settings)
        server = await start_slack(settings, Services.around(service))
        try:
            await asyncio.wait_for(ws.connected.wait(), timeout=15)
            yield ws, fake
        finally:
            await server.stop()
            await ws.stop()


def _acked(ws: SocketModeServer, envelope_id: str) -> bool:
    return any(frame.get("envelope_id") == envelope_id for frame in ws.received)


async def test_a_pasted_error_over_the_socket_is_acked_and_answered_in_the_thread(
    socket_bot: tuple[SocketModeServer, HarnessSlack],
) -> None:
    ws, fake = socket_bot
    event = message_event(ECC)
    envelope_id = str(uuid.uuid4())
    await ws.push(
        {
            "envelope_id": envelope_id,
            "type": "events_api",
            "accepts_response_payload": False,
            "payload": {
                "type": "event_callback",
                "team_id": "T1",
                "api_app_id": "A1",
                "event": event,
                "event_id": f"Ev{uuid.uuid4().hex[:10]}",
                "event_time": int(time.time()),
            },
        }
    )
    await _until(lambda: _acked(ws, envelope_id))
    await _until(lambda: len(fake.calls("chat.postMessage")) == 1)
    post = fake.calls("chat.postMessage")[0].body
    assert post["channel"] == "C1"
    assert str(post["thread_ts"]).startswith(event["ts"].split(".")[0])
    assert "IL-04" in json.dumps(post["blocks"])  # IL-0427 / IL-0414: the ECC cases


async def test_a_slash_command_over_the_socket_is_answered_through_its_response_url(
    socket_bot: tuple[SocketModeServer, HarnessSlack],
) -> None:
    ws, fake = socket_bot
    hook = f"{fake.url}/hooks/{uuid.uuid4().hex}"
    envelope_id = str(uuid.uuid4())
    await ws.push(
        {
            "envelope_id": envelope_id,
            "type": "slash_commands",
            "accepts_response_payload": True,
            "payload": {
                "command": "/incident",
                "text": "IL-0427",
                "user_id": "U1",
                "channel_id": "C1",
                "team_id": "T1",
                "api_app_id": "A1",
                "response_url": hook,
                "trigger_id": "1.2.3",
            },
        }
    )
    await _until(lambda: _acked(ws, envelope_id))
    path = hook.removeprefix(fake.url + "/")
    await _until(lambda: len(fake.calls(path)) == 1)
    answer = fake.calls(path)[0].body
    assert answer["response_type"] == "ephemeral"
    assert "IL-0427" in json.dumps(answer["blocks"])
