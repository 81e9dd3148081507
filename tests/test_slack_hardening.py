"""The Slack surface against hostile and careless input: echoed markup, unauthenticated garbage, request
bodies and tokens in logs, the bot token sent to other hosts, button values replayed elsewhere, and storage
that is misconfigured or down."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from conftest import NOW, postgres_schema
from slack_harness import (
    HarnessSlack,
    SlackHarness,
    harness_settings,
    mention_event,
    message_event,
    new_ts,
    sign,
)

from bot.app.service import IncidentService
from bot.cli.compose import build_services
from bot.library.case_store import CaseLibrary
from bot.ops.clock import fixed
from bot.replies.drafts import ACTION_DRAFT
from bot.slack.runtime import start_slack
from bot.storage import Storage

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "<!channel> <!here> <!everyone> <@U123> <#C999> <!subteam^S123> <https://evil.example|click>"
ECC = "RuntimeError: CUDA error: uncorrectable ECC error encountered"
LIVE = re.compile(r"<[!@#]|<https?://evil")
SENDING = {"chat.postMessage", "chat.postEphemeral", "views.publish", "chat.update"}


@pytest.fixture
async def h(fake: HarnessSlack, storage: Storage, library: CaseLibrary) -> AsyncIterator[SlackHarness]:
    service = IncidentService(library, storage, now=fixed(NOW), deadline_s=20.0)
    async with SlackHarness(fake, service, harness_settings(fake)) as harness:
        yield harness


# -- 1. nothing a user typed renders live -----------------------------------------------------------------


def rendered_texts(node: Any, inside_plain: bool = False) -> Iterator[str]:
    """Every string Slack renders as mrkdwn in an outgoing payload: top-level ``text``, mrkdwn objects,
    section fields. ``plain_text`` objects are shown literally and skipped."""
    if isinstance(node, dict):
        plain = node.get("type") == "plain_text"
        for key, value in node.items():
            if key == "text" and isinstance(value, str) and not (plain or inside_plain):
                yield value
            else:
                yield from rendered_texts(value, plain)
    elif isinstance(node, list):
        for item in node:
            yield from rendered_texts(item, inside_plain)


def live_markup(fake: HarnessSlack) -> list[str]:
    found = []
    for call in fake.calls():
        if call.method in {
            "chat.postMessage",
            "chat.postEphemeral",
            "views.publish",
            "chat.update",
            "views.open",
            "views.update",
        } or call.method.startswith("hooks/"):
            body = {**call.body, "view": call.body.get("view")}
            if isinstance(body["view"], str):
                body["view"] = json.loads(body["view"])
            found += [t for t in rendered_texts(body) if LIVE.search(t)]
    return found


async def test_a_hostile_string_renders_inert_on_every_surface(h: SlackHarness) -> None:
    for text in (
        f"search {HOSTILE}",
        f"similar {HOSTILE}",
        f"lang {HOSTILE}",
        f"auto {HOSTILE}",
        HOSTILE,
        f"IL-0427 {HOSTILE}",
        f"{HOSTILE}\n[rank0]: {ECC} {HOSTILE}",
        "help",
    ):
        _, hook = await h.command(text)
        await h.wait_for(lambda hook=hook: h.hook_calls(hook))
    await h.event(mention_event(f"<@UBOT> search {HOSTILE}"))
    await h.event(mention_event(f"<@UBOT> {HOSTILE}"))
    await h.event(message_event(HOSTILE, channel="D1", channel_type="im"))
    await h.event(message_event(f"[rank0]: {HOSTILE} {ECC} {HOSTILE}", channel="D1", channel_type="im"))
    await h.event(message_event(f"[rank0]: {HOSTILE} {ECC} {HOSTILE}", channel="C1"))
    await h.settle()
    # Buttons: share a hostile search, open other matches and switch the language of the hostile answer.
    [answer] = [c for c in h.fake.calls() if c.method.startswith("hooks/") and "search" in json.dumps(c.body)][:1]
    share = next(e for b in answer.body["blocks"] if b["type"] == "actions" for e in b["elements"])
    await h.click(share["value"])
    posted = [c.body for c in h.posts() if c.body.get("channel") == "C1"][-1]
    for element in next(b for b in posted["blocks"] if b["type"] == "actions")["elements"]:
        await h.click(element["value"], action_id=element["action_id"])
    await h.settle()
    # The shortcut on a hostile message.
    message = {"type": "message", "user": "U2", "ts": new_ts(), "text": f"{HOSTILE} {ECC}"}
    payload = {
        "type": "message_action",
        "callback_id": "match_known_incidents",
        "trigger_id": "1",
        "message_ts": message["ts"],
        "user": {"id": "U1"},
        "channel": {"id": "C1"},
        "message": message,
        "response_url": h.new_response_url(),
        "team": {"id": "T1"},
        "api_app_id": "A1",
        "token": "x",
    }
    await h.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    await h.settle()
    # A case draft of a hostile paste no case explains: the modal's proposed fields stay inert too.
    unknown = f"FATAL: fabricd lost heartbeat of NVSwitch tray 4 on partition 9 {HOSTILE}"
    _, hook = await h.command(unknown)
    await h.wait_for(lambda: h.hook_calls(hook))
    [no_fit] = h.hook_calls(hook)
    draft = next(
        e
        for b in no_fit.body["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == ACTION_DRAFT
    )
    await h.click(draft["value"], action_id=ACTION_DRAFT)
    await h.wait_for(lambda: h.fake.calls("views.update"))
    assert "NVSwitch tray" in json.dumps(h.fake.calls("views.update")[-1].body)  # the paste is in the form
    assert len(h.fake.calls()) >= 20  # every surface answered something
    assert live_markup(h.fake) == []


# -- 2 and 3. unauthenticated garbage, and no bodies or tokens in logs ----------------------------------------


GARBAGE = [
    ('{"type": "event_callback", "event": {', "application/json"),
    ("[1,2,3]", "application/json"),
    ("payload=%7Bnot-json&token=SECRET-TOKEN-VALUE", "application/x-www-form-urlencoded"),
]


async def test_unsigned_garbage_gets_401_one_warning_and_no_body_in_logs(
    h: SlackHarness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    assert h.http is not None
    statuses = []
    for body, kind in GARBAGE:
        statuses.append((await h.post(body, kind, secret="not-the-secret")).status_code)
    for timestamp in ("abc", "1" * 400, "9" * 5000):
        headers = {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": "v0=00",
        }
        statuses.append((await h.http.post("/slack/events", content=b"{}", headers=headers)).status_code)
    assert statuses == [401] * 6
    records = [r for r in caplog.records if r.name.startswith(("bot", "slack", "handlers", "aiohttp.server"))]
    assert all(r.exc_info is None and r.levelno <= logging.WARNING for r in records)
    assert sum(1 for r in records if "request refused" in r.getMessage()) == 6
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "SECRET-TOKEN-VALUE" not in logged and "event_callback" not in logged and "not-json" not in logged
    assert not h.fake.calls("chat.postMessage")


async def test_a_signed_but_malformed_body_gets_400(h: SlackHarness) -> None:
    assert h.http is not None
    for body, kind in GARBAGE:
        response = await h.http.post(
            "/slack/events", content=body.encode(), headers={"Content-Type": kind, **sign(body)}
        )
        assert response.status_code == 400


@pytest.mark.parametrize(
    "event",
    [
        "a string",
        {"type": "message", "channel": 5, "user": ["U1"], "ts": "1.1", "text": "x"},
        {"type": "app_home_opened", "user": 5, "tab": "home"},
        {"no": "type"},
    ],
    ids=["event-not-an-object", "message-fields-not-strings", "home-user-not-a-string", "no-type"],
)
async def test_a_signed_event_of_the_wrong_shape_gets_400_not_500(
    h: SlackHarness, event: object, caplog: pytest.LogCaptureFixture
) -> None:
    assert h.http is not None
    body = json.dumps({"type": "event_callback", "event_id": "Ev1", "team_id": "T1", "event": event})
    response = await h.http.post(
        "/slack/events", content=body.encode(), headers={"Content-Type": "application/json", **sign(body)}
    )
    await h.settle()
    assert response.status_code == 400
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_accepted_requests_log_no_paste_above_debug(h: SlackHarness, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    secret_line = f"{ECC} token=xoxb-should-never-be-logged PASTE-MARKER-42"
    await h.event(message_event(secret_line))
    await h.command(secret_line)
    await h.settle()
    logged = "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)
    assert "PASTE-MARKER-42" not in logged and "xoxb-should" not in logged


# -- 4. the bot token goes to Slack's file hosts only ------------------------------------------------------


class Foreign:
    """Another host: records every request and whether it carried an Authorization header."""

    def __init__(self) -> None:
        self.seen: list[str | None] = []
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                seen.append(self.headers.get("Authorization"))
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(ECC.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def shared_file(file_id: str, url: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": file_id,
        "name": "x.log",
        "mimetype": "text/plain",
        "filetype": "text",
        "size": 100,
        "url_private": url,
        "url_private_download": url,
        **extra,
    }


async def test_the_token_never_goes_to_another_host(h: SlackHarness) -> None:
    foreign = Foreign()
    try:
        h.fake.files["FOK"] = ECC.encode()
        h.fake.redirects["FREDIR"] = f"{foreign.url}/steal"
        files = [
            shared_file("FELSE", f"{foreign.url}/files/FELSE"),  # a URL on another host
            shared_file("FREDIR", f"{h.fake.url}/files/FREDIR"),  # a redirect off Slack's host
            shared_file("FEXT", f"{foreign.url}/drive", is_external=True),  # a Google Drive file
        ]
        await h.event(message_event("", subtype="file_share", files=files, channel="D1", channel_type="im"))
        await h.settle()
        assert foreign.seen == []  # nothing reached the other host, with or without a token
        (post,) = h.posts()
        assert "not on Slack's file servers" in post.body["text"] or "outside Slack" in post.body["text"]
    finally:
        foreign.close()


# -- 5. a button value works only where it was shown --------------------------------------------------------


async def test_share_is_bound_to_the_channel_and_user_it_was_shown_to(h: SlackHarness) -> None:
    _, hook = await h.command(ECC, user_id="U1", channel_id="C1")
    await h.wait_for(lambda: h.hook_calls(hook))
    actions = next(b for b in h.hook_calls(hook)[0].body["blocks"] if b["type"] == "actions")
    value = next(e["value"] for e in actions["elements"] if e["action_id"] == "share_in_channel")
    for user, channel in (("U1", "C2"), ("U2", "C1"), ("U1", "C1")):
        _, url = await h.click(value, user_id=user, channel_id=channel)
        await h.settle()
        [reply] = [c.body for c in h.hook_calls(url)]
        shared = reply.get("response_type") == "in_channel"
        assert shared == ((user, channel) == ("U1", "C1")), (user, channel, reply.get("text"))
    _, url = await h.click("r:1", channel_id="C2")  # an unsealed value from another channel
    await h.settle()
    assert h.hook_calls(url)[0].body.get("response_type") == "ephemeral"


# -- 6. storage that is misconfigured or down ---------------------------------------------------------------


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    keep = {k: v for k, v in os.environ.items() if k in {"PATH", "HOME", "TEST_DATABASE_URL"}}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=ROOT,
        env={**keep, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("command", [["stats"], ["digest", "--dry-run"], ["console"]])
def test_an_unwritable_data_dir_is_one_line_naming_the_setting(tmp_path: Path, command: list[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    done = cli(*command, DATA_DIR=str(blocker / "data"))
    assert done.returncode == 2
    assert "DATA_DIR" in done.stderr and "Traceback" not in done.stderr + done.stdout
    assert len(done.stderr.strip().splitlines()) == 1


def test_show_needs_no_database(tmp_path: Path) -> None:
    done = cli("show", "IL-0427", DATABASE_URL="postgresql://u:pw@127.0.0.1:1/x")
    assert done.returncode == 0 and "IL-0427" in done.stdout


@pytest.mark.postgres
def test_a_missing_or_unreachable_database_is_one_line_without_the_password() -> None:
    base = os.environ["TEST_DATABASE_URL"]  # marked postgres: deselected without it
    missing = base.rsplit("/", 1)[0] + "/no_such_database_for_incident_bot"
    for url, words in ((missing, "does not exist"), ("postgresql://u:hunter2@127.0.0.1:1/x", "cannot reach")):
        done = cli("stats", DATABASE_URL=url)
        assert done.returncode == 2 and words in done.stderr and "DATABASE_URL" in done.stderr
        assert "hunter2" not in done.stderr + done.stdout and "Traceback" not in done.stderr


class _LateProxy:
    """A TCP port that refuses connections until ``open()``, then forwards to PostgreSQL."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = _free_port()
        self.server: asyncio.Server | None = None

    async def open(self) -> None:
        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                writer.close()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
            await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

        self.server = await asyncio.start_server(handle, "127.0.0.1", self.port)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.postgres
