"""Ranking cases for a pasted log, with the evidence, and deciding whether an unprompted reply is due.

Pure: cases and compiled signatures in, ``MatchResult`` out; the only outside input is an optional
``clock`` for the per-request deadline. Two stages, both bounded:

1. Signatures. All case signatures sit in a few RE2 sets; one linear pass of each set over the cleaned
   text says which signatures hit anywhere, then each hit is located (line and count) with its own RE2.
2. Case text. Error-looking lines (deduplicated by shape, capped) retrieve the case error strings most
   like them from a BM25 index, and rapidfuzz reranks that shortlist on short strings only.

Then the reply decision (``_decide``), and last, for explicit requests only, weak candidates from whole
case texts fill the list (``CaseTextRanker``): a request always gets something to look at, a reply never
comes from them.
"""

from __future__ import annotations

import copy
import json
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import re2
from rapidfuzz import fuzz

from bot.matching.decision import ReplyModel, decide
from bot.matching.engine import Hit, TextEngine
from bot.matching.jobside import job_error_at
from bot.matching.knownlines import XID_CODE, KnownLine, MatcherParts, mask
from bot.matching.normalize import Cleaned, clean
from bot.matching.numerics import transient
from bot.matching.ranking import MatchConfig, Tally, Titled, rank
from bot.matching.reply_weights import REPLY_MODEL
from bot.matching.signatures import (
    CompiledSignature,
    LazySignatures,
    SignatureSets,
    also_programs,
    locator,
    re2_options,
)
from bot.matching.suspects import extract_suspects
from bot.model.case import Case, Strength
from bot.model.excerpt import Excerpt
from bot.model.results import Evidence, MatchResult, SuspectInfo

Clock = Callable[[], float]

_ERRORISH_PATTERN = (
    r"error|fail|fatal|exception|timed? ?out|killed|abort|terminat|xid|warn|panic|unable|cannot|invalid"
    r"|unexpected|lost|exceeded|refused|\bnan\b|segmentation|core dumped|oom|sig(?:kill|term|bus|abrt)"
    r"|exit ?code|exited|not (?:found|ready|initialized)|mismatch|insufficient"
)
_EVIDENCE_CHARS = 300
# Bounds on the signature stage: lines located per signature (the count shown stops there too), and hits
# located per paste across all signatures; the deadline is checked every _CHECK_EVERY hits or lines.
_LINES_KEPT = 2_000
_HITS_PER_PASTE = 20_000
_CHECK_EVERY = 256
_LINES_SHOWN = 12  # error-looking lines a result carries (the last ones: where errors usually are)
_DIGIT_TO_ZERO = str.maketrans("0123456789", "0000000000")
_RANK_MARK = re.compile(r"\[[Rr]ank ?\d{1,6}\]|\bRank \d{1,6}\b")


BLOCK_CHARS = 16 << 10  # what one uninterruptible RE2 scan reads at most


def text_blocks(text: str, size: int = BLOCK_CHARS) -> list[tuple[int, int]]:
    """``text`` cut into spans of at most ``size`` characters, each ending at a line break when one is in
    reach (lines are capped far below ``size``, so a match never spans two blocks)."""
    spans: list[tuple[int, int]] = []
    start, length = 0, len(text)
    while start < length:
        end = min(length, start + size)
        if end < length:
            cut = text.rfind("\n", start, end)
            end = cut + 1 if cut > start else end
        spans.append((start, end))
        start = end
    return spans or [(0, 0)]


def _evidence_line(cleaned: Cleaned, line_no: int) -> str:
    raw = cleaned.raw_lines[line_no].strip() if line_no < len(cleaned.raw_lines) else ""
    return raw if len(raw) <= _EVIDENCE_CHARS else raw[: _EVIDENCE_CHARS - 1] + "…"


