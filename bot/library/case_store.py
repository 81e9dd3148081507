"""Reading and validating the case directory; the case library indexed by id.

A bad file is reported with its path and field and never stops the good cases from loading: nothing in a
file can make loading raise. A case whose signature could silence or flood the bot (a catch-all, an
oversized regex, one that hits ordinary text) is rejected with the reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.library.lazy import LazyCases
from bot.library.ordinary import ordinary_text
from bot.library.pattern_cost import slow_patterns
from bot.matching.patterns import shape_of
from bot.matching.signatures import (
    CompiledSignature,
    SignatureError,
    SignatureSets,
    compile_signature,
    screen,
    squash,
)
from bot.model.case import LANGS, Case, SignatureKind
from bot.model.ids import canonical_id
from bot.model.summary import CaseSummary

MAX_CASE_FILE_BYTES = 2 << 20
# What one case's signatures may cost the matcher: each regex is already held under RE2's per-pattern
# limit, but hundreds of them in one file would still cost hundreds of MB in the RE2 sets. The bundled
# cases have at most 10 signatures and an estimated size of at most 836 (RE2 instructions, about).
MAX_SIGNATURES_PER_CASE = 32
MAX_CASE_PATTERN_SIZE = 20_000
# Unicode classes (\pL) are what makes RE2 sets big (a class is about 1,200 instructions): the whole
# library's signatures that use them share this budget (about 20 signatures like \pL{8}).
MAX_LIBRARY_UNICODE_SIZE = 200_000


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    field: str
    message: str
    severity: str = "error"  # "error" stops the file loading; "warning" is advice for authors

    def __str__(self) -> str:
        where = f"{self.path}: {self.field}" if self.field else self.path
        return f"{self.severity}: {where}: {self.message}"


@dataclass
class CaseLibrary:
    """The loaded cases, their compiled signatures, and every problem found while loading. ``sets`` are
    the automatons of exactly ``signatures`` (built while screening), which the matcher reuses.
    ``cases`` loads a case in full on first use; ``summaries`` is what lists and rankings need.
    ``snapshot`` is where this library's saved indexes live (None without one)."""

    cases: LazyCases = field(default_factory=LazyCases)
    signatures: Sequence[CompiledSignature] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    paths: dict[str, str] = field(default_factory=dict)
    sets: SignatureSets | None = None
    snapshot: Any | None = None  # bot.library.snapshot.Snapshot

    # Called once the indexes are built: lets go of whole cases that the snapshot can read again.
    release: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.cases, LazyCases):  # a plain mapping of whole cases (tests build these)
            self.cases = LazyCases(self.cases)

    def release_cases(self) -> None:
        if self.release is not None:
            self.release()
            self.release = None

    @property
    def summaries(self) -> Mapping[str, CaseSummary]:
        return self.cases.summaries

    def get(self, raw_id: str) -> Case | None:
        key = canonical_id(raw_id)
        return self.cases.get(key) if key else None

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases.values())

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def broken_paths(self) -> set[str]:
        return {p.path for p in self.errors}


