"""The start-up snapshot: what loading the case directory produced, saved under ``DATA_DIR/snapshots`` so
the next start (a restart, a replica, a CLI call, a reload) skips the work.

A snapshot is a directory named by a key: a hash of every case file's name, size and modification time,
of this code (the sources that decide what a file yields, the tantivy version) and of the format. It holds:

- ``library.json``: per file its content hash, its problems and what it yielded (the case's summary, its
  checked signatures, where its validated JSON sits in ``cases.jsonl``); the library as loaded (which
  cases, in which order, every problem);
- ``cases.jsonl``: each validated case, read back in full only when it is first shown;
- indexes that other layers build into it and open again (``index_dir``, ``read_json``): tantivy's own
  files and JSON. Data only: nothing here is ever executed or unpickled, and whatever does not parse or
  check out is rebuilt, never trusted.

A changed, added or removed file changes the key. Files whose content hash is unchanged since the newest
earlier snapshot are not parsed and checked again; the library's indexes are rebuilt. The newest
``KEEP`` snapshots are kept (a reload builds the new one beside the one in use).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from bot.library.case_store import CaseLibrary, Problem, load_files
from bot.library.snapshot_save import CASES, FILES, FORMAT, LIBRARY, prune, save
from bot.matching.signatures import CompiledSignature, LazySignatures
from bot.model.case import Case, SignatureKind, Strength
from bot.model.summary import CaseSummary

log = logging.getLogger("incident_bot.snapshot")

_PACKAGE = Path(__file__).resolve().parent.parent
# The sources that decide what a case file yields and what the saved indexes hold.
_SOURCES = (
    "library/case_store.py",
    "library/snapshot.py",
    "library/snapshot_save.py",
    "matching/signatures.py",
    "matching/patterns.py",
    "matching/engine.py",
    "matching/knownlines.py",
    "matching/casetext.py",
    "model/case.py",
    "model/summary.py",
    "app/search.py",
    "library/ordinary/chat.txt",
    "library/ordinary/training.txt",
    "library/ordinary/negatives.txt",
)


def code_version() -> str:
    digest = hashlib.blake2b(f"format {FORMAT}".encode(), digest_size=16)
    for name in _SOURCES:
        path = _PACKAGE / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"") + b"\0")
    digest.update(metadata.version("tantivy").encode())
    return digest.hexdigest()


def listing(directory: Path) -> list[tuple[str, int, int]]:
    """Every ``*.json`` file's name, size and modification time (ns), by name."""
    found = []
    for entry in os.scandir(directory):
        if entry.name.endswith(".json") and entry.is_file():
            stat = entry.stat()
            found.append((entry.name, stat.st_size, stat.st_mtime_ns))
    return sorted(found)


def snapshot_key(directory: Path, files: list[tuple[str, int, int]], version: str) -> str:
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{version}\0{directory.resolve()}\0".encode())
    for name, size, mtime in files:
        digest.update(f"{name}\0{size}\0{mtime}\n".encode())
    return digest.hexdigest()


_KINDS = {kind.value: kind for kind in SignatureKind}
_SIGNATURE_FIELDS = 9
_STRENGTHS = {strength.value: strength for strength in Strength}


def _row_ok(row: object) -> bool:
    """A saved signature row of the right shape (checked when a snapshot opens: rows are made into
    signatures later, when first hit, and must not fail then)."""
    return (
        isinstance(row, list)
        and len(row) == _SIGNATURE_FIELDS
        and row[1] in _KINDS
        and row[3] in _STRENGTHS
        and isinstance(row[0], int)
        and all(isinstance(row[i], str) for i in (2, 6, 8))
        and isinstance(row[7], list)
    )


def _signature(case_id: str, data: list[Any]) -> CompiledSignature:
    index, kind, pattern, strength, ignore_case, fallout, literal, also, note = data
    return CompiledSignature(
        case_id=case_id,
        index=int(index),
        kind=_KINDS[kind],
        pattern=str(pattern),
        strength=_STRENGTHS[strength],
        ignore_case=bool(ignore_case),
        fallout=bool(fallout),
        literal=str(literal),
        also=tuple(also),
        note=str(note),
    )


def _problem(data: list[str]) -> Problem:
    path, where, message, severity = data
    return Problem(path, where, message, severity)


@dataclass
class Snapshot:
    """One snapshot directory."""

    path: Path

    def read_json(self, name: str) -> Any | None:
        """The JSON document ``name``; None when it is missing or does not parse."""
        try:
            return json.loads((self.path / name).read_bytes())
        except (OSError, ValueError):
            return None

    def index_dir(self, name: str, build: Callable[[Path], object]) -> Path:
        """The directory of index ``name``, built by ``build(empty_dir)`` first when it is not there yet
        (into a temporary directory, then renamed into place: never half-built)."""
        final = self.path / name
        if (final / ".complete").exists():
            return final
        work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=self.path))
        try:
            build(work)
            (work / ".complete").write_bytes(b"")
            try:
                work.rename(final)
            except OSError:  # another process finished it first
                shutil.rmtree(work, ignore_errors=True)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return final

    def discard_index(self, name: str) -> None:
        """Remove index ``name`` (it did not open: it is rebuilt next time)."""
        shutil.rmtree(self.path / name, ignore_errors=True)


