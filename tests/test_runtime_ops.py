"""Operations in the running bot: metrics for events, Slack errors, digests and reloads; the ids on every
log line; reloads from the interval watcher and after a library sync, one at a time."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import structlog
from conftest import NOW, copy_bundled_cases, make_case
from fake_slack import wait_for
from library_server import LibraryServer, strip_local
from slack_harness import BOT_USER, HarnessSlack, SlackHarness, harness_settings, mention_event, message_event
from test_replicas import metric

from bot.app.reloader import LibraryReloader
from bot.app.service import IncidentService
from bot.app.services import Services
from bot.digest.runner import DigestError, DigestParams, RetryPolicy, digest_client
from bot.library.case_store import load_library
from bot.ops.clock import fixed
from bot.slack.jobs import CountedDigestRunner, LibrarySync
from bot.slack.runtime import start_slack
from bot.storage import Storage

ROOT = Path(__file__).resolve().parent.parent


async def until(predicate: Callable[[], object], within: float) -> None:
    """Poll ``predicate`` with a deadline on a worker thread, so this loop keeps running the bot."""
    await asyncio.to_thread(wait_for, predicate, within)


class _ContextRecorder(logging.Handler):
    """Keeps each record with the structlog context bound where it was logged."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.names: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append((record.getMessage(), structlog.contextvars.get_contextvars()))
        self.names.append(record.name)


@pytest.fixture
def recorder() -> Iterator[_ContextRecorder]:
    handler = _ContextRecorder()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


@pytest.fixture
async def h(fake: HarnessSlack, storage: Storage) -> AsyncIterator[SlackHarness]:
    service = IncidentService(load_library(ROOT / "cases"), storage, now=fixed(NOW), deadline_s=20.0)
    async with SlackHarness(fake, service, harness_settings(fake)) as harness:
        yield harness


async def test_events_and_slack_errors_are_counted_and_logs_carry_the_event_id(
    h: SlackHarness, recorder: _ContextRecorder
) -> None:
    h.fake.queue("chat.postMessage", 200, body={"ok": False, "error": "not_in_channel"})
    event = mention_event(f"<@{BOT_USER}> IL-0427")
    await h.event(event, event_id="EvOPS1")
    await h.event(event, event_id="EvOPS1", retry_num=1)
    await h.event(message_event("lunch?"), event_id="EvOPS2")
    await h.settle()
    text = h.service.metrics.render().decode()
    assert metric(text, "incident_bot_events_total", type="app_mention") == 2  # the retry is counted too
    assert metric(text, "incident_bot_events_total", type="message") == 1
    assert metric(text, "incident_bot_slack_api_errors_total", method="chat.postMessage", error="not_in_channel") == 1
    assert metric(text, "incident_bot_slack_api_errors_total") == 1  # the notice that followed succeeded
    failed = [ctx for msg, ctx in recorder.seen if "not_in_channel" in msg]  # the global error handler
    assert failed and failed[0]["event_id"] == "EvOPS1" and failed[0]["kind"] == "app_mention"
    skipped = [ctx for msg, ctx in recorder.seen if msg.startswith("duplicate delivery skipped")]
    assert skipped and skipped[0]["event_id"] == "EvOPS1" and skipped[0]["retry_num"] == "1"
    served = [ctx for name, (_, ctx) in zip(recorder.names, recorder.seen, strict=True) if name != "httpx"]
    assert served and all(ctx.get("request_id") for ctx in served)  # the bot's lines, not this client's


async def test_commands_are_counted_as_slash_command(h: SlackHarness) -> None:
    await h.command("IL-0427")
    await h.settle()
    text = h.service.metrics.render().decode()
    assert metric(text, "incident_bot_events_total", type="slash_command") == 1
    assert metric(text, "incident_bot_commands_total") == 1


async def test_digest_runs_and_failures_are_counted(fake: HarnessSlack, storage: Storage) -> None:
    service = IncidentService(load_library(ROOT / "cases"), storage, now=fixed(NOW))
    params = DigestParams(timezone="UTC", cron="0 0 * * *", retry=RetryPolicy(attempts=1, base_seconds=0))
    now = NOW
    reviewed = (now - timedelta(days=1)).replace(hour=12, minute=0, second=0, microsecond=0).isoformat()
    runner = CountedDigestRunner(
        storage,
        digest_client("xoxb-test", base_url=fake.base_url),
        "CDIGEST",
        params,
        cases=lambda: [make_case("IL-0001", reviewed)],
        clock=lambda: now,
        metrics=service.metrics,
    )
    fake.queue("chat.postMessage", 200, body={"ok": False, "error": "channel_not_found"})
    with pytest.raises(DigestError):
        await runner.run_due(now)
    text = service.metrics.render().decode()
    assert metric(text, "incident_bot_digest_failures_total") == 1
    assert metric(text, "incident_bot_digest_runs_total", status="failed") == 1