def _field_path(loc: Iterable[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def quality_warnings(case: Case, path: str) -> list[Problem]:
    """What a bundled case should have but a library case may lack: both languages, a signature."""
    found: list[Problem] = []
    for name in ("title", "summary", "lessons"):
        text = getattr(case, name)
        for lang in LANGS:
            if not text.get(lang):
                found.append(Problem(path, f"{name}.{lang}", "missing", "warning"))
    for lang in LANGS:
        if not case.remediation or any(not step.text.get(lang) for step in case.remediation):
            found.append(Problem(path, f"remediation[].text.{lang}", "missing", "warning"))
    if not case.signatures:
        found.append(Problem(path, "signatures", "no signature: the matcher can only use case text", "warning"))
    if not case.failure_class:
        found.append(Problem(path, "failure_class", "missing", "warning"))
    return found


def _decode(raw: bytes, path: str) -> tuple[object, list[Problem]]:
    if len(raw) > MAX_CASE_FILE_BYTES:
        return None, [Problem(path, "", f"file is {len(raw)} bytes, over the {MAX_CASE_FILE_BYTES} cap")]
    try:
        return json.loads(raw.decode("utf-8")), []
    except UnicodeDecodeError as exc:
        return None, [Problem(path, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})")]
    except json.JSONDecodeError as exc:
        return None, [Problem(path, "", json_problem(exc))]
    except RecursionError:
        return None, [Problem(path, "", "invalid JSON: nested too deeply")]
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        return None, [Problem(path, "", f"invalid JSON: {exc}")]


def parse_case(raw: bytes, path: str) -> tuple[Case | None, list[CompiledSignature], list[Problem]]:
    """Validate one file's bytes. Returns the case (None if unusable), its signatures and its problems.
    Never raises. (Screening against ordinary text needs the whole library: ``load_library`` and
    ``screen_case`` do it.)"""
    data, problems = _decode(raw, path)
    if problems:
        return None, [], problems
    if not isinstance(data, dict):
        return None, [], [Problem(path, "", f"expected a JSON object, got {type(data).__name__}")]
    try:
        case = Case.model_validate(data)
    except ValidationError as exc:
        return None, [], [Problem(path, _field_path(err["loc"]), err["msg"]) for err in exc.errors()]
    except RecursionError:
        return None, [], [Problem(path, "", "nested too deeply")]
    key = canonical_id(case.id)
    if key is None:
        return None, [], [Problem(path, "id", f"{case.id!r} is not an id like IL-0427")]
    if key != case.id:
        return None, [], [Problem(path, "id", f"{case.id!r} should be written {key!r}")]
    for name in ("title", "summary"):
        if not any(getattr(case, name).get(lang) for lang in LANGS):
            problems.append(Problem(path, name, "missing in both languages (one language is enough)"))
    if len(case.signatures) > MAX_SIGNATURES_PER_CASE:
        return (
            None,
            [],
            [
                Problem(
                    path,
                    "signatures",
                    f"{len(case.signatures)} signatures, over the limit of {MAX_SIGNATURES_PER_CASE} per case",
                )
            ],
        )
    # Every pattern the matcher runs counts: the regex signatures and every ``also`` co-occurrence pattern.
    size = sum(shape_of(s.pattern).size for s in case.signatures if s.kind is SignatureKind.REGEX)
    size += sum(shape_of(pattern).size for s in case.signatures for pattern in s.also)
    if size > MAX_CASE_PATTERN_SIZE:
        return (
            None,
            [],
            [
                Problem(
                    path,
                    "signatures",
                    f"the regex and also patterns together are too large for the matcher (about {size:,} RE2"
                    f" instructions, over the limit of {MAX_CASE_PATTERN_SIZE:,} per case)",
                )
            ],
        )
    compiled: list[CompiledSignature] = []
    for index, signature in enumerate(case.signatures):
        try:
            sig = compile_signature(case.id, index, signature)
        except SignatureError as exc:
            problems.append(Problem(path, f"signatures[{index}].pattern", str(exc)))
            continue
        compiled.append(sig)
        for number, example in enumerate(signature.examples):
            if not sig.search(squash(example)):
                problems.append(
                    Problem(path, f"signatures[{index}].examples[{number}]", "the signature does not hit it")
                )
    if not problems:  # timed only once everything else holds (a probe costs milliseconds)
        problems = [Problem(path, where, message) for where, message in slow_patterns(case)]
    if problems:
        return None, [], problems
    return case, compiled, quality_warnings(case, path)


def screening_problems(sets: SignatureSets, paths: dict[str, str]) -> dict[str, list[Problem]]:
    """Per case id, the problems that reject it: a signature that hits ordinary text (any signature) or a
    hard-negative paste (a decisive one), and a signature RE2 could not fit into a set."""
    ordinary, negatives = ordinary_text()
    found: dict[str, list[Problem]] = {}
    for index, reason in screen(sets, ordinary, negatives).items():
        sig = sets.signatures[index]
        found.setdefault(sig.case_id, []).append(
            Problem(paths.get(sig.case_id, sig.case_id), f"signatures[{sig.index}].pattern", reason)
        )
    for dropped in sets.dropped:
        sig = dropped.signature
        where = paths.get(sig.case_id, sig.case_id)
        found.setdefault(sig.case_id, []).append(Problem(where, f"signatures[{sig.index}].pattern", dropped.reason))
    return found


def screen_case(case: Case, compiled: list[CompiledSignature], path: str) -> list[Problem]:
    """The screening problems of one case on its own (``sync`` checks each fetched case with this)."""
    if not compiled:
        return []
    return screening_problems(SignatureSets(compiled), {case.id: path}).get(case.id, [])


class CasesUnavailable(Exception):
    """The case directory is missing or holds no loadable case: every command that reads cases stops."""


def require_cases(library: CaseLibrary, directory: Path) -> CaseLibrary:
    """``library`` when it holds at least one case; else raises :class:`CasesUnavailable` with one line
    saying why and what to run."""
    if len(library):
        return library
    if directory.exists() and not directory.is_dir():
        raise CasesUnavailable(
            f"case directory {directory} is a file, not a directory (set CASES_DIR or pass --cases DIR)"
        )
    if not directory.is_dir():
        raise CasesUnavailable(f"case directory {directory} does not exist (set CASES_DIR or pass --cases DIR)")
    files = sum(1 for _ in directory.glob("*.json"))
    if not files:
        raise CasesUnavailable(f"no case files (*.json) in {directory} (set CASES_DIR or pass --cases DIR)")
    raise CasesUnavailable(
        f"none of the {files} case files in {directory} loads "
        f"({len(library.errors)} errors; `incident-bot cases validate {directory}` lists them)"
    )


def json_problem(exc: json.JSONDecodeError) -> str:
    """``invalid JSON: invalid control character at line 1, column 42`` (``exc.msg`` may end in "at")."""
    message = exc.msg.removesuffix(" at").rstrip(": ")
    return f"invalid JSON: {message[:1].lower()}{message[1:]} at line {exc.lineno}, column {exc.colno}"


def read_case_file(path: Path) -> bytes:
    """The bytes of a case file, read only when it is a regular file (a FIFO would block forever, a link
    to ``/dev/zero`` never end) and at most ``MAX_CASE_FILE_BYTES`` + 1 of them (a longer file is reported
    by its size). Raises ValueError naming what it is instead, OSError when it cannot be read."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # opening a FIFO must not wait for a writer
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValueError("not a regular file (a FIFO, device or socket): case files must be regular files")
        return handle.read(MAX_CASE_FILE_BYTES + 1)


def _file_order(paths: list[Path]) -> list[Path]:
    return sorted(paths, key=lambda path: path.name)


def _unicode_size(compiled: list[CompiledSignature]) -> int:
    return sum(shape_of(sig.pattern).size for sig in compiled if "\\p" in sig.pattern or "\\P" in sig.pattern)


def _within_unicode_budget(chosen: dict[str, Any], problems: list[Problem]) -> None:
    """Drop the cases past the library's budget for Unicode-class signatures, in file order: each costs
    the RE2 sets about 240 bytes per estimated instruction, so many small files could still add up to
    gigabytes (the bundled cases use none)."""
    used = 0
    for case_id, (path, _, _, compiled) in sorted(chosen.items(), key=lambda item: item[1][0].name):
        size = _unicode_size(compiled)
        if size and used + size > MAX_LIBRARY_UNICODE_SIZE:
            problems.append(
                Problem(
                    str(path),
                    "signatures",
                    f"the library's Unicode-class signatures (\\p…) are over their budget of "
                    f"{MAX_LIBRARY_UNICODE_SIZE:,} estimated RE2 instructions; this case would add {size:,}",
                )
            )
            del chosen[case_id]
            continue
        used += size


def load_library(directory: Path) -> CaseLibrary:
    """Load every ``*.json`` under ``directory`` (``bot.library.snapshot.load_with_snapshot`` does the same
    through the start-up snapshot). See :func:`load_files`."""
    return load_files(directory)


def load_files(
    directory: Path, reuse: Mapping[str, Any] | None = None, outcomes: dict[str, dict[str, Any]] | None = None
) -> CaseLibrary:
    """Load every ``*.json`` under ``directory``. When two files claim one id, the file named after the
    id wins (``IL-0414.json`` over ``DUP.json``); otherwise the first by name; the other is reported.

    ``reuse``: earlier outcomes by content hash (a file whose bytes are unchanged is not parsed and
    checked again); ``outcomes``: filled per file name with its content hash, problems and, when it
    parsed, its raw JSON, summary and signatures (what the snapshot saves).

    Never raises for bad content: problems are collected on the returned library. A missing or unreadable
    directory is itself a problem.
    """
    library = CaseLibrary()
    if not directory.is_dir():
        library.problems.append(Problem(str(directory), "", "not a directory"))
        return library
    parsed: list[tuple[Path, CaseSummary, Any, list[CompiledSignature]]] = []
    for path in _file_order(list(directory.glob("*.json"))):
        try:
            raw = read_case_file(path)
        except OSError as exc:
            library.problems.append(Problem(str(path), "", f"cannot read: {exc.strerror or exc}"))
            continue
        except ValueError as exc:
            library.problems.append(Problem(str(path), "", str(exc)))
            continue
        digest = hashlib.blake2b(raw, digest_size=16).hexdigest()
        earlier = reuse.get(digest) if reuse is not None else None
        if earlier is not None:
            summary, compiled = earlier.summary, earlier.signatures
            problems = [Problem(str(path), p.field, p.message, p.severity) for p in earlier.problems]
            case: Any = _loader(earlier.raw) if earlier.raw is not None else None
            raw = earlier.raw if earlier.raw is not None else raw
        else:
            case, compiled, problems = parse_case(raw, str(path))
            summary = CaseSummary.of(case) if case is not None else None
        library.problems.extend(problems)
        if outcomes is not None:
            outcomes[path.name] = {
                "digest": digest,
                "problems": problems,
                "raw": raw if summary is not None else None,
                "summary": summary,
                "signatures": compiled,
            }
        if summary is not None and case is not None:
            parsed.append((path, summary, case, compiled))
    chosen: dict[str, tuple[Path, CaseSummary, Any, list[CompiledSignature]]] = {}
    for entry in sorted(parsed, key=lambda item: (item[0].stem != item[1].id, item[0].name)):
        path, summary, _, _ = entry
        if summary.id in chosen:
            first = chosen[summary.id][0]
            library.problems.append(Problem(str(path), "id", f"duplicate id {summary.id}, also defined in {first}"))
            continue
        chosen[summary.id] = entry
    _within_unicode_budget(chosen, library.problems)
    paths = {case_id: str(entry[0]) for case_id, entry in chosen.items()}
    signatures = [sig for _, _, _, compiled in chosen.values() for sig in compiled]
    sets = SignatureSets(signatures)
    rejected = screening_problems(sets, paths)
    for case_id, problems in rejected.items():
        library.problems.extend(problems)
        del chosen[case_id]
    kept: list[CompiledSignature] = []
    for case_id, (path, summary, case, compiled) in sorted(chosen.items(), key=lambda item: item[1][0].name):
        if isinstance(case, Case):
            library.cases.put(case, summary)
        else:
            library.cases.put_lazy(summary, case)
        library.paths[case_id] = str(path)
        kept.extend(compiled)
    library.signatures = kept
    library.sets = sets if not rejected else SignatureSets(kept)
    return library


def _loader(raw: bytes) -> Any:
    """Reads a case checked earlier from its raw JSON when it is first used."""

    def load() -> Case:
        return Case.model_validate_json(raw)

    return load
