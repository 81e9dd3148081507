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
from collections.abc import Callable, Iterable, Sequence
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


# What a program prints and a person chatting does not: a digit, a path or code punctuation, a dotted or
# snake_case name, CamelCase, or an upper-case word of three letters or more (NCCL, ECC, ERROR).
_LOG_TOKEN = re.compile(r"\d|[_/\\=\[\](){}<>#@$%|]|\w\.\w|[a-z][A-Z]|\b[A-Z]{3,}\b")


def reads_as_chat(line: str) -> bool:
    """Whether ``line`` is prose with nothing a program prints in it (``lol my coffee machine failed
    again``, ``Error: lunch order for the team failed``): a person's words, not a log line."""
    return _LOG_TOKEN.search(_PLACEHOLDER.sub(" ", line)) is None


def refusal(line: str, ordinary: Ordinary) -> str | None:
    """Why ``line`` cannot be an example (None when it can): too short, not an error, chat, ordinary text,
    or generic (it names fewer than ``MIN_SPECIFIC`` things beyond the generic vocabulary: any failure
    prints such a line, so it is evidence for none)."""
    text = squash(line)
    if len(text) < MIN_CHARS:
        return f"shorter than {MIN_CHARS} characters"
    if not _ERRORISH.search(text):
        return "does not look like an error line"
    if reads_as_chat(text):
        return "reads as chat: nothing in it is what a program prints"
    if ordinary.near(text):
        return "too close to ordinary chat or a healthy log line"
    if len(ordinary.specific(text)) < MIN_SPECIFIC:
        return "too generic: it names nothing specific to one failure"
    return None


FALLBACK_LINES = 3  # lines kept for an answer no signature and no known line of the case made


def evidence_of(
    result: MatchResult, case_id: str | None = None, weight: Callable[[str], int] | None = None
) -> list[str]:
    """The lines that proved ``case_id`` (the best match when None), in this order of preference:

    1. the lines a signature of the case hit (even when another case's signature hit them too: they proved
       this answer);
    2. else its near-copy evidence (lines alike one of its known or confirmed lines);
    3. else, for an answer from its case text alone, the paste's error-looking lines that ``weight`` scores
       above 0 (the words they share with the case), highest first, at most ``FALLBACK_LINES``.

    Under 2 and 3 a line another candidate's signature hit is never taken: it is that case's evidence."""
    match = result.best if case_id is None else next((m for m in result.matches if m.case_id == case_id), None)
    if match is None:
        return []
    own = [ev.line for ev in match.evidence if ev.kind == "signature"]
    if own:
        return list(dict.fromkeys(own))
    elsewhere = {
        ev.line
        for other in result.matches
        if other.case_id != match.case_id
        for ev in other.evidence
        if ev.kind == "signature"
    }
    near = [ev.line for ev in match.evidence if ev.line not in elsewhere]
    if near:
        return list(dict.fromkeys(near))
    if weight is None:
        return []
    scored = [(weight(line), number, line) for number, line in enumerate(dict.fromkeys(result.lines))]
    ranked = sorted((item for item in scored if item[0] > 0 and item[2] not in elsewhere), key=lambda t: (-t[0], t[1]))
    return [line for _, _, line in ranked[:FALLBACK_LINES]]


def lines_to_keep(
    result: MatchResult,
    ordinary: Ordinary,
    case_id: str | None = None,
    weight: Callable[[str], int] | None = None,
) -> list[str]:
    """What a confirmation of ``case_id`` (the best match when None) stores: :func:`evidence_of`, redacted,
    screened (:func:`refusal`) and capped (``LINES_KEPT`` lines of ``LINE_CHARS``). The paste's other
    lines, chat or another failure's errors, are never stored. Every host the paste names in a host
    position is redacted in all of them."""
    return _screened([raw.strip() for raw in evidence_of(result, case_id, weight)], result, ordinary)


def paste_lines(result: MatchResult, ordinary: Ordinary) -> list[str]:
    """What a case draft proposes from: the paste's error-looking lines (the best match's evidence first),
    redacted, screened and capped like an example's. A draft is read by a person before it is a case, so
    it may hold more than what proved an answer."""
    evidence = [ev.line for ev in result.best.evidence] if result.best is not None else []
    return _screened([raw.strip() for raw in [*evidence, *result.lines]], result, ordinary)


def _screened(candidates: list[str], result: MatchResult, ordinary: Ordinary) -> list[str]:
    """``candidates`` redacted (every host the paste names in a host position, in all of them), screened
    (:func:`refusal`), without repeats and capped (``LINES_KEPT`` lines of ``LINE_CHARS``)."""
    hosts = hosts_in([*candidates, *result.lines]) | (
        set(result.suspects.hosts) if result.suspects is not None else set()
    )
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


@dataclass(frozen=True, slots=True)
class Rejected:
    """One "Not this case" against a stored line of a case: who said it, and whether they are a reviewer."""

    case_id: str
    line: str
    user_id: str
    reviewer: bool = False


DEMOTED_BY = 2  # different people's rejections that make a decisive example a hint
DROPPED_BY = 3  # ... that drop it (one reviewer's rejection drops it)


def example_lines(
    confirmed: Sequence[Confirmed],
    keep: Callable[[str], bool],
    reviewers: Iterable[str] = (),
    rejected: Sequence[Rejected] = (),
) -> list[KnownLine]:
    """The matcher's known lines for the confirmed examples, one per case and masked form (the same line
    with other numbers is the same line): decisive when two different people, or one reviewer, confirmed
    it for the case; a hint otherwise, and always a hint when it was confirmed for several cases (then it
    tells none of them apart). Rejections count: ``DEMOTED_BY`` different people make it a hint,
    ``DROPPED_BY`` (or one reviewer) drop it. ``keep`` is the screen (:func:`refusal`, cached by the
    caller so that a line is screened once, not on every rebuild)."""
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
    against: dict[tuple[str, str], set[str]] = defaultdict(set)
    dropped: set[tuple[str, str]] = set()
    for rejection in rejected:
        key = (rejection.case_id, mask(squash(rejection.line)))
        against[key].add(rejection.user_id)
        if rejection.reviewer or rejection.user_id in staff:
            dropped.add(key)
    lines = []
    for key, text in first.items():
        no = against.get(key, set())
        if key in dropped or len(no) >= DROPPED_BY or not keep(text):
            continue
        who = users[key]
        sure = (len(who) >= 2 or bool(who & staff)) and len(cases[key[1]]) == 1 and len(no) < DEMOTED_BY
        strength = Strength.DECISIVE if sure else Strength.SUPPORTING
        lines.append(KnownLine(key[0], text, strength, None, confirmed=True))
    return lines
