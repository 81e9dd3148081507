"""Reading and validating the case directory; the case library indexed by id.

A bad file is reported with its path and field and never stops the good cases from loading.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from bot.matching.signatures import CompiledSignature, SignatureError, compile_signature, squash
from bot.model.case import LANGS, Case
from bot.model.ids import canonical_id

MAX_CASE_FILE_BYTES = 2 << 20


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
    """The loaded cases, their compiled signatures, and every problem found while loading."""

    cases: dict[str, Case] = field(default_factory=dict)
    signatures: list[CompiledSignature] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    paths: dict[str, str] = field(default_factory=dict)

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


def parse_case(raw: bytes, path: str) -> tuple[Case | None, list[CompiledSignature], list[Problem]]:
    """Validate one file's bytes. Returns the case (None if unusable), its signatures and its problems."""
    if len(raw) > MAX_CASE_FILE_BYTES:
        return None, [], [Problem(path, "", f"file is {len(raw)} bytes, over the {MAX_CASE_FILE_BYTES} cap")]
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return None, [], [Problem(path, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})")]
    except json.JSONDecodeError as exc:
        return None, [], [Problem(path, "", f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")]
    if not isinstance(data, dict):
        return None, [], [Problem(path, "", f"expected a JSON object, got {type(data).__name__}")]
    try:
        case = Case.model_validate(data)
    except ValidationError as exc:
        return None, [], [Problem(path, _field_path(err["loc"]), err["msg"]) for err in exc.errors()]
    key = canonical_id(case.id)
    if key is None:
        return None, [], [Problem(path, "id", f"{case.id!r} is not an id like IL-0427")]
    if key != case.id:
        return None, [], [Problem(path, "id", f"{case.id!r} should be written {key!r}")]
    compiled: list[CompiledSignature] = []
    problems: list[Problem] = []
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
    if problems:
        return None, [], problems
    return case, compiled, quality_warnings(case, path)


def load_library(directory: Path) -> CaseLibrary:
    """Load every ``*.json`` under ``directory`` (sorted by name; later duplicates are rejected).

    Never raises for bad content: problems are collected on the returned library. A missing or unreadable
    directory is itself a problem.
    """
    library = CaseLibrary()
    if not directory.is_dir():
        library.problems.append(Problem(str(directory), "", "not a directory"))
        return library
    for path in sorted(directory.glob("*.json")):
        shown = str(path)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            library.problems.append(Problem(shown, "", f"cannot read: {exc.strerror}"))
            continue
        case, compiled, problems = parse_case(raw, shown)
        library.problems.extend(problems)
        if case is None:
            continue
        if case.id in library.cases:
            first = library.paths[case.id]
            library.problems.append(Problem(shown, "id", f"duplicate id {case.id}, first defined in {first}"))
            continue
        library.cases[case.id] = case
        library.paths[case.id] = shown
        library.signatures.extend(compiled)
    return library
