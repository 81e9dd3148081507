"""Ranking cases for a pasted log, with the evidence, and deciding whether an unprompted reply is due.

Pure: cases and compiled signatures in, ``MatchResult`` out; the only outside input is an optional
``clock`` for the per-request deadline. Two stages, both bounded:

1. Signatures. All case signatures sit in a few RE2 sets; one linear pass of each set over the cleaned
   text says which signatures hit anywhere, then each hit is located (line and count) with its own RE2.
2. Case text. Error-looking lines (deduplicated by shape, capped) retrieve the case error strings most
   like them from a BM25 index, and rapidfuzz reranks that shortlist on short strings only.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from bot.matching.normalize import Cleaned, clean
from bot.matching.signatures import SET_MAX_MEM, SET_SHARD, CompiledSignature, SignatureSets, locator, squash
from bot.matching.suspects import extract_suspects
from bot.matching.textindex import BM25Index
from bot.model.case import Case, Strength
from bot.model.excerpt import Excerpt
from bot.model.results import Evidence, Match, MatchResult, SuspectInfo, Tier

Clock = Callable[[], float]

_ERRORISH_PATTERN = (
    r"(?i)error|fail|fatal|exception|timed? ?out|killed|abort|terminat|xid|warn|panic|unable|cannot|invalid"
    r"|unexpected|lost|exceeded|refused|\bnan\b|segmentation|core dumped|oom|sig(?:kill|term|bus|abrt)"
    r"|exit ?code|exited|not (?:found|ready|initialized)|mismatch|insufficient"
)
_QUOTED = re.compile(r"`([^`\n]{15,300})`|\"([^\"\n]{15,300})\"")
_DIGITS = re.compile(r"\d{1,40}")
_EVIDENCE_CHARS = 300
# Bounds on the signature stage: lines located per signature (the count shown stops there too), and hits
# located per paste across all signatures; the deadline is checked every _CHECK_EVERY hits or lines.
_LINES_KEPT = 2_000
_HITS_PER_PASTE = 20_000
_CHECK_EVERY = 256
_DIGIT_TO_ZERO = str.maketrans("0123456789", "0000000000")


@dataclass(frozen=True, slots=True)
class MatchConfig:
    max_bytes: int = 2 << 20
    max_candidates: int = 5
    max_text_lines: int = 400
    min_score: int = 15
    strong_score: int = 60
    reply_margin: int = 10
    same_class_band: int = 5
    fuzzy_floor: int = 85
    docs_per_case: int = 16
    set_shard: int = SET_SHARD
    set_max_mem: int = SET_MAX_MEM


@dataclass(frozen=True, slots=True)
class _Doc:
    case_id: str
    text: str
    masked: str
    strength: Strength | None
    signature: int | None  # the signature this text illustrates; None for quotes from the case text
    fallout: bool = False


@dataclass
class _Tally:
    decisive: dict[int, Evidence] = field(default_factory=dict)
    fallout: dict[int, Evidence] = field(default_factory=dict)
    supporting: dict[int, Evidence] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    lines: dict[int, list[int]] = field(default_factory=dict)  # 0-based lines each signature hit
    specificity: int = 0
    text_sim: float = 0.0
    text_strength: Strength | None = None
    text_fallout: bool = False
    text_evidence: Evidence | None = None

    def hit(self, index: int) -> bool:
        return index in self.decisive or index in self.fallout or index in self.supporting


def _mask(text: str) -> str:
    return _DIGITS.sub("0", text.lower())


def _evidence_line(cleaned: Cleaned, line_no: int) -> str:
    raw = cleaned.raw_lines[line_no].strip() if line_no < len(cleaned.raw_lines) else ""
    return raw if len(raw) <= _EVIDENCE_CHARS else raw[: _EVIDENCE_CHARS - 1] + "…"


class Matcher:
    """Built once from the case library; ``match`` is thread-safe and may run in an executor."""

    def __init__(
        self,
        cases: Mapping[str, Case],
        signatures: Sequence[CompiledSignature],
        config: MatchConfig | None = None,
        *,
        sets: SignatureSets | None = None,
    ) -> None:
        """``sets``: RE2 sets already built for exactly ``signatures`` (the case store builds them while
        screening); built here otherwise."""
        self.config = config or MatchConfig()
        self._cases = dict(cases)
        self._signatures = list(signatures)
        if sets is None or list(sets.signatures) != self._signatures:
            sets = SignatureSets(self._signatures, self.config.set_shard, self.config.set_max_mem)
        self._sets = sets
        self._text_regex: dict[int, Any] = {}
        self._errorish = re.compile(_ERRORISH_PATTERN)
        self._docs = self._build_docs(self._cases.values(), self._signatures)
        self._doc_index = BM25Index([doc.text for doc in self._docs])

    @property
    def case_count(self) -> int:
        return len(self._cases)

    # -- building -----------------------------------------------------------------------------------

    def _build_docs(self, cases: Any, signatures: Sequence[CompiledSignature]) -> list[_Doc]:
        by_case: dict[str, dict[str, tuple[Strength | None, int | None, bool]]] = defaultdict(dict)
        for number, sig in enumerate(signatures):
            texts = list(self._cases[sig.case_id].signatures[sig.index].examples)
            if not sig.is_regex:
                texts.append(sig.literal)
            for text in texts:
                by_case[sig.case_id].setdefault(squash(text), (sig.strength, number, sig.fallout))
        for case in cases:
            for found in _QUOTED.finditer(case.symptoms_text.en or ""):
                by_case[case.id].setdefault(squash(found.group(1) or found.group(2)), (None, None, False))
        docs: list[_Doc] = []
        for case_id, case_texts in by_case.items():
            for text, (strength, sig_no, fallout) in list(case_texts.items())[: self.config.docs_per_case]:
                if len(text) >= 20:
                    docs.append(_Doc(case_id, text, _mask(text), strength, sig_no, fallout))
        return docs

    @property
    def dropped(self) -> list[str]:
        """Why signatures RE2 could not fit into a set are unused (the case store rejects such cases)."""
        return [d.reason for d in self._sets.dropped]

    def _located(self, index: int) -> Any | None:
        if index not in self._text_regex:
            self._text_regex[index] = locator(self._signatures[index])
        return self._text_regex[index]

    # -- matching -----------------------------------------------------------------------------------

    def match(
        self,
        paste: str | bytes | Excerpt,
        *,
        clock: Clock | None = None,
        deadline_s: float | None = None,
        slack_encoded: bool = True,
    ) -> MatchResult:
        """Rank cases for ``paste``. Never raises for any input; bounded by the size cap and deadline."""
        deadline = clock() + deadline_s if clock and deadline_s else None

        def late() -> bool:
            return deadline is not None and clock is not None and clock() > deadline

        cleaned = clean(paste, self.config.max_bytes, slack_encoded=slack_encoded)
        tallies: dict[str, _Tally] = defaultdict(_Tally)
        timed_out = self._scan_signatures(cleaned, tallies, late)
        if not timed_out:
            timed_out = self._scan_text(cleaned, tallies, late)
        matches = self._rank(tallies)
        reply, reply_ids = self._decide(matches)
        suspects = self._suspects(cleaned, tallies[matches[0].case_id]) if matches else None
        return MatchResult(
            matches=matches,
            reply=reply,
            reply_case_ids=reply_ids,
            truncated=cleaned.truncated,
            skipped_bytes=cleaned.skipped_bytes,
            skipped_lines=cleaned.skipped_lines,
            long_lines=cleaned.long_lines,
            unread_bytes=cleaned.unread_bytes,
            timed_out=timed_out,
            lines_scanned=len(cleaned.raw_lines),
            suspects=suspects,
        )

    @staticmethod
    def _suspects(cleaned: Cleaned, tally: _Tally) -> SuspectInfo | None:
        """From the best case's decisive lines when it has any (where it failed), else from the lines
        that only report it."""
        proof = list(tally.decisive)
        chosen = proof or [*tally.fallout, *tally.supporting]
        numbers = [n for index in chosen for n in tally.lines.get(index, [])]
        if not numbers and tally.text_evidence is not None:
            numbers = [cleaned.index_of(tally.text_evidence.line_no)]
        collective = not proof and bool(tally.fallout)
        return extract_suspects(cleaned.raw_lines, numbers, failed=bool(proof), collective=collective).to_info()

    def _scan_signatures(self, cleaned: Cleaned, tallies: dict[str, _Tally], late: Callable[[], bool]) -> bool:
        """Tally every signature that hits a line. True when the deadline stopped it (what was found so
        far is kept). At most ``_LINES_KEPT`` lines per signature and ``_HITS_PER_PASTE`` in all."""
        text = cleaned.text
        budget = _HITS_PER_PASTE
        for index in self._sets.candidates(text):
            if late():
                return True
            program = self._located(index)
            if program is None or budget <= 0:
                continue
            line_numbers: list[int] = []
            last = -1
            for found in program.finditer(text):
                budget -= 1
                if budget % _CHECK_EVERY == 0 and late():
                    break
                line_no = cleaned.line_of(found.start())
                if line_no != last:  # two hits on one line count once
                    last = line_no
                    line_numbers.append(line_no)
                if len(line_numbers) >= _LINES_KEPT or budget <= 0:
                    break
            if line_numbers:  # else the set matched across a line break; no single line carries it
                self._tally_signature(index, cleaned, line_numbers, tallies)
        return late()

    def _tally_signature(
        self, index: int, cleaned: Cleaned, line_numbers: list[int], tallies: dict[str, _Tally]
    ) -> None:
        sig = self._signatures[index]
        first_line = line_numbers[0]
        evidence = Evidence(
            line=_evidence_line(cleaned, first_line),
            line_no=cleaned.number_of(first_line),
            matched=sig.pattern,
            kind="signature",
            strength=sig.strength,
            count=len(line_numbers),
        )
        tally = tallies[sig.case_id]
        if sig.strength is Strength.SUPPORTING:
            tally.supporting[index] = evidence
        elif sig.fallout:
            tally.fallout[index] = evidence
        else:
            tally.decisive[index] = evidence
        tally.counts[index] = len(line_numbers)
        tally.lines[index] = line_numbers
        tally.specificity += len(sig.literal)

    def _candidate_lines(self, cleaned: Cleaned, late: Callable[[], bool]) -> tuple[list[int], bool]:
        """Error-looking lines, one per shape (digits masked): up to a quarter of the cap from the head
        and the rest from the tail, where errors usually are. Bounded by the number of lines (a repeated
        line costs one hash lookup) and checked against the deadline. Returns (lines, timed out)."""
        lines = cleaned.text.split("\n")
        cap = self.config.max_text_lines
        head_cap = cap // 4
        seen_lines: set[str] = set()
        seen_shapes: set[str] = set()

        def scan(order: range, limit: int) -> tuple[list[int], int, bool]:
            found: list[int] = []
            position = order.start
            for step, position in enumerate(order):
                if step % (_CHECK_EVERY * 8) == 0 and step and late():
                    return found, position, True
                line = lines[position]
                if line in seen_lines or not line:
                    continue
                seen_lines.add(line)
                if not self._errorish.search(line):
                    continue
                shape = line.lower().translate(_DIGIT_TO_ZERO)
                if shape not in seen_shapes:
                    seen_shapes.add(shape)
                    found.append(position)
                    if len(found) >= limit:
                        return found, position, False
            return found, position, False

        tail, stop, timed_out = scan(range(len(lines) - 1, -1, -1), cap - head_cap)
        if timed_out:
            return sorted(tail), True
        head, _, timed_out = scan(range(0, stop), head_cap + (cap - head_cap - len(tail)))
        return sorted(set(head) | set(tail)), timed_out

    def _scan_text(self, cleaned: Cleaned, tallies: dict[str, _Tally], late: Callable[[], bool]) -> bool:
        if not self._docs:
            return False
        candidates, timed_out = self._candidate_lines(cleaned, late)
        for number, line_no in enumerate(candidates):
            if number % 32 == 0 and late():
                return True
            line = cleaned.clean_line(line_no)
            if len(line) < 12:
                continue
            masked = _mask(line)
            for hit in self._doc_index.search(line, top=3, min_score=2.0):
                doc = self._docs[hit.doc]
                tally = tallies[doc.case_id]
                if doc.signature is not None and tally.hit(doc.signature):
                    continue  # already counted as a signature hit
                coverage = min(len(masked), len(doc.masked)) / len(doc.masked)
                if coverage < 0.6:
                    continue
                similarity = fuzz.partial_ratio(doc.masked, masked)
                if similarity >= self.config.fuzzy_floor and similarity > tally.text_sim:
                    tally.text_sim = similarity
                    tally.text_strength = doc.strength
                    tally.text_fallout = doc.fallout
                    tally.text_evidence = Evidence(
                        line=_evidence_line(cleaned, line_no),
                        line_no=cleaned.number_of(line_no),
                        matched=doc.text,
                        kind="text",
                        strength=doc.strength,
                    )
        return timed_out

    # -- scoring ------------------------------------------------------------------------------------

    def _score(self, tally: _Tally, decisive_elsewhere: bool) -> tuple[int, Tier]:
        decisive = len(tally.decisive) + (0 if decisive_elsewhere else len(tally.fallout))
        supporting = len(tally.supporting) + (len(tally.fallout) if decisive_elsewhere else 0)
        if decisive:
            return min(100, 88 + 4 * (decisive - 1) + 2 * supporting), Tier.EXACT
        by_signature = 0 if supporting == 0 else min(70, 40 + 10 * (supporting - 1))
        by_text = 0.0
        if tally.text_sim >= self.config.fuzzy_floor:
            proof = tally.text_strength is Strength.DECISIVE and not (tally.text_fallout and decisive_elsewhere)
            # A near-copy of a decisive example is nearly as good as the signature; a near-copy of a
            # hint, or of a line quoted in the case text, stays a hint.
            top = 85 if proof else (55 if tally.text_strength is Strength.SUPPORTING else 50)
            span = 100 - self.config.fuzzy_floor
            by_text = 20 + (top - 20) * (tally.text_sim - self.config.fuzzy_floor) / span
        high, low = max(by_signature, by_text), min(by_signature, by_text)
        score = int(min(87, high + low / 4))
        return score, Tier.STRONG if score >= self.config.strong_score else Tier.WEAK

    def _rank(self, tallies: dict[str, _Tally]) -> list[Match]:
        decisive_cases = {case_id for case_id, tally in tallies.items() if tally.decisive}
        scored: list[tuple[int, int, str, Match]] = []
        for case_id, tally in tallies.items():
            elsewhere = bool(decisive_cases - {case_id})
            score, tier = self._score(tally, elsewhere)
            if score < self.config.min_score:
                continue
            evidence = [
                *tally.decisive.values(),
                *tally.fallout.values(),
                *tally.supporting.values(),
                *([tally.text_evidence] if tally.text_evidence else []),
            ][:3]
            case = self._cases[case_id]
            match = Match(
                case_id=case_id,
                title=case.title,
                failure_class=case.failure_class,
                score=score,
                tier=tier,
                evidence=evidence,
            )
            scored.append((score, tally.specificity, case_id, match))
        scored.sort(key=lambda item: (-item[0], -item[1], item[2]))
        return [match for *_, match in scored[: self.config.max_candidates]]

    def _decide(self, matches: list[Match]) -> tuple[bool, list[str]]:
        if not matches or matches[0].tier is Tier.WEAK:
            return False, []
        best = matches[0]

        def same_class(other: Match) -> bool:
            return best.failure_class is not None and other.failure_class == best.failure_class

        rivals = [m.score for m in matches[1:] if not same_class(m)]
        if rivals and best.score - max(rivals) < self.config.reply_margin:
            return False, []
        close = [
            m.case_id
            for m in matches[1:]
            if same_class(m) and m.tier is not Tier.WEAK and best.score - m.score <= self.config.same_class_band
        ]
        return True, [best.case_id, *close[:1]]