class Matcher:
    """Built once from the case library; ``match`` is thread-safe and may run in an executor."""

    def __init__(
        self,
        cases: Mapping[str, Titled],
        signatures: Sequence[CompiledSignature],
        config: MatchConfig | None = None,
        *,
        sets: SignatureSets | None = None,
        parts: MatcherParts | None = None,
        reply_model: ReplyModel = REPLY_MODEL,
    ) -> None:
        """``sets``: the automatons already built for exactly ``signatures`` (the case store builds them
        while screening); built here otherwise. ``parts``: the known-line and case-text indexes built
        earlier for these cases (the start-up snapshot keeps them); without them ``cases`` must be whole
        cases, from which they are built here. ``reply_model``: the unprompted reply decision
        (``bot.matching.decision``; the bundled one is fitted on the real pastes' `dev` split)."""
        self.config = config or MatchConfig()
        self.reply_model = reply_model
        self._cases = cases
        self._signatures = signatures if isinstance(signatures, LazySignatures) else list(signatures)
        same = sets is not None and (
            sets.signatures is signatures or (isinstance(signatures, list) and sets.signatures == self._signatures)
        )
        if sets is None or not same:
            sets = SignatureSets(self._signatures, self.config.set_shard, self.config.set_max_mem)
        self._sets = sets
        self._text_regex: dict[int, Any] = {}
        self._also: dict[int, list[Any] | None] = {}
        self._errorish = re2.compile(f"(?i)(?:{_ERRORISH_PATTERN})[^\\n]*", re2_options())
        if parts is None:
            parts = MatcherParts.build(cast(Mapping[str, Case], cases), self._signatures, self.config.docs_per_case)
        self.parts = parts
        self._docs = parts.known
        self._doc_index = parts.known_engine
        self._from_payload: dict[int, KnownLine] = {}
        self._case_text = parts.case_text
        self._examples: list[KnownLine] = []
        self._example_index: TextEngine | None = None

    def with_examples(self, lines: Sequence[KnownLine]) -> Matcher:
        """This matcher with ``lines`` (confirmed examples, ``bot.matching.examples``) as further known
        lines of the text stage; everything else is shared. The original is left as it was."""
        other = copy.copy(self)
        # A line whose case is not in this library (it left on a reload) is dropped, never ranked.
        other._examples = [line for line in lines if line.case_id in self._cases]
        lines = other._examples
        other._example_index = TextEngine.build([line.text for line in lines]) if lines else None
        other._from_payload = {}
        return other

    @property
    def examples(self) -> list[KnownLine]:
        """The confirmed-example lines this matcher uses (see :meth:`with_examples`)."""
        return self._examples

    @property
    def case_count(self) -> int:
        return len(self._cases)

    # -- building -----------------------------------------------------------------------------------

    def _known(self, hit: Hit) -> KnownLine:
        """The known line a hit is: from the list, or from the payload the index stored with it."""
        if self._docs is not None:
            return self._docs[hit.doc]
        line = self._from_payload.get(hit.doc)
        if line is None:
            line = KnownLine.from_json(json.loads(hit.payload or b"null"))
            self._from_payload[hit.doc] = line
        return line

    @property
    def dropped(self) -> list[str]:
        """Why signatures RE2 could not fit into a set are unused (the case store rejects such cases)."""
        return [d.reason for d in self._sets.dropped]

    def _also_present(self, index: int, chunks: list[str], late: Callable[[], bool]) -> bool:
        signature = self._signatures[index]
        if not signature.also:
            return True
        if index not in self._also:
            self._also[index] = also_programs(signature)
        programs = self._also[index]
        if programs is None:
            return False
        return all(any(program.search(chunk) is not None for chunk in chunks if not late()) for program in programs)

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
        tallies: dict[str, Tally] = defaultdict(Tally)
        timed_out = self._scan_signatures(cleaned, tallies, late)
        lines: list[int] = []
        if not timed_out:
            lines, timed_out = self._candidate_lines(cleaned, late)
            timed_out = self._scan_text(cleaned, lines, tallies, late) or timed_out
        matches = rank(tallies, self._cases, self.config)
        # What the whole case texts say of the paste's error-looking lines (or without any, its last lines):
        # a feature of the reply decision, and the weak candidates an explicit request is offered.
        picked = lines or list(range(max(0, len(cleaned.raw_lines) - 30), len(cleaned.raw_lines)))
        query = [cleaned.clean_line(n) for n in picked]
        by_text = self._case_text.search(query, 2 * self.config.max_candidates)
        found = job_error_at((n, cleaned.raw_lines[n]) for n in lines) if lines else None
        decision = decide(
            matches,
            tallies,
            self.config,
            self.reply_model,
            text_ranking=[case_id for case_id, _ in by_text],
            job_error=found is not None,
            lines=len(cleaned.raw_lines),
        )
        reply, reply_ids = decision.reply, decision.case_ids
        features, probability = decision.features, decision.probability
        # The job's own error beside a report every rank prints (a watchdog): the program error is the cause,
        # and a case whose proof is only such reports never answers unprompted.
        # A report every rank prints names ranks; a driver's fallout line (Xid 43 after a user's Xid 13, the
        # user-fault case's own proof) does not, and keeps its reply.
        own = found[1] if found else None
        if found is not None and reply and matches:
            best = tallies[matches[0].case_id]
            reports = [n for index in best.fallout for n in best.lines.get(index, [])[:50]]
            by_ranks = any(_RANK_MARK.search(cleaned.raw_lines[n][:2000]) for n in reports)
            if not best.decisive and by_ranks:
                reply, reply_ids, features, probability = False, [], None, None
        # A NaN gradient norm once, then finite ones: loss scaling at work, never an unprompted reply.
        calm = self._transient(cleaned, tallies[matches[0].case_id]) if matches else None
        if calm is not None:
            reply, reply_ids, features, probability = False, [], None, None
        # Weak candidates from whole case texts for an explicit request.
        matches = self._case_text.fill(query, matches, self.config.max_candidates, self.config.min_score, by_text)
        suspects = self._suspects(cleaned, tallies[matches[0].case_id]) if matches else None
        xids = _xid_codes(cleaned.text, late) if matches else []
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
            xids=xids,
            job_error=own,
            transient=calm,
            reply_features=features,
            reply_probability=probability,
            lines=[_evidence_line(cleaned, n) for n in lines[-_LINES_SHOWN:]],
        )

    @staticmethod
    def _transient(cleaned: Cleaned, tally: Tally) -> str | None:
        """Why the best case's proof is transient (``bot.matching.numerics``), or None."""
        proof = [n for index in [*tally.decisive, *tally.fallout] for n in tally.lines.get(index, [])[:3]]
        if not proof and tally.text_line is not None and tally.text_strength is Strength.DECISIVE:
            proof = [tally.text_line]
        return transient(cleaned.raw_lines, proof)

    @staticmethod
    def _suspects(cleaned: Cleaned, tally: Tally) -> SuspectInfo | None:
        """From the best case's decisive lines when it has any (where it failed), else from the lines
        that only report it."""
        proof = list(tally.decisive)
        chosen = proof or [*tally.fallout, *tally.supporting]
        numbers = [n for index in chosen for n in tally.lines.get(index, [])]
        if not numbers and tally.text_line is not None:
            numbers = [tally.text_line]
        collective = not proof and bool(tally.fallout)
        return extract_suspects(cleaned.raw_lines, numbers, failed=bool(proof), collective=collective).to_info()

    def _scan_signatures(self, cleaned: Cleaned, tallies: dict[str, Tally], late: Callable[[], bool]) -> bool:
        """Tally every signature that hits a line. True when the deadline stopped it (what was found so
        far is kept). At most ``_LINES_KEPT`` lines per signature and ``_HITS_PER_PASTE`` in all."""
        text = cleaned.text
        budget = _HITS_PER_PASTE
        # Every scan runs block by block with a deadline check between blocks: one RE2 scan cannot be
        # interrupted, so a slow pattern overruns the deadline by one block's scan at most.
        # (The RE2 binding encodes the whole string it is given on every call: each block is sliced once.)
        blocks = text_blocks(text)
        chunks = [text[start:end] for start, end in blocks]
        found_sets: set[int] = set()
        for chunk in chunks:
            if late():
                return True
            found_sets.update(self._sets.candidates(chunk))
        for index in sorted(found_sets):
            if late():
                return True
            program = self._located(index)
            if program is None or budget <= 0:
                continue
            line_numbers: list[int] = []
            last = -1
            for (start, _), chunk in zip(blocks, chunks, strict=True):
                if late() or len(line_numbers) >= _LINES_KEPT or budget <= 0:
                    break
                for found in program.finditer(chunk):
                    budget -= 1
                    if budget % _CHECK_EVERY == 0 and late():
                        break
                    line_no = cleaned.line_of(start + found.start())
                    if line_no != last:  # two hits on one line count once
                        last = line_no
                        line_numbers.append(line_no)
                    if len(line_numbers) >= _LINES_KEPT or budget <= 0:
                        break
            # Else the set matched across a line break (no single line carries it), or a pattern the
            # signature needs beside it is missing.
            if line_numbers and self._also_present(index, chunks, late):
                self._tally_signature(index, cleaned, line_numbers, tallies)
        return late()

    def _tally_signature(
        self, index: int, cleaned: Cleaned, line_numbers: list[int], tallies: dict[str, Tally]
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
            note=sig.note,
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

    def _near(self, line: str) -> list[KnownLine]:
        """The known lines most like ``line``: the case files' (a few), then the confirmed examples'."""
        found = [self._known(hit) for hit in self._doc_index.search(line, top=3, min_score=2.0)]
        if self._example_index is not None:
            found += [self._examples[hit.doc] for hit in self._example_index.search(line, top=3)]
        return found

    def _errorish_lines(self, cleaned: Cleaned, late: Callable[[], bool]) -> tuple[list[int], bool]:
        """Indices of the lines that look like errors: one linear RE2 pass over the whole text (a hit
        takes the rest of its line, so a line counts once), checked against the deadline."""
        found: list[int] = []
        for count, hit in enumerate(self._errorish.finditer(cleaned.text)):
            if count % (_CHECK_EVERY * 8) == 0 and count and late():
                return found, True
            found.append(cleaned.line_of(hit.start()))
        return found, False

    def _candidate_lines(self, cleaned: Cleaned, late: Callable[[], bool]) -> tuple[list[int], bool]:
        """Error-looking lines, one per shape (digits masked): up to a quarter of the cap from the head
        and the rest from the tail, where errors usually are. Bounded by the number of lines and checked
        against the deadline. Returns (lines, timed out)."""
        errorish, timed_out = self._errorish_lines(cleaned, late)
        cap = self.config.max_text_lines
        head_cap = cap // 4
        seen_shapes: set[str] = set()

        def scan(order: list[int], limit: int) -> tuple[list[int], int]:
            """The first ``limit`` new shapes of ``order``, and how many entries of it were read."""
            found: list[int] = []
            for step, position in enumerate(order):
                shape = cleaned.clean_line(position).lower().translate(_DIGIT_TO_ZERO)
                if shape and shape not in seen_shapes:
                    seen_shapes.add(shape)
                    found.append(position)
                    if len(found) >= limit:
                        return found, step + 1
            return found, len(order)

        tail, read = scan(errorish[::-1], cap - head_cap)
        head, _ = scan(errorish[: len(errorish) - read], cap - len(tail))
        return sorted(set(head) | set(tail)), timed_out

    def _scan_text(
        self, cleaned: Cleaned, candidates: list[int], tallies: dict[str, Tally], late: Callable[[], bool]
    ) -> bool:
        if not len(self._doc_index) and self._example_index is None:
            return False
        read_by_signatures = {case_id: tally.line_set() for case_id, tally in tallies.items()}
        for number, line_no in enumerate(candidates):
            if number % 32 == 0 and late():
                return True
            line = cleaned.clean_line(line_no)
            if len(line) < 12:
                continue
            masked = mask(line)
            xids = frozenset(XID_CODE.findall(line))
            for doc in self._near(line):
                tally = tallies[doc.case_id]
                if doc.signature is not None and tally.hit(doc.signature):
                    continue  # already counted as a signature hit
                if line_no in read_by_signatures.get(doc.case_id, ()):
                    continue  # a signature of this case already read this line: its verdict stands
                if xids and doc.xids and not xids & doc.xids:
                    continue  # another Xid is another fault, however alike the lines look
                coverage = min(len(masked), len(doc.masked)) / len(doc.masked)
                if coverage < 0.6:
                    continue
                similarity = fuzz.partial_ratio(doc.masked, masked)
                if similarity >= self.config.fuzzy_floor and similarity > tally.text_sim:
                    tally.text_sim = similarity
                    tally.text_strength = doc.strength
                    tally.text_fallout = doc.fallout
                    tally.text_line = line_no
                    tally.text_evidence = Evidence(
                        line=_evidence_line(cleaned, line_no),
                        line_no=cleaned.number_of(line_no),
                        matched=doc.text,
                        kind="example" if doc.confirmed else "text",
                        strength=doc.strength,
                    )
        return False


_XIDS_KEPT = 32


def _xid_codes(text: str, late: Callable[[], bool]) -> list[int]:
    """The Xid codes ``text`` names, in the order first seen (at most ``_XIDS_KEPT``), block by block with
    the deadline checked between blocks: which runbook steps fit the paste depends on them."""
    codes: dict[int, None] = {}
    for start, end in text_blocks(text):
        if late() or len(codes) >= _XIDS_KEPT:
            break
        for found in XID_CODE.finditer(text, start, end):
            codes.setdefault(int(found.group(1)), None)
    return list(codes)[:_XIDS_KEPT]
