"""Case drafts: proposed signatures from a paste's error lines, the form's fields checked like a case file,
and the case file a draft becomes (``incident-bot cases draft export``).

A draft's signatures are written one per line: a plain line is an exact string, ``re:`` starts an RE2
pattern, and a leading ``!`` makes it decisive (proof on its own); without it a signature is a hint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.library.case_store import Problem, parse_case, screen_case
from bot.library.safety import safety_problems
from bot.matching.examples import PLACEHOLDERS, looks_like_error
from bot.matching.redaction import redact
from bot.matching.secrets import secrets_in
from bot.model.ids import canonical_id

FIELDS = ("title_en", "title_ko", "summary_en", "summary_ko", "runbook_en", "runbook_ko", "signatures")
FIELD_CHARS = {"title_en": 200, "title_ko": 200, "signatures": 3000}
DEFAULT_CHARS = 3000
MAX_SIGNATURES = 12
MAX_PROPOSALS = 5
_PREFIXES = (
    # syslog / ISO timestamps, then an optional host and program
    re.compile(r"^(?:[A-Z][a-z]{2} {1,2}\d{1,2} \d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}\S*)\s+"),
    re.compile(r"^\[?rank\s?\d{1,6}\]?:\s*", re.IGNORECASE),
    re.compile(r"^<host>(?::\d{1,8}:\d{1,8})?\s*(?:\[\d{1,4}\])?\s*"),
    # a syslog host before its program: "gpu-a17 kernel:", "node-3 fabricd[311]:"
    re.compile(r"^[A-Za-z0-9_.<>-]{1,64}\s+(?=(?:kernel|[A-Za-z0-9_.-]{1,40}\[\d{1,8}\]):)"),
    re.compile(r"^[A-Za-z0-9_.-]{1,40}\[\d{1,8}\]:\s*"),
)
_RE_SPECIAL = re.compile(r"[\\.^$*+?{}\[\]|()]")  # what RE2 reads as syntax (spaces and dashes are literal)
# What redaction left in place of a host, address or credential (``bot.matching.examples``), and numbers:
# the parts of a line that differ from paste to paste, free in a proposed pattern.
_PLACEHOLDER = "|".join(re.escape(p) for p in PLACEHOLDERS)
_FREE_PARTS = re.compile(rf"({_PLACEHOLDER}|\d{{1,20}})")
_UNSAID = re.compile(_PLACEHOLDER)  # what a title says as "…"
_PLACEHOLDER_FREE = r"\S{1,100}"  # a placeholder stands for one token of at most 100 characters
_DIGITS_FREE = r"\d{1,20}"
TITLE_CHARS = 80


@dataclass(frozen=True, slots=True)
class Proposal:
    text: str  # as the form shows it (``re:`` ... for a pattern)
    literal: int  # characters of literal text: most specific first


def _core(line: str) -> str:
    """``line`` without the timestamp, host, rank and program prefixes that differ from paste to paste."""
    text = line.strip()
    for _ in range(4):
        before = text
        for prefix in _PREFIXES:
            text = prefix.sub("", text, count=1).strip()
        if text == before:
            break
    return text[:200].strip()


def _as_signature(core: str) -> str:
    """An exact string, or an RE2 pattern when the line has numbers or redaction placeholders: each
    number free (``\\d{1,20}``), each placeholder one bounded token (``\\S{1,100}``: the host, address or
    credential it hid), the rest escaped."""
    parts = _FREE_PARTS.split(core)
    if len(parts) == 1:
        return core
    pattern = []
    for number, part in enumerate(parts):
        if number % 2 == 0:
            pattern.append(_RE_SPECIAL.sub(r"\\\g<0>", part))
        else:
            pattern.append(_DIGITS_FREE if part[0].isdigit() else _PLACEHOLDER_FREE)
    return "re:" + "".join(pattern)


def _literal(core: str) -> int:
    """Characters of ``core`` a proposal keeps as they are (numbers and placeholders are free)."""
    return len(_FREE_PARTS.sub("", core))


def propose_title(lines: Iterable[str]) -> str:
    """A title from the paste's top error line (the first that looks like one), without its prefixes,
    redaction placeholders as "…", cut to ``TITLE_CHARS`` at a word; "" when there is none."""
    for line in lines:
        core = " ".join(_UNSAID.sub("…", _core(line)).split())
        if len(core) < 12 or not looks_like_error(core):
            continue
        if len(core) <= TITLE_CHARS:
            return core
        cut = core[: TITLE_CHARS - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
        return f"{cut}…"
    return ""


def parse_signature(line: str) -> dict[str, Any]:
    """One form line as a case file's signature."""
    text = line.strip()
    decisive = text.startswith("!")
    text = text[1:].strip() if decisive else text
    kind = "regex" if text.startswith("re:") else "exact"
    pattern = text[3:].strip() if kind == "regex" else text
    return {"kind": kind, "pattern": pattern, "strength": "decisive" if decisive else "supporting"}


