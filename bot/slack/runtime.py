"""Running the Slack bot: HTTP mode (``/slack/events`` with signature checks) or Socket Mode (when
``SLACK_APP_TOKEN`` is set), the probes on ``PORT`` in both, the digest scheduler when ``DIGEST_CHANNEL`` is
set, library reloads (SIGHUP, ``CASES_RELOAD_SECONDS``, after a ``LIBRARY_SYNC_MINUTES`` sync), and a
graceful stop on SIGTERM/SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.alerts import AlertDesk, parse_routes
from bot.app.learning import Refresher
from bot.app.nodes import parse_aliases as parse_node_aliases
from bot.app.reloader import LibraryReloader
from bot.app.service import IncidentService
from bot.app.services import Services
from bot.app.workers import WorkerPools
from bot.digest.scheduler import DigestSchedule
from bot.ops.logs import configure_logging
from bot.ops.settings import Settings
from bot.slack.alerts import AlertPoster, add_alert_route, alert_tasks
from bot.slack.app import build_client, create_app
from bot.slack.guard import KEEPALIVE_SECONDS, GuardedSite
from bot.slack.http import EVENTS_PATH, build_web_app
from bot.slack.identity import TokenRejected, identity_of
from bot.slack.jobs import LibrarySync, StorageGate, build_digest_schedule
from handlers.nodeline import pending_updates
from handlers.reviewers import Reviewers

EXAMPLES_DEFAULT_INTERVAL_S = 60.0
log = logging.getLogger(__name__)

SHUTDOWN_GRACE_SECONDS = 10.0
AUTH_TEST_SECONDS = 5.0  # how long start-up waits for auth.test before serving and retrying it in the background
MAX_LOGGED_CHARS = 2000  # an INFO+ log line longer than this is cut: never a whole paste in the logs


async def _reviewer_groups(listed: Reviewers, client: AsyncWebClient, service: IncidentService, every: float) -> None:
    """Keep ``service.examples.reviewers`` at the listed users plus their groups' members (read with
    ``usergroups.users.list``, cached five minutes), rebuilding the example index when they change."""
    while True:
        try:
            members = await listed.everyone(client)
            if members != service.examples.reviewers:
                service.examples.reviewers = members
                await asyncio.to_thread(service.refresh_examples, force=True)
        except Exception:
            log.exception("reviewer groups not refreshed")
        await asyncio.sleep(max(every, 1.0))


async def _bind_envelope(_client: object, request: SocketModeRequest) -> None:
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(envelope_id=request.envelope_id)


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
    pools: WorkerPools | None = None
    learner: Refresher | None = None  # the example index's background refresh: finished before storage closes

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
        pending = [*listener_tasks(), *alert_tasks(), *pending_updates()]
        if pending:
            _, late = await asyncio.wait(pending, timeout=SHUTDOWN_GRACE_SECONDS)
            for task in late:
                task.cancel()
        if self.learner is not None:
            await asyncio.to_thread(self.learner.wait_idle, SHUTDOWN_GRACE_SECONDS)
        if self.pools is not None:
            self.pools.shutdown()


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


def run_slack(settings: Settings, services: Services) -> int:
    """Run until SIGTERM/SIGINT; returns the process exit code (2 when the settings cannot work)."""
    problems = startup_problems(settings)
    if problems:
        print("incident-bot: invalid settings:\n" + "\n".join(f"  {p}" for p in problems), file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_CapLongMessages())
    try:
        return asyncio.run(serve(settings, services))
    except TokenRejected as exc:
        print(f"incident-bot: {exc}; check the token in the Slack app's OAuth & Permissions page", file=sys.stderr)
        return 2


async def serve(settings: Settings, services: Services, stop: asyncio.Event | None = None) -> int:
    """Start everything, wait for ``stop`` (also set by SIGTERM/SIGINT), then shut down gracefully.
    SIGHUP reloads the case library (in a thread; requests keep being served)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    reloader = LibraryReloader(services.incident, settings.cases_dir, Path(settings.data_dir) / "snapshots")
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
    server = await start_slack(settings, services, reloader=reloader)
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
    services: Services,
    *,
    bolt: AsyncApp | None = None,
    reloader: LibraryReloader | None = None,
    auth_wait: float = AUTH_TEST_SECONDS,
) -> SlackServer:
    """Start the bot in the mode the settings pick; ``bolt`` defaults to ``create_app(settings, services)``."""
    service = services.incident
    bolt = bolt or create_app(settings, services)
    identity = identity_of(bolt)
    token_client = None
    signed_in = True
    if identity is not None:
        # Before the port opens: a token Slack refuses stops the bot here (TokenRejected), with one line.
        token_client = build_client(identity.token, settings.slack_api_url, metrics=service.metrics)
        signed_in = await identity.check(token_client, within=auth_wait)
    reloader = reloader or LibraryReloader(service, settings.cases_dir, Path(settings.data_dir) / "snapshots")
    await asyncio.to_thread(reloader.baseline)
    socket_mode = settings.slack_app_token is not None
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else None
    gate = StorageGate(service.storage)
    await gate.attempt()  # usually opens here; if not, the retries below run beside the server

    def storage_problem() -> str | None:
        return None if gate.ready else (gate.problem or "opening")

    web_app = build_web_app(
        None if socket_mode else bolt, service, signing_secret=secret, storage_problem=storage_problem
    )
    poster = _alerts(web_app, settings, services, token_client)
    runner = web.AppRunner(web_app, keepalive_timeout=KEEPALIVE_SECONDS)
    await runner.setup()
    # Slow clients: headers within 10 s, bodies within 10 s, at most 512 connections (bot.slack.guard).
    await GuardedSite(runner, settings.host, settings.port).start()
    server = SlackServer(site_runner=runner, reloader=reloader, pools=services.pools, learner=services.incident.learner)
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
    if identity is not None and token_client is not None and not signed_in:
        _background(server, identity.keep_checking(token_client), "auth-test")
    if not gate.ready:
        _background(server, gate.open(), "storage-gate")
    if poster is not None:  # notifications stored but not posted before a restart
        _background(server, _after(gate, poster.drain()), "alerts-catch-up")
    server.schedule = build_digest_schedule(settings, service)
    if server.schedule is not None:
        # start() also posts a digest missed while the bot was down: run it beside the server, once the
        # storage that holds the digest ledger is open.
        _background(server, _after(gate, server.schedule.start()), "digest-catch-up")
    # Confirmed examples live in the database: every replica picks up the others' within the interval
    # (EXAMPLES_DEFAULT_INTERVAL_S when case files are not watched).
    files = settings.cases_reload_seconds > 0
    interval = float(settings.cases_reload_seconds) if files else EXAMPLES_DEFAULT_INTERVAL_S

    async def load_examples() -> None:
        await gate.opened.wait()
        await asyncio.to_thread(service.refresh_examples)

    async def watch() -> None:
        await gate.opened.wait()
        await reloader.watch(interval, files=files)

    _background(server, load_examples(), "examples-load")
    _background(server, watch(), "reload-watch")
    listed = Reviewers(service.examples.reviewers)
    if listed.groups and token_client is not None:  # group members weigh confirmed examples like listed users
        _background(server, _after(gate, _reviewer_groups(listed, token_client, service, interval)), "reviewers")
    if settings.library_sync_minutes > 0 and settings.library_api_url:
        server.sync = LibrarySync(settings.library_api_url, settings, reloader)
        _background(server, server.sync.loop(settings.library_sync_minutes * 60.0), "library-sync")
    return server


