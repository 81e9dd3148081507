"""Writing a start-up snapshot (``bot.library.snapshot`` reads and checks them): the library as loaded,
each file's outcome and the validated cases, into a directory built aside and renamed into place; and
pruning to the newest ``KEEP``. Kept apart from the reader: what is trusted is decided there."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bot.library.case_store import CaseLibrary, Problem
from bot.matching.signatures import CompiledSignature
from bot.model.summary import CaseSummary

FORMAT = 1
KEEP = 3
LIBRARY = "library.json"  # what a start reads: the library as loaded
FILES = "files.json"  # each file's outcome by content hash: read only to rebuild after a change
CASES = "cases.jsonl"


def _signature_json(sig: CompiledSignature) -> list[Any]:
    return [
        sig.index,
        sig.kind.value,
        sig.pattern,
        sig.strength.value,
        sig.ignore_case,
        sig.fallout,
        sig.literal,
        list(sig.also),
        sig.note,
    ]


def _problem_json(problem: Problem) -> list[str]:
    return [problem.path, problem.field, problem.message, problem.severity]


def _dump(path: Path, data: Any) -> None:
    path.write_bytes(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


def save(
    path: Path,
    library: CaseLibrary,
    outcomes: dict[str, dict[str, Any]],
    version: str,
    *,
    replace: bool = False,
) -> dict[str, tuple[int, int]]:
    """Write ``library.json``, ``files.json`` and ``cases.jsonl`` for ``library`` (``outcomes``: per file
    name, its content hash, its problems and, when it parsed, its case's raw JSON, summary and
    signatures). Returns where each case of the library sits in ``cases.jsonl``. ``replace``: a snapshot
    under the same key did not check out; it is moved aside and removed, never read again."""
    work = Path(tempfile.mkdtemp(prefix=".new-", dir=path.parent))
    try:
        offsets: dict[str, tuple[int, int]] = {}
        with (work / CASES).open("wb") as out:
            for name, outcome in outcomes.items():
                raw = outcome.get("raw")
                if raw is not None:
                    offsets[name] = (out.tell(), len(raw))
                    out.write(raw + b"\n")
        encoded: dict[int, list[Any]] = {}  # each signature encoded once (files and cases share them)

        def encode(sig: CompiledSignature) -> list[Any]:
            row = encoded.get(id(sig))
            if row is None:
                row = encoded[id(sig)] = _signature_json(sig)
            return row

        files = []
        for name, outcome in outcomes.items():
            entry: dict[str, Any] = {
                "name": name,
                "digest": outcome["digest"],
                "problems": [_problem_json(p) for p in outcome["problems"]],
            }
            if name in offsets:
                summary: CaseSummary = outcome["summary"]
                entry["case"] = {
                    "summary": summary.to_json(),
                    "offset": offsets[name][0],
                    "length": offsets[name][1],
                    "signatures": [encode(sig) for sig in outcome["signatures"]],
                }
            files.append(entry)
        by_id = {Path(path).name: case_id for case_id, path in library.paths.items()}
        by_case: dict[str, list[CompiledSignature]] = {}
        for sig in library.signatures:
            by_case.setdefault(sig.case_id, []).append(sig)
        file_of = {case_id: by_id_name for by_id_name, case_id in by_id.items()}
        cases = [
            [
                file_of[case_id],
                *offsets[file_of[case_id]],
                library.summaries[case_id].to_json(),
                [encode(sig) for sig in by_case.get(case_id, [])],
            ]
            for case_id in library.cases
            if file_of.get(case_id) in offsets
        ]
        document = {
            "format": FORMAT,
            "version": version,
            "cases": cases,
            "problems": [_problem_json(p) for p in library.problems],
        }
        _dump(work / LIBRARY, document)
        _dump(work / FILES, {"format": FORMAT, "version": version, "files": files})
        if replace and path.exists():
            aside = Path(tempfile.mkdtemp(prefix=".bad-", dir=path.parent))
            path.rename(aside / "snapshot")
            shutil.rmtree(aside, ignore_errors=True)
        try:
            work.rename(path)
        except OSError:
            if not (path / LIBRARY).exists():
                raise
            shutil.rmtree(work, ignore_errors=True)  # another process saved the same snapshot first
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return {case_id: offsets[name] for name, case_id in by_id.items() if name in offsets}


def prune(root: Path, keep: Path) -> None:
    """Remove all but the newest ``KEEP`` snapshots (never ``keep``, the one just made)."""
    snapshots = sorted(
        (p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for old in snapshots[KEEP:]:
        if old != keep:
            shutil.rmtree(old, ignore_errors=True)
