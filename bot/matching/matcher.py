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

import re2
from rapidfuzz import fuzz

from bot.matching.normalize import Cleaned, clean
from bot.matching.signatures import CompiledSignature, squash
from bot.matching.suspects import extract_suspects
from bot.matching.textindex import BM25Index
from bot.model.case import Case, Strength
from bot.model.results import Evidence, Match, MatchResult, SuspectInfo, Tier

Clock = Callable[[], float]

# Patterns per RE2 set, and the DFA memory each set may use: one pass of each set over the text says
# which signatures hit. Measured on 40,000 patterns: 400 a set costs ~0.5 s over 2 MB, 4,000 ~0.05 s.
_SET_SHARD = 4000
_SET_MAX_MEM = 256 << 20
_ERRORISH_PATTERN = (
    r"(?i)error|fail|fatal|exception|timed? ?out|killed|abort|terminat|xid|warn|panic|unable|cannot|invalid"
    r"|unexpected|lost|exceeded|refused|\bnan\b|segmentation|core dumped|oom|sig(?:kill|term|bus|abrt)"
    r"|exit ?code|exited|not (?:found|ready|initialized)|mismatch|insufficient"
)
_QUOTED = re.compile(r"`([^`\n]{15,300})`|\"([^\"\n]{15,300})\"")
_DIGITS = re.compile(r"\d{1,40}")
_EVIDENCE_CHARS = 300
_HITS_COUNTED = 10_000
_LINES_KEPT = 2_000


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
    set_shard: int = _SET_SHARD
    set_max_mem: int = _SET_MAX_MEM


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
    ) -> None:
        self.config = config or MatchConfig()
        self._cases = dict(cases)
        self._signatures = list(signatures)
        self._sets = self._build_sets(self._signatures, self.config.set_shard, self.config.set_max_mem)
        self._text_regex: dict[int, Any] = {}
        options = re2.Options()
        options.log_errors = False
        self._errorish = re2.compile(_ERRORISH_PATTERN, options)
        self._docs = self._build_docs(self._cases.values(), self._signatures)
        self._doc_index = BM25Index([doc.text for doc in self._docs])

    @property
    def case_count(self) -> int:
        return len(self._cases)

    # -- building -----------------------------------------------------------------------------------

    @staticmethod
    def _build_sets(signatures: Sequence[CompiledSignature], shard: int, max_mem: int) -> list[tuple[Any, list[int]]]:
        """RE2 sets of at most ``shard`` patterns; a set RE2 cannot compile within ``max_mem`` is split
        in halves until it does (a single pattern always compiles: it was checked at load time)."""
        options = re2.Options()
        options.log_errors = False
        options.max_mem = max_mem
        sets: list[tuple[Any, list[int]]] = []
        pending = [list(range(i, min(i + shard, len(signatures)))) for i in range(0, len(signatures), shard)]
        while pending:
            members = pending.pop()
            regex_set = re2.Set.SearchSet(options)
            for index in members:
                try:
                    regex_set.Add(signatures[index].set_pattern(relaxed=True))
                except re2.error:  # the widened form must never cost a signature: fall back to the exact one
                    regex_set.Add(signatures[index].set_pattern())
            try:
                regex_set.Compile()
            except re2.error:
                if len(members) == 1:
                    raise
                half = len(members) // 2
                pending.extend([members[:half], members[half:]])
                continue
            sets.append((regex_set, members))
        return sets

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

    def _located(self, index: int) -> Any:
        regex = self._text_regex.get(index)
        if regex is None:
            options = re2.Options()
            options.log_errors = False
            regex = re2.compile(self._signatures[index].set_pattern(), options)
            self._text_regex[index] = regex
        return regex

    # -- matching -----------------------------------------------------------------------------------

    def match(
        self,
        paste: str | bytes,
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
        self._scan_signatures(cleaned, tallies)
        timed_out = late()
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
            numbers = [tally.text_evidence.line_no - 1]
        collective = not proof and bool(tally.fallout)
        return extract_suspects(cleaned.raw_lines, numbers, failed=bool(proof), collective=collective).to_info()

    def _scan_signatures(self, cleaned: Cleaned, tallies: dict[str, _Tally]) -> None:
        text = cleaned.text
        hit: list[int] = []
        for regex_set, members in self._sets:
            for position in regex_set.Match(text) or ():
                hit.append(members[position])
        for index in hit:
            sig = self._signatures[index]
            line_numbers: list[int] = []
            count = 0
            last = -1
            for found in self._located(index).finditer(text):
                line_no = cleaned.line_of(found.start())
                if line_no == last:
                    continue  # two hits on one line count once
                last = line_no
                if len(line_numbers) < _LINES_KEPT:
                    line_numbers.append(line_no)
                count += 1
                if count >= _HITS_COUNTED:
                    break
            if not line_numbers:  # the set matched across a line break; no single line carries it
                continue
            first_line = line_numbers[0]
            evidence = Evidence(
                line=_evidence_line(cleaned, first_line),
                line_no=first_line + 1,
                matched=sig.pattern,
                kind="signature",
                strength=sig.strength,
                count=count,
            )
            tally = tallies[sig.case_id]
            if sig.strength is Strength.SUPPORTING:
                tally.supporting[index] = evidence
            elif sig.fallout:
                tally.fallout[index] = evidence
            else:
                tally.decisive[index] = evidence
            tally.counts[index] = count
            tally.lines[index] = line_numbers
            tally.specificity += len(sig.literal)

    def _candidate_lines(self, cleaned: Cleaned) -> list[int]:
        seen: set[str] = set()
        lines: list[int] = []
        last = -1
        for found in self._errorish.finditer(cleaned.text):
            line_no = cleaned.line_of(found.start())
            if line_no == last:
                continue
            last = line_no
            shape = _mask(cleaned.clean_line(line_no))
            if shape not in seen:
                seen.add(shape)
                lines.append(line_no)
        cap = self.config.max_text_lines
        if len(lines) > cap:
            head = cap // 4
            lines = lines[:head] + lines[-(cap - head) :]
        return lines

    def _scan_text(self, cleaned: Cleaned, tallies: dict[str, _Tally], late: Callable[[], bool]) -> bool:
        if not self._docs:
            return False
        for number, line_no in enumerate(self._candidate_lines(cleaned)):
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
                        line_no=line_no + 1,
                        matched=doc.text,
                        kind="text",
                        strength=doc.strength,
                    )
        return False

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
