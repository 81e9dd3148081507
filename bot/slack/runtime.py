"""Running the Slack bot: HTTP mode (``/slack/events`` with signature checks) or Socket Mode (when
``SLACK_APP_TOKEN`` is set), ``/healthz``, ``/readyz`` and ``/metrics`` on ``PORT`` in both, the digest
scheduler when ``DIGEST_CHANNEL`` is set, library reloads (SIGHUP, ``CASES_RELOAD_SECONDS``, after a
``LIBRARY_SYNC_MINUTES`` sync), and a graceful stop on SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import signal
import sys
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import structlog
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.socket_mode.request import SocketModeRequest

from bot.app.reloader import ReloadOutcome, fingerprint, reload_library
from bot.app.service import IncidentService
from bot.cli.sync_cmd import STATE_FILE
from bot.digest.runner import DigestOutcome, DigestParams, DigestRunner, digest_client
from bot.digest.scheduler import DigestSchedule
from bot.library.client import LibraryClient
from bot.library.sync import SyncJob, SyncReport
from bot.ops.logs import configure_logging
from bot.ops.metrics import CONTENT_TYPE, Metrics
from bot.ops.settings import Settings
from bot.slack.app import build_client, create_app

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
# Slack's payloads are small (a message is at most 40,000 characters); aiohttp's default cap is 1 MiB.
MAX_REQUEST_BYTES = 2 << 20
SHUTDOWN_GRACE_SECONDS = 10.0
MAX_LOGGED_CHARS = 2000  # an INFO+ log line longer than this is cut: never a whole paste in the logs
_T = TypeVar("_T")


def build_web_app(bolt: AsyncApp | None, service: IncidentService, metrics: Metrics | None = None) -> web.Application:
    """The aiohttp app: ``POST /slack/events`` into Bolt (omitted when ``bolt`` is None, i.e. Socket
    Mode), ``GET /healthz`` (the process is up), ``GET /readyz`` (library loaded, storage answers) and
    ``GET /metrics`` (Prometheus text format)."""
    web_app = web.Application(client_max_size=MAX_REQUEST_BYTES, middlewares=[_request_id_middleware])
    registry = metrics or service.metrics

    async def metrics_page(_: web.Request) -> web.Response:
        response = web.Response(body=registry.render())
        response.headers["Content-Type"] = CONTENT_TYPE
        return response

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def readyz(_: web.Request) -> web.Response:
        storage_ok = await asyncio.to_thread(service.storage.ping)
        if len(service.library) > 0 and storage_ok:
            return web.Response(text="ready")
        problem = "storage unreachable" if not storage_ok else "case library is empty"
        return web.Response(status=503, text=problem)

    web_app.router.add_get("/healthz", healthz)
    web_app.router.add_get("/readyz", readyz)
    web_app.router.add_get("/metrics", metrics_page)
    if bolt is not None:
        app = bolt

        async def slack_events(request: web.Request) -> web.Response:
            bolt_request = await to_bolt_request(request)
            bolt_response = await app.async_dispatch(bolt_request)
            return await to_aiohttp_response(bolt_response)

        web_app.router.add_post(EVENTS_PATH, slack_events)
    return web_app


@web.middleware
async def _request_id_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Every log line of an HTTP request carries ``request_id`` (a proxy's ``X-Request-Id``, else a new
    one); Bolt's middleware adds the ``event_id`` or ``trigger_id``. Bound on the connection's task and
    replaced by the next request on it, so aiohttp's access log line carries it too."""
    structlog.contextvars.clear_contextvars()
    incoming = request.headers.get("X-Request-Id", "")
    rid = incoming[:64] if incoming.isprintable() and incoming else uuid.uuid4().hex[:16]
    structlog.contextvars.bind_contextvars(request_id=rid)
    return await handler(request)


async def _bind_envelope(_client: object, request: SocketModeRequest) -> None:
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(envelope_id=request.envelope_id)