async def _after(gate: StorageGate, work: Awaitable[object]) -> object:
    await gate.opened.wait()
    return await work


def _background(server: SlackServer, coro: Awaitable[object], name: str) -> None:
    task: asyncio.Task[object] = asyncio.ensure_future(coro)
    task.set_name(name)
    server.background.add(task)
    task.add_done_callback(_log_failure)


def _log_failure(task: asyncio.Task[object]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("background task %s failed", task.get_name(), exc_info=task.exception())


def _alerts(
    web_app: web.Application, settings: Settings, services: Services, client: AsyncWebClient | None
) -> AlertPoster | None:
    """``POST /alertmanager`` when ``ALERT_CHANNEL`` and a credential are set (bot.slack.alerts)."""
    token = settings.alertmanager_token.get_secret_value() if settings.alertmanager_token else None
    password = settings.alertmanager_password.get_secret_value() if settings.alertmanager_password else None
    if not settings.alert_channel or client is None or not (token or (settings.alertmanager_user and password)):
        return None
    desk = AlertDesk(
        services.incident,
        settings.alert_channel,
        parse_routes(settings.alert_routes),
        parse_node_aliases(settings.node_aliases),
    )
    poster = AlertPoster(services, desk, client, silence=bool(settings.alertmanager_url))
    add_alert_route(
        web_app,
        services,
        poster,
        token=token,
        user=settings.alertmanager_user,
        password=password,
        now=services.incident.now,
    )
    return poster
