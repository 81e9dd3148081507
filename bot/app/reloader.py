"""Reloading the case library while serving: on SIGHUP, on an interval, or after a sync.

A case file that is broken in the new version does not take its case away: the previous version of that
file's case keeps serving, and the problem is logged with the file and the reason. The new library is
built off to the side and swapped in whole (``IncidentService.reload``), so no request is dropped.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from bot.app.service import IncidentService
from bot.library.case_store import CaseLibrary, Problem, load_library
from bot.library.snapshot import load_with_snapshot

log = logging.getLogger("incident_bot.reload")


@dataclass(frozen=True)
class ReloadOutcome:
    changed: bool
    cases: int
    kept_previous: tuple[str, ...] = ()  # case ids served from the previous version of a broken file
    problems: tuple[Problem, ...] = field(default_factory=tuple)


def fingerprint(directory: Path) -> str:
    """A cheap digest of the directory's case files (names, sizes, modification times)."""
    digest = hashlib.sha256()
    for path in sorted(directory.glob("*.json")):
        try:
            stat = path.stat()
        except OSError:
            continue
        digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def merge_with_previous(new: CaseLibrary, previous: CaseLibrary) -> tuple[CaseLibrary, list[str]]:
    """Carry over each previous case whose file is broken now (and whose id the new library lacks)."""
    broken = new.broken_paths
    kept: list[str] = []
    for case_id, path in previous.paths.items():
        if path in broken and case_id not in new.cases:
            new.cases.put(previous.cases[case_id])
            new.paths[case_id] = path
            new.signatures = [*new.signatures, *(sig for sig in previous.signatures if sig.case_id == case_id)]
            new.sets = None  # the sets no longer cover exactly these signatures: the matcher rebuilds them
            # Nor do the snapshot's indexes cover this library any more: it is indexed in memory.
            new.snapshot = None
            kept.append(case_id)
    return new, kept


def reload_library(service: IncidentService, directory: Path, snapshots: Path | None = None) -> ReloadOutcome:
    """Load ``directory`` again (through a snapshot under ``snapshots`` when given) and swap it in. Never
    raises for bad content; logs every problem. The new library and its indexes are built beside the
    one serving, which keeps answering until the swap."""
    previous = service.library
    fresh = load_with_snapshot(directory, snapshots) if snapshots is not None else load_library(directory)
    for problem in fresh.errors:
        log.warning("case file problem on reload: %s", problem)
    merged, kept = merge_with_previous(fresh, previous)
    if kept:
        log.warning("kept the previous version of %s because the new file is broken", ", ".join(sorted(kept)))
    if not merged.cases and previous.cases:
        log.error("reload found no usable case in %s; the previous library keeps serving", directory)
        return ReloadOutcome(False, len(previous), tuple(previous.cases), tuple(fresh.errors))
    service.reload(merged)
    log.info("case library reloaded: %d cases", len(merged))
    return ReloadOutcome(True, len(merged), tuple(kept), tuple(fresh.errors))


async def watch_library(
    service: IncidentService, directory: Path, interval_s: float, baseline: str | None = None
) -> None:
    """Reload whenever the directory's fingerprint differs from ``baseline`` (default: as it is now),
    checked every ``interval_s`` seconds. Runs until cancelled; loading runs in a thread."""
    seen = baseline if baseline is not None else await asyncio.to_thread(fingerprint, directory)
    while True:
        await asyncio.sleep(interval_s)
        current = await asyncio.to_thread(fingerprint, directory)
        if current != seen:
            seen = current
            await asyncio.to_thread(reload_library, service, directory)


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

    def __init__(self, service: IncidentService, directory: Path, snapshots: Path | None = None) -> None:
        self.service = service
        self.directory = directory
        self.snapshots = snapshots
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
                outcome = reload_library(self.service, self.directory, self.snapshots)
            except Exception:
                self.service.metrics.library_reloads.labels(outcome="error").inc()
                log.exception("case library reload (%s) failed; the previous library keeps serving", trigger)
                return None
            self.seen = seen
            self.service.metrics.broken_case_files.set(len({p.path for p in outcome.problems}))
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

    async def watch(self, interval_s: float, *, files: bool = True) -> None:
        """Every ``interval_s`` seconds: reload when the case files' fingerprint changed (with ``files``),
        and pick up confirmed examples other replicas stored (one cheap query when there are none)."""
        if self.seen is None and files:
            await asyncio.to_thread(self.baseline)
        while True:
            await asyncio.sleep(interval_s)
            if files and await asyncio.to_thread(fingerprint, self.directory) != self.seen:
                await asyncio.to_thread(self.reload, "interval")
            await asyncio.to_thread(self.service.refresh_examples)
