"""Confirmed examples: the lines of a paste a person confirmed as a case, as evidence for the matcher. Pure.

A Helpful vote (or a pick in Other matches) stores the paste's matched and error-looking lines for the
case, redacted (:func:`redact`) and screened (:func:`refusal`). Back in the matcher's text stage
(:func:`example_lines`) a near-copy of a line one person confirmed is a hint for that case (a candidate,
never a reply on its own); a line two different people, or one reviewer, confirmed counts as a near-copy
of a decisive example (a strong match, which may be replied to). Never ``exact``: that takes a signature.
Lines are compared by their masked form (numbers as 0): the same failure on another rank, device or
address is the same line.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from rapidfuzz import fuzz, process

from bot.matching.knownlines import XID_CODE, KnownLine, mask
from bot.matching.ranking import MatchConfig
from bot.matching.redaction import hosts_in, redact
from bot.matching.signatures import squash
from bot.model.case import Strength
from bot.model.results import MatchResult

LINES_KEPT = 6  # lines stored per confirmation
LINE_CHARS = 300
MIN_CHARS = 20  # shorter lines say too little ("Killed", "ok thanks")
ORDINARY_SIMILARITY = 85  # a line this close to an everyday or healthy line is refused
# A line must name at least this many things beyond the generic vocabulary (see ``Ordinary.specific``):
# "Segmentation fault (core dumped)" or "ERROR: job failed with exit code 1" name none.
MIN_SPECIFIC = 2
# A word in at least this share of the case texts (and at least COMMON_FLOOR of them) is common to many
# failures, so it tells none of them apart.
COMMON_SHARE = 0.25
COMMON_FLOOR = 3
NEAR_SIMILARITY = MatchConfig().fuzzy_floor  # what the matcher's text stage calls a near-copy
NEAR_COVERAGE = 0.6

_ERRORISH = re.compile(
    r"error|fail|fatal|exception|timed? ?out|killed|abort|terminat|xid|panic|unable|cannot|invalid|unexpected"
    r"|lost|exceeded|refused|\bnan\b|segmentation|core dumped|oom|sig(?:kill|term|bus|abrt)|exit ?code|mismatch"
    r"|insufficient|not (?:found|ready|initialized)",
    re.IGNORECASE,
)
# The error vocabulary itself, as words ("failed", "errors", "aborted", "timeout"): what makes a line look
# like an error says nothing about which one.
_ERROR_WORD = re.compile(rf"(?:{_ERRORISH.pattern})[a-z]{{0,4}}", re.IGNORECASE)
# English function words: they carry no evidence whatever the corpus says.
_FUNCTION_WORDS = frozenset(
    """
    about above across after again against all almost also although always among and another any anyone
    anything are around because been before being below between both but can could did does doing done
    down during each either else enough even ever every everyone everything few for from further had has
    have having her here hers herself him himself his how however into its itself just least less many
    may might more most much must neither never nobody none nor not nothing now off once one only onto
    other others our ours ourselves out over own per please rather same several shall she should since
    some someone something somewhere still such than that the their theirs them themselves then there
    these they this those though through thus too toward under until upon very was were what whatever
    when whenever where whether which while who whoever whom whose why will with within without would yet
    you your yours yourself
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_WORD = re.compile(r"(?<![a-z0-9])[a-z][a-z0-9]{2,}")
PLACEHOLDERS = ("<host>", "<ip>", "<email>", "<user>", "<redacted>")
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS))


def looks_like_error(line: str) -> bool:
    """Whether ``line`` reads like an error (not a progress or start-up line)."""
    return _ERRORISH.search(line) is not None


def words(text: str) -> set[str]:
    """The words of ``text`` as the screen counts them: lower case, three characters or more, starting
    with a letter (``gpu-doctor`` is ``gpu`` and ``doctor``); placeholders are not words."""
    return set(_WORD.findall(_PLACEHOLDER.sub(" ", text.lower())))


def common_words(texts: Iterable[str], share: float = COMMON_SHARE, floor: int = COMMON_FLOOR) -> frozenset[str]:
    """The words found in at least ``share`` of ``texts`` (and in at least ``floor`` of them)."""
    counts: Counter[str] = Counter()
    total = 0
    for text in texts:
        total += 1
        counts.update(words(text))
    needed = max(floor, math.ceil(share * total))
    return frozenset(word for word, count in counts.items() if count >= needed)


