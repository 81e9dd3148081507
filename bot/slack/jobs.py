"""Background jobs of a running bot: the weekly digest schedule (counted in metrics) and the periodic
library sync (``LIBRARY_SYNC_MINUTES``), which reloads the library when case files changed."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import structlog

from bot.app.reloader import LibraryReloader
from bot.app.service import IncidentService
from bot.digest.runner import DigestOutcome, DigestParams, DigestRunner, digest_client
from bot.digest.scheduler import DigestSchedule
from bot.library.client import LibraryClient
from bot.library.sync import STATE_FILE, SyncJob, SyncReport
from bot.ops.metrics import Metrics
from bot.ops.settings import Settings
from bot.storage import Storage, StorageError

log = logging.getLogger(__name__)

_T = TypeVar("_T")


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
        cases=service.digest_candidates,
        nodes=service.digest_nodes,
        lookup=lambda case_id: service.library.cases.get(case_id),
        clock=service.now,
        metrics=service.metrics,
    )
    return DigestSchedule(runner, clock=service.now)


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


class StorageGate:
    """Opens storage for a running bot: migrates it, retrying with backoff while the database cannot be
    reached (``/readyz`` says not ready meanwhile), instead of exiting into a supervisor's restart loop.
    Settings that cannot work are not retried: ``run`` checks them before it starts serving."""

    def __init__(self, storage: Storage, first_delay: float = 1.0, max_delay: float = 30.0) -> None:
        self.storage = storage
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.opened = asyncio.Event()
        self.problem: str | None = None

    @property
    def ready(self) -> bool:
        return self.opened.is_set()

    async def attempt(self) -> bool:
        """Migrate once; True when storage is open. A failure is remembered for ``/readyz`` and logged."""
        try:
            await asyncio.to_thread(self.storage.migrate)
        except StorageError as exc:
            self.problem = str(exc)
            log.warning("storage is not ready: %s", exc)
            return False
        self.problem = None
        self.opened.set()
        return True

    async def open(self) -> None:
        """Retry with backoff (doubling up to ``max_delay``) until storage opens. Cancelled with the server."""
        delay = self.first_delay
        while not self.ready:
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_delay)
            await self.attempt()