class CountedDigestRunner(DigestRunner):
    """The digest runner with each run counted: ``digest_runs`` by outcome (``failed`` when it raised)
    and ``digest_failures``; its log lines carry ``job=digest``."""

    def __init__(self, *args: Any, metrics: Metrics, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.metrics = metrics

    async def run_due(self, now: datetime) -> DigestOutcome:
        with structlog.contextvars.bound_contextvars(job="digest"):
            try:
                outcome = await super().run_due(now)
            except Exception:
                self.metrics.digest_runs.labels(status="failed").inc()
                self.metrics.digest_failures.inc()
                raise
            self.metrics.digest_runs.labels(status=outcome.status).inc()
            return outcome


def build_digest_schedule(settings: Settings, service: IncidentService) -> DigestSchedule | None:
    """The weekly digest job when ``DIGEST_CHANNEL`` is set (its own client: no blind retries)."""
    if not settings.digest_channel or settings.slack_bot_token is None:
        return None
    runner = CountedDigestRunner(
        service.storage,
        digest_client(settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url),
        settings.digest_channel,
        DigestParams.from_settings(settings),
        cases=lambda: list(service.library),
        clock=service.now,
        metrics=service.metrics,
    )
    return DigestSchedule(runner, clock=service.now)


# -- library reloads and sync ---------------------------------------------------------------------------


def reload_label(outcome: ReloadOutcome) -> str:
    """The ``library_reloads`` outcome label: ``ok``; ``partial`` (some files broken, their previous
    cases kept); ``rejected`` (nothing usable, the previous library kept serving)."""
    if not outcome.changed:
        return "rejected"
    return "partial" if outcome.problems or outcome.kept_previous else "ok"


class LibraryReloader:
    """Reloads ``directory`` into the service, one reload at a time (SIGHUP, the interval watcher and a
    sync can all ask). Each reload is counted in ``library_reloads`` and logged with what triggered it;
    ``bot.app.reloader`` keeps the previous library (or a broken file's previous case) serving."""

    def __init__(self, service: IncidentService, directory: Path) -> None:
        self.service = service
        self.directory = directory
        self.seen: str | None = None  # the fingerprint last loaded (set by ``baseline`` or a reload)
        self._lock = threading.Lock()
        self._tasks: set[asyncio.Task[object]] = set()

    def baseline(self) -> None:
        self.seen = fingerprint(self.directory)

    def reload(self, trigger: str) -> ReloadOutcome | None:
        """Reload now (blocking; call it in a thread). Never raises: returns None when loading failed."""
        with self._lock, structlog.contextvars.bound_contextvars(job="reload", trigger=trigger):
            seen = fingerprint(self.directory)
            try:
                outcome = reload_library(self.service, self.directory)
            except Exception:
                self.service.metrics.library_reloads.labels(outcome="error").inc()
                log.exception("case library reload (%s) failed; the previous library keeps serving", trigger)
                return None
            self.seen = seen
            label = reload_label(outcome)
            self.service.metrics.library_reloads.labels(outcome=label).inc()
            log.log(
                logging.INFO if label == "ok" else logging.WARNING,
                "case library reload (%s): %s, %d cases serving, %d file problem(s), previous version kept for: %s",
                trigger,
                label,
                outcome.cases,
                len(outcome.problems),
                ", ".join(outcome.kept_previous) or "-",
            )
            return outcome

    def request(self, trigger: str) -> None:
        """Start a reload in a thread from the event loop (a signal handler) without waiting for it."""
        task: asyncio.Task[object] = asyncio.create_task(asyncio.to_thread(self.reload, trigger))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def watch(self, interval_s: float) -> None:
        """Reload whenever the case files' fingerprint changed, checked every ``interval_s`` seconds."""
        if self.seen is None:
            await asyncio.to_thread(self.baseline)
        while True:
            await asyncio.sleep(interval_s)
            if await asyncio.to_thread(fingerprint, self.directory) != self.seen:
                await asyncio.to_thread(self.reload, "interval")


def in_daemon_thread(fn: Callable[[], _T]) -> asyncio.Future[_T]:
    """Run ``fn`` on a daemon thread (with this context) and await its result. Unlike ``to_thread``,
    a stop never waits for it: a slow library sync must not hold up SIGTERM (its writes are atomic)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: _T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def target() -> None:
        try:
            result, error = context.run(fn), None
        except BaseException as exc:
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=target, name="library-sync", daemon=True).start()
    return future


class LibrarySync:
    """``LIBRARY_SYNC_MINUTES``: a ``SyncJob`` run at start-up and then every interval, one run at a
    time (each run waits for the previous; ``SyncJob`` also refuses to overlap); a sync that changed case
    files reloads the library."""

    def __init__(self, api_url: str, settings: Settings, reloader: LibraryReloader) -> None:
        self.reloader = reloader
        self.job = SyncJob(
            LibraryClient(api_url),
            settings.cases_dir,
            state_path=Path(settings.data_dir) / STATE_FILE,
            on_change=self._changed,
        )
        self.running = False
        self.runs = 0

    def _changed(self, report: SyncReport) -> None:
        self.reloader.reload("sync")

    def run_once(self) -> bool:
        with structlog.contextvars.bound_contextvars(job="sync"):
            self.running = True
            try:
                return self.job.run()
            finally:
                self.running = False
                self.runs += 1

    async def loop(self, interval_s: float) -> None:
        while True:
            try:
                await in_daemon_thread(self.run_once)
            except Exception:
                log.exception("library sync failed")
            await asyncio.sleep(interval_s)

    def close(self) -> None:
        if not self.running:  # a run still in flight keeps its client; the process is exiting anyway
            self.job.client.close()


@dataclass
class SlackServer:
    """A running bot: the aiohttp site (Bolt in HTTP mode, health checks in both), the Socket Mode
    connection, the digest schedule. ``stop()`` shuts all of it down."""

    site_runner: web.AppRunner
    socket: AsyncSocketModeHandler | None = None
    schedule: DigestSchedule | None = None
    background: set[asyncio.Task[object]] = field(default_factory=set)
    reloader: LibraryReloader | None = None
    sync: LibrarySync | None = None

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """Where the web server listens (host, port); useful with PORT=0."""
        return [(str(a[0]), int(a[1])) for a in self.site_runner.addresses]

    async def stop(self) -> None:
        """Stop taking work, let listeners in flight finish (bounded), then close connections."""
        if self.schedule is not None:
            self.schedule.shutdown()
        for task in self.background:
            task.cancel()
        if self.sync is not None:
            self.sync.close()
        if self.socket is not None:
            await self.socket.close_async()  # type: ignore[no-untyped-call]
        await self.site_runner.cleanup()
        pending = listener_tasks()
        if pending:
            _, late = await asyncio.wait(pending, timeout=SHUTDOWN_GRACE_SECONDS)
            for task in late:
                task.cancel()


def listener_tasks() -> list[asyncio.Task[object]]:
    """Bolt listeners still running in this loop. With ``process_before_response=False`` Bolt acks, then
    runs each listener in a task of its own (``AsyncioListenerRunner.run.<locals>.run_ack_function_
    asynchronously``); if Bolt renames it, shutdown simply stops waiting for them."""
    return [
        task
        for task in asyncio.all_tasks()
        if not task.done() and "run_ack_function" in getattr(task.get_coro(), "__qualname__", "")
    ]


def startup_problems(settings: Settings) -> list[str]:
    """What the file system says is wrong with these settings (``Settings`` checks the values alone)."""
    problems: list[str] = []
    cases = Path(settings.cases_dir)
    if not cases.is_dir():
        problems.append(f"CASES_DIR {cases} is not a directory")
    elif settings.library_sync_minutes and not os.access(cases, os.W_OK):
        problems.append(f"LIBRARY_SYNC_MINUTES is set but CASES_DIR {cases} is not writable (sync writes there)")
    return problems


class _CapLongMessages(logging.Filter):
    """Cuts INFO-and-above lines longer than ``MAX_LOGGED_CHARS`` (a library logging a payload)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.INFO and isinstance(record.msg, str):
            text = record.getMessage()
            if len(text) > MAX_LOGGED_CHARS:
                record.msg, record.args = f"{text[:MAX_LOGGED_CHARS]}... [{len(text)} chars, cut]", None
        return True


def run_slack(settings: Settings, service: IncidentService) -> int:
    """Run until SIGTERM/SIGINT; returns the process exit code (2 when the settings cannot work)."""
    problems = startup_problems(settings)
    if problems:
        print("incident-bot: invalid settings:\n" + "\n".join(f"  {p}" for p in problems), file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_CapLongMessages())
    return asyncio.run(serve(settings, service))


async def serve(settings: Settings, service: IncidentService, stop: asyncio.Event | None = None) -> int:
    """Start everything, wait for ``stop`` (also set by SIGTERM/SIGINT), then shut down gracefully.
    SIGHUP reloads the case library (in a thread; requests keep being served)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    reloader = LibraryReloader(service, settings.cases_dir)
    installed: list[signal.Signals] = []
    handlers: list[tuple[signal.Signals, Callable[[], object]]] = [
        (signal.SIGTERM, stop.set),
        (signal.SIGINT, stop.set),
        (signal.SIGHUP, lambda: reloader.request("sighup")),
    ]
    for sig, callback in handlers:
        with contextlib.suppress(NotImplementedError, RuntimeError, AttributeError):  # thread / platform
            loop.add_signal_handler(sig, callback)
            installed.append(sig)
    server = await start_slack(settings, service, reloader=reloader)
    try:
        await stop.wait()
        log.info("stopping")
    finally:
        await server.stop()
        for sig in installed:
            loop.remove_signal_handler(sig)
    return 0


async def start_slack(
    settings: Settings,
    service: IncidentService,
    *,
    bolt: AsyncApp | None = None,
    reloader: LibraryReloader | None = None,
) -> SlackServer:
    """Start the bot in the mode the settings pick; ``bolt`` defaults to ``create_app(settings, service)``."""
    bolt = bolt or create_app(settings, service)
    reloader = reloader or LibraryReloader(service, settings.cases_dir)
    await asyncio.to_thread(reloader.baseline)
    socket_mode = settings.slack_app_token is not None
    runner = web.AppRunner(build_web_app(None if socket_mode else bolt, service))
    await runner.setup()
    await web.TCPSite(runner, settings.host, settings.port).start()
    server = SlackServer(site_runner=runner, reloader=reloader)
    if settings.slack_app_token is not None:
        app_token = settings.slack_app_token.get_secret_value()
        # apps.connections.open goes to SLACK_API_URL too (else it would go to slack.com).
        socket_client = build_client(app_token, settings.slack_api_url, metrics=service.metrics)
        server.socket = AsyncSocketModeHandler(bolt, app_token, web_client=socket_client)
        # Runs before Bolt's handler in each envelope's own task: its log lines carry the envelope id.
        server.socket.client.socket_mode_request_listeners.insert(0, _bind_envelope)
        await server.socket.connect_async()  # type: ignore[no-untyped-call]
        log.info("Socket Mode connected; health checks on %s", server.addresses)
    else:
        log.info("HTTP mode: %s and health checks on %s", EVENTS_PATH, server.addresses)
    server.schedule = build_digest_schedule(settings, service)
    if server.schedule is not None:
        # start() also posts a digest missed while the bot was down: run it beside the server.
        task: asyncio.Task[object] = asyncio.create_task(server.schedule.start())
        server.background.add(task)
        task.add_done_callback(_log_failure)
    if settings.cases_reload_seconds > 0:
        _background(server, reloader.watch(float(settings.cases_reload_seconds)))
    if settings.library_sync_minutes > 0 and settings.library_api_url:
        server.sync = LibrarySync(settings.library_api_url, settings, reloader)
        _background(server, server.sync.loop(settings.library_sync_minutes * 60.0))
    return server


def _background(server: SlackServer, coro: Awaitable[object]) -> None:
    task: asyncio.Task[object] = asyncio.ensure_future(coro)
    server.background.add(task)
    task.add_done_callback(_log_failure)


def _log_failure(task: asyncio.Task[object]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("background task %s failed", task.get_name(), exc_info=task.exception())