def _case_loader(cases_file: Path, offset: int, length: int) -> Callable[[], Case]:
    def load() -> Case:
        with cases_file.open("rb") as handle:
            handle.seek(offset)
            return Case.model_validate_json(handle.read(length))

    return load


def _open(snapshot: Snapshot, directory: Path, version: str) -> CaseLibrary | None:
    """The library saved in ``snapshot``; None when it is missing, foreign or does not check out."""
    data = snapshot.read_json(LIBRARY)
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != version:
        return None
    try:
        library = CaseLibrary(snapshot=snapshot)
        cases_file = snapshot.path / CASES
        size = cases_file.stat().st_size
        prefix = f"{directory}/"
        rows: list[tuple[str, list[Any]]] = []
        for name, offset, length, summary_json, signatures in data["cases"]:
            case_id = str(summary_json["id"])
            if offset < 0 or length <= 0 or offset + length > size:
                return None
            library.cases.put_saved(case_id, summary_json, _case_loader(cases_file, offset, length))
            library.paths[case_id] = prefix + name
            if not all(_row_ok(row) for row in signatures):
                return None
            rows.extend((case_id, row) for row in signatures)
        library.signatures = LazySignatures(rows, _signature)
        library.problems = [_problem(problem) for problem in data["problems"]]
    except (KeyError, TypeError, ValueError, OSError):
        return None
    return library


@dataclass(frozen=True, slots=True)
class _Reused:
    """A file's earlier outcome, valid while its content hash is the same."""

    summary: CaseSummary | None
    signatures: list[CompiledSignature]
    problems: list[Problem]
    raw: bytes | None


def _previous_outcomes(root: Path, version: str, keep_out: Path) -> dict[str, _Reused]:
    """Per content hash, what the newest earlier snapshot of this code made of a file."""
    candidates = sorted(
        (p for p in root.iterdir() if p.is_dir() and p != keep_out and not p.name.startswith(".")),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for path in candidates[:1]:
        data = Snapshot(path).read_json(FILES)
        if not isinstance(data, dict) or data.get("version") != version:
            continue
        try:
            blob = (path / CASES).read_bytes()
            reused: dict[str, _Reused] = {}
            for entry in data["files"]:
                case = entry.get("case")
                summary = CaseSummary.from_json(case["summary"]) if case else None
                raw = blob[case["offset"] : case["offset"] + case["length"]] if case else None
                sigs = [_signature(summary.id, sig) for sig in case["signatures"]] if summary and case else []
                problems = [_problem(problem) for problem in entry["problems"]]
                reused[entry["digest"]] = _Reused(summary, sigs, problems, raw)
            return reused
        except (KeyError, TypeError, ValueError, OSError):
            continue
    return {}


def load_with_snapshot(directory: Path, root: Path) -> CaseLibrary:
    """The library in ``directory``, from its snapshot under ``root`` when there is one that checks out;
    else loaded (reusing unchanged files' earlier outcomes) and saved. Never fails for the snapshot's sake:
    a snapshot that cannot be written only costs the next start its time."""
    if not directory.is_dir():
        return load_files(directory)  # the library reports the missing directory
    version = code_version()
    files = listing(directory)
    key = snapshot_key(directory, files, version)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        log.info(
            "no snapshot: cannot create %s (%s)", root, exc.strerror or exc
        )  # DATA_DIR problems are reported by storage
        return load_files(directory)
    snapshot = Snapshot(root / key)
    there = (snapshot.path / LIBRARY).exists()
    opened = _open(snapshot, directory, version) if there else None
    if opened is not None:
        return opened
    previous = _previous_outcomes(root, version, snapshot.path)
    outcomes: dict[str, dict[str, Any]] = {}
    library = load_files(directory, reuse=previous, outcomes=outcomes)
    try:
        offsets = save(snapshot.path, library, outcomes, version, replace=there)
        prune(root, keep=snapshot.path)
    except OSError as exc:
        log.warning("snapshot not saved in %s: %s", root, exc.strerror or exc)
        return library
    library.snapshot = snapshot
    cases_file = snapshot.path / CASES
    # The whole cases just parsed build the indexes; then they are let go, read again only when shown.
    library.release = lambda: library.cases.release(
        {case_id: _case_loader(cases_file, *where) for case_id, where in offsets.items()}
    )
    return library
