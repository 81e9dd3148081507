"""Running the Slack bot: HTTP mode (``/slack/events`` with signature checks) or Socket Mode (when
``SLACK_APP_TOKEN`` is set), ``/healthz`` and ``/readyz`` on ``PORT`` in both, the digest scheduler when
``DIGEST_CHANNEL`` is set, and a graceful stop on SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from dataclasses import dataclass, field

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from bot.config import Settings
from bot.digest_runner import DigestParams, DigestRunner, digest_client
from bot.logging_setup import configure_logging
from bot.metrics import CONTENT_TYPE, Metrics
from bot.reloader import watch_library
from bot.scheduler import DigestSchedule
from bot.service import IncidentService
from bot.slack_app import build_client, create_app

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
# Slack's payloads are small (a message is at most 40,000 characters); aiohttp's default cap is 1 MiB.
MAX_REQUEST_BYTES = 2 << 20
SHUTDOWN_GRACE_SECONDS = 10.0


def build_web_app(bolt: AsyncApp | None, service: IncidentService, metrics: Metrics | None = None) -> web.Application:
    """The aiohttp app: ``POST /slack/events`` into Bolt (omitted when ``bolt`` is None, i.e. Socket
    Mode), ``GET /healthz`` (the process is up), ``GET /readyz`` (library loaded, storage answers) and
    ``GET /metrics`` (Prometheus text format)."""
    web_app = web.Application(client_max_size=MAX_REQUEST_BYTES)
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


def build_digest_schedule(settings: Settings, service: IncidentService) -> DigestSchedule | None:
    """The weekly digest job when ``DIGEST_CHANNEL`` is set (its own client: no blind retries)."""
    if not settings.digest_channel or settings.slack_bot_token is None:
        return None
    runner = DigestRunner(
        service.storage,
        digest_client(settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url),
        settings.digest_channel,
        DigestParams.from_settings(settings),
        cases=lambda: list(service.library),
        clock=service.now,
    )
    return DigestSchedule(runner, clock=service.now)


@dataclass
class SlackServer:
    """A running bot: the aiohttp site (Bolt in HTTP mode, health checks in both), the Socket Mode
    connection, the digest schedule. ``stop()`` shuts all of it down."""

    site_runner: web.AppRunner
    socket: AsyncSocketModeHandler | None = None
    schedule: DigestSchedule | None = None
    background: set[asyncio.Task[object]] = field(default_factory=set)

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


def run_slack(settings: Settings, service: IncidentService) -> int:
    """Run until SIGTERM/SIGINT; returns the process exit code."""
    configure_logging(settings.log_level, settings.log_format)
    return asyncio.run(serve(settings, service))


async def serve(settings: Settings, service: IncidentService, stop: asyncio.Event | None = None) -> int:
    """Start everything, wait for ``stop`` (also set by SIGTERM/SIGINT), then shut down gracefully."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread / platform
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    server = await start_slack(settings, service)
    try:
        await stop.wait()
        log.info("stopping")
    finally:
        await server.stop()
        for sig in installed:
            loop.remove_signal_handler(sig)
    return 0


async def start_slack(settings: Settings, service: IncidentService, *, bolt: AsyncApp | None = None) -> SlackServer:
    """Start the bot in the mode the settings pick; ``bolt`` defaults to ``create_app(settings, service)``."""
    bolt = bolt or create_app(settings, service)
    socket_mode = settings.slack_app_token is not None
    runner = web.AppRunner(build_web_app(None if socket_mode else bolt, service))
    await runner.setup()
    await web.TCPSite(runner, settings.host, settings.port).start()
    server = SlackServer(site_runner=runner)
    if settings.slack_app_token is not None:
        app_token = settings.slack_app_token.get_secret_value()
        # apps.connections.open goes to SLACK_API_URL too (else it would go to slack.com).
        socket_client = build_client(app_token, settings.slack_api_url)
        server.socket = AsyncSocketModeHandler(bolt, app_token, web_client=socket_client)
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
        watcher: asyncio.Task[object] = asyncio.create_task(
            watch_library(service, settings.cases_dir, float(settings.cases_reload_seconds))
        )
        server.background.add(watcher)
        watcher.add_done_callback(_log_failure)
    return server


def _log_failure(task: asyncio.Task[object]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("background task %s failed", task.get_name(), exc_info=task.exception())