def test_reloads_are_counted_by_outcome(tmp_path: Path) -> None:
    cases = copy_bundled_cases(tmp_path, "IL-0427", "PUB-0003")
    service = IncidentService(load_library(cases), _memory(), now=fixed(NOW))
    reloader = LibraryReloader(service, cases)
    assert reloader.reload("test") is not None
    (cases / "PUB-0003.json").write_text("{", encoding="utf-8")
    outcome = reloader.reload("test")
    assert outcome is not None and outcome.kept_previous == ("PUB-0003",)
    for path in cases.glob("*.json"):
        path.unlink()  # nothing usable at all: the previous library keeps serving
    assert reloader.reload("test") is not None and service.get_case("IL-0427") is not None
    text = service.metrics.render().decode()
    for label in ("ok", "partial", "rejected"):
        assert metric(text, "incident_bot_library_reloads_total", outcome=label) == 1, label


async def test_interval_watcher_reloads_a_changed_directory(tmp_path: Path) -> None:
    cases = copy_bundled_cases(tmp_path, "IL-0427")
    service = IncidentService(load_library(cases), _memory(), now=fixed(NOW))
    reloader = LibraryReloader(service, cases)
    reloader.baseline()
    watcher = asyncio.create_task(reloader.watch(0.02))
    try:
        copy_bundled_cases(tmp_path, "PUB-0003")
        await until(lambda: service.get_case("PUB-0003") is not None, 10)
    finally:
        watcher.cancel()
    assert metric(service.metrics.render().decode(), "incident_bot_library_reloads_total", outcome="ok") == 1


async def test_periodic_sync_reloads_what_it_wrote(fake: HarnessSlack, tmp_path: Path) -> None:
    cases = copy_bundled_cases(tmp_path, "IL-0427")
    service = IncidentService(load_library(cases), _memory(), now=fixed(NOW))
    new = strip_local(json.loads((ROOT / "cases" / "PUB-0003.json").read_text(encoding="utf-8")))
    with LibraryServer() as library:
        library.put(new)
        settings = harness_settings(
            fake,
            CASES_DIR=str(cases),
            DATA_DIR=str(tmp_path / "data"),
            LIBRARY_API_URL=library.base_url,
            LIBRARY_SYNC_MINUTES=60,
        )
        server = await start_slack(settings, Services.around(service))
        try:
            assert server.sync is not None
            await until(lambda: service.get_case("PUB-0003") is not None, 20)  # the start-up sync
        finally:
            await server.stop()
    assert (cases / "PUB-0003.json").exists()
    assert metric(service.metrics.render().decode(), "incident_bot_library_reloads_total", outcome="ok") == 1


async def test_sync_runs_never_overlap(tmp_path: Path) -> None:
    service = IncidentService(load_library(copy_bundled_cases(tmp_path, "IL-0427")), _memory(), now=fixed(NOW))
    settings = harness_settings(_NoSlack(), CASES_DIR=str(tmp_path / "cases"), LIBRARY_API_URL="http://127.0.0.1:9")
    sync = LibrarySync("http://127.0.0.1:9", settings, LibraryReloader(service, tmp_path / "cases"))
    lock = threading.Lock()
    active, most = 0, 0

    def slow_run() -> bool:
        nonlocal active, most
        with lock:
            active += 1
            most = max(most, active)
        time.sleep(0.05)
        with lock:
            active -= 1
        return False

    sync.job.run = slow_run  # type: ignore[method-assign]
    loop = asyncio.create_task(sync.loop(0.001))
    try:
        await until(lambda: sync.runs >= 5, 10)
    finally:
        loop.cancel()
        sync.close()
    assert most == 1


class _NoSlack:
    base_url = "http://127.0.0.1:9/api/"
    url = "http://127.0.0.1:9"


def _memory() -> Storage:
    from bot.storage.memory import MemoryStorage

    return MemoryStorage()


def test_long_log_lines_are_cut_at_info_and_above() -> None:
    from bot.slack.runtime import MAX_LOGGED_CHARS, _CapLongMessages

    paste = "x" * (MAX_LOGGED_CHARS * 3)
    record = logging.LogRecord("slack_bolt", logging.WARNING, __file__, 1, "Unhandled request (%s)", (paste,), None)
    assert _CapLongMessages().filter(record)
    assert len(record.getMessage()) < MAX_LOGGED_CHARS + 50 and record.getMessage().endswith("chars, cut]")
    debug = logging.LogRecord("slack_bolt", logging.DEBUG, __file__, 1, "body: %s", (paste,), None)
    assert _CapLongMessages().filter(debug) and len(debug.getMessage()) > MAX_LOGGED_CHARS
