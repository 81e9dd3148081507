"""Bringing the case directory up to date with the incident library: fetch, validate, merge
(``bot.library.merge``), write atomically (``bot.library.sync_state``). A file is only ever replaced by a
case that validates, through a temporary file and a rename.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from bot.library.case_store import parse_case, screen_case
from bot.library.client import (
    CaseRef,
    Fetched,
    LibraryClient,
    LibraryError,
    LibraryUnavailable,
    NotModified,
)
from bot.library.merge import dump_case, has_text, merge_case
from bot.library.sync_state import SyncState, write_atomic
from bot.model.ids import canonical_id

log = logging.getLogger(__name__)

STATE_FILE = "sync-state.json"  # under DATA_DIR: validators per case for conditional requests
MAX_CONSECUTIVE_UNAVAILABLE = 3

Progress = Callable[[int, int, str], None]
"""Called after each case with (cases done, cases listed, case id)."""


# -- report -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rejection:
    case_id: str
    reasons: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.case_id}: " + "; ".join(self.reasons)


@dataclass
class SyncReport:
    """What one sync did (or, on a dry run, would do). Lists hold case ids in listing order."""

    api_url: str
    dry_run: bool = False
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)  # the library's case is unusable; local file kept
    failed: list[Rejection] = field(default_factory=list)  # the case could not be fetched
    newly_reviewed: list[str] = field(default_factory=list)  # review.reviewed_at appeared: next digest picks it
    notes: list[str] = field(default_factory=list)
    error: str | None = None  # the sync stopped early (listing failed, library unreachable)
    fetched: int = 0  # cases transferred with a 200
    not_modified: int = 0  # conditional requests answered 304

    @property
    def changed(self) -> bool:
        """Whether any case file was (or, on a dry run, would be) written."""
        return bool(self.added or self.updated)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.rejected and not self.failed

    def summary(self) -> str:
        head = f"Library sync from {self.api_url}" + (" (dry run: nothing written)" if self.dry_run else "")
        lines = [
            head,
            f"  added {len(self.added)}, updated {len(self.updated)}, unchanged {len(self.unchanged)}, "
            f"rejected {len(self.rejected)}, failed {len(self.failed)} "
            f"(transferred {self.fetched}, not modified {self.not_modified})",
        ]
        for label, ids in (("added", self.added), ("updated", self.updated)):
            if ids:
                lines.append(f"  {label}: {', '.join(ids)}")
        if self.newly_reviewed:
            lines.append(f"  newly reviewed (eligible for the next digest): {', '.join(self.newly_reviewed)}")
        lines += [f"  rejected {item}" for item in self.rejected]
        lines += [f"  failed {item}" for item in self.failed]
        lines += [f"  note: {note}" for note in self.notes]
        if self.error:
            lines.append(f"  error: {self.error}")
        return "\n".join(lines)


def _local_paths(cases_dir: Path) -> dict[str, Path]:
    """Case id -> its file, read from each file's ``id``; as in ``load_library``, the file named after the
    id wins, else the first by name. Unreadable files are simply not indexed."""
    found: dict[str, Path] = {}
    for path in sorted(cases_dir.glob("*.json")):
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError, RecursionError):
            continue
        key = canonical_id(data["id"]) if isinstance(data, dict) and isinstance(data.get("id"), str) else None
        if key and (key not in found or (path.stem == key and found[key].stem != key)):
            found[key] = path
    return found


# -- sync ---------------------------------------------------------------------------------------------


def _reviewed(data: dict[str, Any] | None) -> bool:
    review = data.get("review") if data else None
    return isinstance(review, dict) and has_text(review.get("reviewed_at"))


class _Run:
    """One sync pass; ``sync_library`` is its public face."""

    def __init__(self, client: LibraryClient, cases_dir: Path, state: SyncState, report: SyncReport) -> None:
        self.client = client
        self.cases_dir = cases_dir
        self.state = state
        self.report = report
        self.paths = _local_paths(cases_dir) if cases_dir.is_dir() else {}

    def one(self, ref: CaseRef) -> None:
        report = self.report
        case_id = canonical_id(ref.id) if ref.id else None
        if case_id is None:
            report.rejected.append(Rejection(ref.id or "(no id)", ("listing entry without a usable case id",)))
            return
        path = self.paths.get(case_id, self.cases_dir / f"{case_id}.json")
        local_bytes = path.read_bytes() if path.is_file() else None
        source = self.client.case_url(ref.id)
        etag: str | None = None
        last_modified: str | None = None
        if ref.is_whole_case:
            body = dump_case(dict(ref.fields))
            source = f"{self.client.base_url}/cases (listing)"
        else:
            # Without the local file a 304 would leave nothing to compare: ask unconditionally.
            known = self.state.validators(case_id) if local_bytes is not None else (None, None)
            answer = self.client.get_case(ref.id, *known)
            if isinstance(answer, NotModified):
                report.not_modified += 1
                report.unchanged.append(case_id)
                known_updated = self.state.cases.get(case_id, {}).get("updated_at")
                self.state.record(case_id, answer.etag, answer.last_modified, known_updated)
                return
            assert isinstance(answer, Fetched)
            report.fetched += 1
            body, etag, last_modified = answer.body, answer.etag, answer.last_modified

        remote_case, _, problems = parse_case(body, source)
        if remote_case is None:
            self._reject(case_id, [str(p) for p in problems if p.severity == "error"])
            return
        if remote_case.id != case_id:
            self._reject(case_id, [f"asked for {case_id}, the library answered with {remote_case.id}"])
            return
        remote: dict[str, Any] = json.loads(body)

        local: dict[str, Any] | None = None
        if local_bytes is not None:
            try:
                parsed = json.loads(local_bytes)
            except (ValueError, RecursionError):
                parsed = None
            if isinstance(parsed, dict):
                local = parsed
            else:
                report.notes.append(f"{path}: unreadable local file replaced by the library's {case_id}")
        merged, notes = merge_case(local, remote)
        report.notes += [f"{case_id}: {note}" for note in notes]
        new_bytes = dump_case(merged)
        final, compiled, problems = parse_case(new_bytes, str(path))
        if final is not None:
            problems = screen_case(final, compiled, str(path))
            final = None if problems else final
        if final is None:
            errors = [str(p) for p in problems if p.severity == "error"]
            said = (
                "merged with the local file it does not validate (local file kept)"
                if local
                else "it does not validate (nothing written)"
            )
            self._reject(case_id, [said, *errors])
            return

        self.state.record(case_id, etag, last_modified, remote_case.updated_at)
        if new_bytes == local_bytes:
            report.unchanged.append(case_id)
            return
        if not _reviewed(local) and _reviewed(merged):
            report.newly_reviewed.append(case_id)
        (report.updated if local_bytes is not None else report.added).append(case_id)
        if not report.dry_run:
            write_atomic(path, new_bytes)
            self.paths[case_id] = path

    def _reject(self, case_id: str, reasons: list[str]) -> None:
        self.report.rejected.append(Rejection(case_id, tuple(reasons) or ("invalid",)))
        self.state.forget(case_id)  # fetch it in full next time


def sync_library(
    client: LibraryClient,
    cases_dir: Path,
    *,
    since: datetime | str | None = None,
    dry_run: bool = False,
    state_path: Path | None = None,
    progress: Progress | None = None,
) -> SyncReport:
    """Fetch the listing, then every new or changed case, and write what validates into ``cases_dir``.

    Never raises for library trouble: a failed listing, or ``MAX_CONSECUTIVE_UNAVAILABLE`` cases in a row
    that cannot be fetched, stop the sync with ``report.error``; a single case that cannot be fetched is in
    ``report.failed``; an invalid one in ``report.rejected`` (its local file untouched). Raises ``OSError``
    only when the case directory or the state file cannot be written. ``state_path`` (None: no state)
    holds the validators that make a re-run transfer only changes; ``dry_run`` writes nothing at all.
    """
    report = SyncReport(api_url=client.base_url, dry_run=dry_run)
    state = SyncState(state_path, client.base_url)
    if state.problem:
        report.notes.append(state.problem)
    try:
        refs: dict[str, CaseRef] = {}
        unnamed: list[CaseRef] = []
        for ref in client.list_cases(since=since):
            key = canonical_id(ref.id) if ref.id else None
            if key is None:
                unnamed.append(ref)
            elif key in refs:
                report.notes.append(f"{key} is listed more than once; the first entry is used")
            else:
                refs[key] = ref
    except LibraryError as exc:
        report.error = f"listing failed: {exc}"
        return report
    if not dry_run:
        cases_dir.mkdir(parents=True, exist_ok=True)
    run = _Run(client, cases_dir, state, report)
    todo = [*refs.values(), *unnamed]
    in_a_row = 0
    try:
        for done, ref in enumerate(todo, start=1):
            try:
                run.one(ref)
                in_a_row = 0
            except LibraryUnavailable as exc:
                report.failed.append(Rejection(ref.id, (str(exc),)))
                in_a_row += 1
                if in_a_row >= MAX_CONSECUTIVE_UNAVAILABLE:
                    report.error = f"stopped: {in_a_row} cases in a row could not be fetched"
                    break
            except LibraryError as exc:
                report.failed.append(Rejection(ref.id, (str(exc),)))
            if progress:
                progress(done, len(todo), ref.id)
    finally:
        if not dry_run:
            state.save()
    return report


# -- progress and the periodic job --------------------------------------------------------------------


class TerminalProgress:
    """A one-line bar, redrawn in place: ``[##########..........]  12/40 IL-0427``."""

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self.stream = stream
        self.width = width

    def __call__(self, done: int, total: int, case_id: str) -> None:
        filled = self.width * done // total if total else self.width
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r[{bar}] {done:>{len(str(total))}}/{total} {case_id:<12}")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def terminal_progress(stream: TextIO | None = None) -> Progress | None:
    """A progress bar on ``stream`` (default stderr) when it is a terminal, else None (logs stay clean)."""
    target = stream if stream is not None else sys.stderr
    isatty = getattr(target, "isatty", None)
    return TerminalProgress(target) if callable(isatty) and isatty() else None


class SyncJob:
    """One periodic sync for a scheduler: ``run()`` syncs once and returns whether any case file changed.

    Never raises: library trouble and file errors are logged. Overlapping calls are skipped (the second
    returns False). ``on_change(report)`` runs after a sync that wrote something, e.g. to reload the
    library into the service.
    """

    def __init__(
        self,
        client: LibraryClient,
        cases_dir: Path,
        *,
        state_path: Path | None,
        on_change: Callable[[SyncReport], None] | None = None,
    ) -> None:
        self.client = client
        self.cases_dir = cases_dir
        self.state_path = state_path
        self.on_change = on_change
        self.last_report: SyncReport | None = None
        self._lock = threading.Lock()

    def run(self) -> bool:
        if not self._lock.acquire(blocking=False):
            log.info("library sync already running; skipped")
            return False
        try:
            try:
                report = sync_library(self.client, self.cases_dir, state_path=self.state_path)
            except OSError:
                log.exception("library sync could not write the case directory or its state")
                return False
            self.last_report = report
            log.log(logging.INFO if report.ok else logging.WARNING, "%s", report.summary())
            if report.changed and self.on_change is not None:
                self.on_change(report)
            return report.changed
        finally:
            self._lock.release()
