"""Confirmed examples: the lines of a paste a person confirmed as a case, as evidence for the matcher. Pure.

A Helpful vote (or a pick in Other matches) stores the paste's matched and error-looking lines for the
case, redacted (:func:`redact`) and screened (:func:`refusal`). Back in the matcher's text stage
(:func:`example_lines`) a near-copy of a line one person confirmed is a hint for that case (a candidate,
never a reply on its own); a line two different people, or one reviewer, confirmed counts as a near-copy
of a decisive example (a strong match, which may be replied to). Never ``exact``: that takes a signature.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from bot.matching.knownlines import KnownLine, mask
from bot.matching.signatures import squash
from bot.model.case import Strength
from bot.model.results import MatchResult

LINES_KEPT = 6  # lines stored per confirmation
LINE_CHARS = 300
MIN_CHARS = 20  # shorter lines say too little ("Killed", "ok thanks")
ORDINARY_SIMILARITY = 85  # a line this close to an everyday or healthy line is refused

_ERRORISH = re.compile(
    r"error|fail|fatal|exception|timed? ?out|killed|abort|terminat|xid|panic|unable|cannot|invalid|unexpected"
    r"|lost|exceeded|refused|\bnan\b|segmentation|core dumped|oom|sig(?:kill|term|bus|abrt)|exit ?code|mismatch"
    r"|insufficient|not (?:found|ready|initialized)",
    re.IGNORECASE,
)

# What is redacted before a line is stored or put in a button value, in this order.
_REDACTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Credentials in URLs: scheme://user:password@host
    (re.compile(r"\b([a-z][a-z0-9+.-]{1,20}://)[^\s/:@]{1,200}:[^\s/@]{1,200}@"), r"\1<user>:<redacted>@"),
    (re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE), "Bearer <redacted>"),
    # key=value / key: value for secret-looking keys
    (
        re.compile(
            r"\b((?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|auth)[A-Za-z_]{0,20})(\s{0,3}[=:]\s{0,3})"
            r"[\"']?[^\s\"',;]{1,200}",
            re.IGNORECASE,
        ),
        r"\1\2<redacted>",
    ),
    # Known token shapes: Slack, GitHub, AWS access keys, OpenAI-style and Hugging Face keys, JWTs
    (
        re.compile(
            r"\b(?:xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|gh[pousr]_[A-Za-z0-9]{20,}"
            r"|AKIA[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{20,}"
            r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"
        ),
        "<redacted>",
    ),
    (re.compile(r"\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,200}\.[A-Za-z]{2,20}\b"), "<email>"),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"), "<ip>"),
    # Fully qualified host names (three labels or more, ending in letters)
    (re.compile(r"\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.){2,}[a-z]{2,24}\b", re.IGNORECASE), "<host>"),
)


def looks_like_error(line: str) -> bool:
    """Whether ``line`` reads like an error (not a progress or start-up line)."""
    return _ERRORISH.search(line) is not None


def redact(line: str, hosts: Iterable[str] = ()) -> str:
    """``line`` with credentials, e-mail addresses, IP addresses and host names replaced by placeholders:
    the hosts the paste names (``hosts``, from the suspects) and any fully qualified name."""
    text = line
    for pattern, replacement in _REDACTIONS:
        text = pattern.sub(replacement, text)
    for host in sorted({h for h in hosts if len(h) >= 2}, key=len, reverse=True):
        text = re.sub(rf"(?<![A-Za-z0-9-]){re.escape(host)}(?![A-Za-z0-9-])", "<host>", text, flags=re.IGNORECASE)
    return text


class Ordinary:
    """The ordinary text that guards signatures (everyday chat, healthy training lines, hard-negative
    lines: ``bot.library.ordinary``), masked, for :func:`refusal`."""

    def __init__(self, text: str) -> None:
        self.lines = tuple(mask(squash(line)) for line in text.splitlines() if len(line.strip()) >= 8)

    def near(self, line: str) -> bool:
        found = process.extractOne(mask(line), self.lines, scorer=fuzz.ratio, score_cutoff=ORDINARY_SIMILARITY)
        return found is not None


def refusal(line: str, ordinary: Ordinary) -> str | None:
    """Why ``line`` cannot be an example (None when it can): too short, not an error, or ordinary text."""
    text = squash(line)
    if len(text) < MIN_CHARS:
        return f"shorter than {MIN_CHARS} characters"
    if not _ERRORISH.search(text):
        return "does not look like an error line"
    if ordinary.near(text):
        return "too close to ordinary chat or a healthy log line"
    return None


def lines_to_keep(result: MatchResult, ordinary: Ordinary) -> list[str]:
    """What a confirmation of ``result`` stores: the best match's evidence lines, then the paste's other
    error-looking lines, redacted, screened and capped (``LINES_KEPT`` lines of ``LINE_CHARS``)."""
    hosts = list(result.suspects.hosts) if result.suspects is not None else []
    evidence = [ev.line for ev in result.best.evidence] if result.best is not None else []
    kept: list[str] = []
    for raw in [*evidence, *result.lines]:
        line = redact(raw.strip(), hosts)[:LINE_CHARS]
        if line not in kept and refusal(line, ordinary) is None:
            kept.append(line)
        if len(kept) >= LINES_KEPT:
            break
    return kept


@dataclass(frozen=True, slots=True)
class Confirmed:
    """One stored line of a case with who confirmed it (from storage)."""

    case_id: str
    line: str
    user_id: str


def example_lines(confirmed: Sequence[Confirmed], ordinary: Ordinary, reviewers: Iterable[str] = ()) -> list[KnownLine]:
    """The matcher's known lines for the confirmed examples: decisive when two different people, or one
    reviewer, confirmed the line for the case; a hint otherwise. Lines that fail :func:`refusal` (the
    rules may have tightened since they were stored) are left out."""
    staff = set(reviewers)
    users: dict[tuple[str, str], set[str]] = defaultdict(set)
    for example in confirmed:
        users[(example.case_id, squash(example.line))].add(example.user_id)
    lines = []
    for (case_id, text), who in users.items():
        if refusal(text, ordinary) is not None:
            continue
        sure = len(who) >= 2 or bool(who & staff)
        strength = Strength.DECISIVE if sure else Strength.SUPPORTING
        lines.append(KnownLine(case_id, text, strength, None, confirmed=True))
    return lines