async def test_run_waits_for_an_unreachable_database_with_readyz_not_ready(fake: HarnessSlack) -> None:
    with postgres_schema() as url:
        target = httpx.URL(url)
        proxy = _LateProxy(target.host, target.port or 5432)
        late_url = url.replace(f"{target.host}:{target.port}", f"127.0.0.1:{proxy.port}")
        settings = harness_settings(fake, DATABASE_URL=late_url)
        services = build_services(settings, migrate=False)
        server = await start_slack(settings, services)
        try:
            host, port = server.addresses[0]
            async with httpx.AsyncClient(base_url=f"http://{host}:{port}") as client:
                first = await client.get("/readyz")
                assert first.status_code == 503 and "storage not ready" in first.text
                await proxy.open()
                deadline = time.monotonic() + 30
                while (await client.get("/readyz")).status_code != 200:
                    assert time.monotonic() < deadline, "storage never became ready"
                    await asyncio.sleep(0.2)
        finally:
            await server.stop()
            await proxy.close()


def test_the_markup_finder_sees_live_markup_and_skips_plain_text() -> None:
    payload = {
        "text": "ok <!here>",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": "<!channel> shown literally"}},
            {"type": "section", "text": {"type": "mrkdwn", "text": "<https://evil.example|click>"}},
        ],
    }
    assert [t for t in rendered_texts(payload) if LIVE.search(t)] == ["ok <!here>", "<https://evil.example|click>"]