def draft_case(fields: dict[str, Any], case_id: str, author: str = "", permalink: str = "") -> dict[str, Any]:
    """The case file a draft becomes (``case_id`` like ``LOC-0001``)."""

    def pair(name: str) -> dict[str, str]:
        return {lang: text for lang in ("en", "ko") if (text := str(fields.get(f"{name}_{lang}") or "").strip())}

    steps_en = [s.strip() for s in str(fields.get("runbook_en") or "").splitlines() if s.strip()]
    steps_ko = [s.strip() for s in str(fields.get("runbook_ko") or "").splitlines() if s.strip()]
    count = max(len(steps_en), len(steps_ko))
    runbook = []
    for number in range(count):
        stage = "confirm" if number == 0 else ("verify" if number == count - 1 else "fix")
        text = {"en": steps_en[number]} if number < len(steps_en) else {}
        if number < len(steps_ko):
            text["ko"] = steps_ko[number]
        runbook.append({"stage": stage, "text": text})
    lines = [line for line in str(fields.get("signatures") or "").splitlines() if line.strip()]
    case: dict[str, Any] = {
        "id": case_id,
        "title": pair("title"),
        "summary": pair("summary"),
        "review": {"written_by": author or None, "reviewed_at": None, "reviewed_by": None},
        "signatures": [parse_signature(line) for line in lines[:MAX_SIGNATURES]],
        "runbook": runbook,
    }
    notes = [f"drafted in Slack from {permalink}" if permalink else "drafted from a paste no case explained"]
    if fields.get("suspects"):
        notes.append(f"suspects at the time: {fields['suspects']}")
    case["review_notes"] = notes
    return case


# Terminal escape sequences (CSI, OSC, and two-byte ESC ones) and the other C0/C1 control characters: a
# draft's fields are printed by `cases drafts` and written into case files.
_ESCAPES = re.compile(r"\x1b\[[0-?]{0,40}[ -/]{0,10}[@-~]|\x1b\][^\x07\x1b]{0,4000}(?:\x07|\x1b\\)?|\x1b[@-_]?")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain_field(value: object) -> object:
    """A form field without terminal control sequences (strings only; anything else as it is)."""
    if not isinstance(value, str):
        return value
    return _CONTROLS.sub("", _ESCAPES.sub("", value))


def draft_problems(fields: dict[str, Any]) -> list[Problem]:
    """What is wrong with a draft's fields, checked like a case file (signatures compiled with RE2 and
    screened against ordinary text); ``field`` names the form field (``signatures`` with a line
    number where one line is at fault)."""
    found: list[Problem] = []
    for name in FIELDS:
        value = fields.get(name)
        if value is not None and (not isinstance(value, str) or len(value) > FIELD_CHARS.get(name, DEFAULT_CHARS)):
            found.append(Problem("draft", name, f"at most {FIELD_CHARS.get(name, DEFAULT_CHARS):,} characters"))
    if found:
        return found
    if not (str(fields.get("title_en") or "").strip() or str(fields.get("title_ko") or "").strip()):
        found.append(Problem("draft", "title_en", "a title in English or Korean"))
    if not (str(fields.get("summary_en") or "").strip() or str(fields.get("summary_ko") or "").strip()):
        found.append(Problem("draft", "summary_en", "a summary in English or Korean"))
    lines = [line for line in str(fields.get("signatures") or "").splitlines() if line.strip()]
    if len(lines) > MAX_SIGNATURES:
        found.append(Problem("draft", "signatures", f"at most {MAX_SIGNATURES} signatures"))
    for number, line in enumerate(lines, start=1):
        # A credential typed or pasted into a signature would be written into a case file.
        for rule_id, _, _ in secrets_in(line):
            message = f"holds what looks like a credential ({rule_id}): replace it with <redacted>"
            found.append(Problem("draft", f"signatures (line {number})", message))
            break
    if found:
        return found
    raw = json.dumps(draft_case(fields, "DRAFT-0001")).encode()
    case, compiled, problems = parse_case(raw, "draft")
    if case is not None:
        problems = [p for p in problems if p.severity == "error"] + screen_case(case, compiled, "draft")
        problems += safety_problems(case, "draft")  # the runbook text is held to the SAFETY rules too
    for problem in problems:
        if problem.severity != "error":
            continue
        index = re.match(r"signatures\[(\d+)\]", problem.field)
        where = f"signatures (line {int(index.group(1)) + 1})" if index else problem.field
        found.append(Problem("draft", where, problem.message.replace("DRAFT-0001 ", "")))
    return found


def propose_signatures(lines: Iterable[str]) -> list[str]:
    """Signatures proposed from a paste's error lines (already redacted): each line without its
    timestamp, host and rank prefixes, numbers left free; only those that pass every check a case file's
    signature passes; most specific first, at most ``MAX_PROPOSALS``."""
    proposals: dict[str, Proposal] = {}
    for line in lines:
        core = _core(redact(line))  # already redacted by the caller; redacted again, never trusted
        if len(core) < 12 or not looks_like_error(core):
            continue
        text = _as_signature(core)
        proposals.setdefault(text, Proposal(text, _literal(core)))
    ranked = sorted(proposals.values(), key=lambda p: (-p.literal, p.text))
    kept: list[str] = []
    for proposal in ranked:
        fields = {"title_en": "draft", "summary_en": "draft", "signatures": proposal.text}
        if not draft_problems(fields):
            kept.append(proposal.text)
        if len(kept) >= MAX_PROPOSALS:
            break
    return kept


def next_local_id(taken: Iterable[str], prefix: str) -> str:
    """The first ``PREFIX-NNNN`` after every id with that prefix in ``taken``."""
    numbers = [0]
    for case_id in taken:
        key = canonical_id(case_id)
        if key is not None and key.startswith(f"{prefix.upper()}-"):
            numbers.append(int(key.split("-", 1)[1]))
    return f"{prefix.upper()}-{max(numbers) + 1:04d}"


def taken_ids(names: Sequence[str]) -> list[str]:
    """Case ids from file names (``LOC-0003.json``)."""
    return [name.rsplit(".", 1)[0] for name in names]