@dataclass(frozen=True)
class Ordinary:
    """The ordinary text that guards signatures (everyday chat, healthy training lines, hard-negative
    lines: ``bot.library.ordinary``), masked, and the generic vocabulary for :func:`refusal`: every word of
    that text, the words ``common`` to many case texts (:func:`common_words`), the error vocabulary and
    English function words."""

    text: str
    common: frozenset[str] = frozenset()
    lines: tuple[str, ...] = field(init=False, repr=False)
    vocabulary: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        kept = [line for line in self.text.splitlines() if len(line.strip()) >= 8]
        object.__setattr__(self, "lines", tuple(mask(squash(line)) for line in kept))
        object.__setattr__(self, "vocabulary", frozenset(words(self.text)) | _FUNCTION_WORDS)

    def with_common(self, common: frozenset[str]) -> Ordinary:
        """This screen with ``common`` as the case texts' common words."""
        return self if common == self.common else replace(self, common=common)

    def near(self, line: str) -> bool:
        """Whether ``line`` is close to ordinary text: alike as a whole, or alike the way the matcher's text
        stage takes a paste for a near-copy (:func:`resembles`: partial, covering most of it), so that
        no ordinary line could ever be answered through it."""
        masked = mask(line)
        if process.extractOne(masked, self.lines, scorer=fuzz.ratio, score_cutoff=ORDINARY_SIMILARITY):
            return True
        alike = process.extract(masked, self.lines, scorer=fuzz.partial_ratio, score_cutoff=NEAR_SIMILARITY, limit=None)
        return any(min(len(found), len(masked)) / len(masked) >= NEAR_COVERAGE for found, _, _ in alike)

    def specific(self, line: str) -> list[str]:
        """What ``line`` names beyond the generic vocabulary: its other words, and its Xid codes (the code
        names the fault, as in :func:`bot.matching.knownlines.mask`)."""
        found = sorted(
            word
            for word in words(line)
            if word not in self.vocabulary and word not in self.common and not _ERROR_WORD.fullmatch(word)
        )
        return found + [f"xid {code}" for code in dict.fromkeys(XID_CODE.findall(line))]


def refusal(line: str, ordinary: Ordinary) -> str | None:
    """Why ``line`` cannot be an example (None when it can): too short, not an error, ordinary text, or
    generic (it names fewer than ``MIN_SPECIFIC`` things beyond the generic vocabulary: any failure
    prints such a line, so it is evidence for none)."""
    text = squash(line)
    if len(text) < MIN_CHARS:
        return f"shorter than {MIN_CHARS} characters"
    if not _ERRORISH.search(text):
        return "does not look like an error line"
    if ordinary.near(text):
        return "too close to ordinary chat or a healthy log line"
    if len(ordinary.specific(text)) < MIN_SPECIFIC:
        return "too generic: it names nothing specific to one failure"
    return None


def lines_to_keep(result: MatchResult, ordinary: Ordinary) -> list[str]:
    """What a confirmation of ``result`` stores: the best match's evidence lines, then the paste's other
    error-looking lines, redacted, screened and capped (``LINES_KEPT`` lines of ``LINE_CHARS``). Every
    host any of them names in a host position is redacted in all of them."""
    evidence = [ev.line for ev in result.best.evidence] if result.best is not None else []
    candidates = [raw.strip() for raw in [*evidence, *result.lines]]
    hosts = hosts_in(candidates) | (set(result.suspects.hosts) if result.suspects is not None else set())
    kept: list[str] = []
    for raw in candidates:
        line = redact(raw, hosts)[:LINE_CHARS]
        if line not in kept and refusal(line, ordinary) is None:
            kept.append(line)
        if len(kept) >= LINES_KEPT:
            break
    return kept


def resembles(line: str, example: str) -> bool:
    """Whether the matcher's text stage takes ``line`` as a near-copy of ``example``: masked forms alike
    (``NEAR_SIMILARITY``, partial), ``line`` covering most of it, and no other Xid code."""
    pasted, known = mask(squash(line)), mask(squash(example))
    if not known or min(len(pasted), len(known)) / len(known) < NEAR_COVERAGE:
        return False
    codes, their = set(XID_CODE.findall(line)), set(XID_CODE.findall(example))
    if codes and their and not codes & their:
        return False
    return fuzz.partial_ratio(known, pasted) >= NEAR_SIMILARITY


@dataclass(frozen=True, slots=True)
class Confirmed:
    """One stored line of a case with who confirmed it (from storage)."""

    case_id: str
    line: str
    user_id: str


def example_lines(confirmed: Sequence[Confirmed], ordinary: Ordinary, reviewers: Iterable[str] = ()) -> list[KnownLine]:
    """The matcher's known lines for the confirmed examples, one per case and masked form (the same line
    with other numbers is the same line): decisive when two different people, or one reviewer, confirmed
    it for the case; a hint otherwise, and always a hint when it was confirmed for several cases (then it
    tells none of them apart). Lines that fail :func:`refusal` (the rules may have tightened since they
    were stored) are left out."""
    staff = set(reviewers)
    first: dict[tuple[str, str], str] = {}
    users: dict[tuple[str, str], set[str]] = defaultdict(set)
    cases: dict[str, set[str]] = defaultdict(set)
    for example in confirmed:
        text = squash(example.line)
        key = (example.case_id, mask(text))
        first.setdefault(key, text)
        users[key].add(example.user_id)
        cases[key[1]].add(example.case_id)
    lines = []
    for key, text in first.items():
        if refusal(text, ordinary) is not None:
            continue
        who = users[key]
        sure = (len(who) >= 2 or bool(who & staff)) and len(cases[key[1]]) == 1
        strength = Strength.DECISIVE if sure else Strength.SUPPORTING
        lines.append(KnownLine(key[0], text, strength, None, confirmed=True))
    return lines
