"""Confirmed examples, the use case: what a confirmation stores, and the matcher's example lines.

A Helpful vote, or "It was …" in Other matches, stores the paste's lines for the case (redacted and
screened in ``bot.matching.examples``); "Not this case" from the same person withdraws theirs. Examples live
in the database, so every replica sees them: :meth:`ExampleBook.version` is one cheap query, and the
service rebuilds the matcher's example index when it changed (``IncidentService.refresh_examples``, run by
the reload watcher every ``CASES_RELOAD_SECONDS``). They expire after ``EXAMPLE_RETENTION_DAYS``.

The screen's generic vocabulary includes the words common to many of the library's case texts, read from
an even sample of at most ``CASE_SAMPLE`` cases once per library (a large library loads cases lazily).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache, cached_property

from bot.app.nodes import NodeMemory
from bot.library.ordinary import ordinary_text
from bot.matching.casetext import case_document
from bot.matching.examples import (
    Confirmed,
    Ordinary,
    Rejected,
    common_words,
    example_lines,
    lines_to_keep,
    paste_lines,
    refusal,
    resembles,
    words,
)
from bot.matching.knownlines import KnownLine
from bot.matching.matcher import Matcher
from bot.model.case import Case
from bot.model.results import MatchResult
from bot.storage.base import ExampleRecord, Storage

CASE_SAMPLE = 400  # cases read for the common words (an even sample of a larger library)
PURGE_EVERY = timedelta(hours=1)
SCREENED_KEPT = 50_000  # screen verdicts remembered (far more than the lines retention keeps)

log = logging.getLogger("incident_bot.examples")


def is_direct_message(channel: str) -> bool:
    """Slack's DM channel ids start with D (the console's "channel" is not one)."""
    return channel.startswith("D")


@dataclass
class ExampleBook:
    storage: Storage
    retention: timedelta
    reviewers: frozenset[str]
    now: Callable[[], datetime]
    cases: Callable[[], Mapping[str, Case]] = dict  # the library's cases, for the common words
    matcher: Callable[[], Matcher | None] = lambda: None  # the service's current matcher
    _screen: tuple[object, Ordinary] | None = field(default=None, init=False, repr=False)
    _screened: dict[str, bool] = field(default_factory=dict, init=False, repr=False)
    _purged_at: datetime | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @cached_property
    def ordinary(self) -> Ordinary:
        """The ordinary-text screen without the case texts' common words."""
        chat, negatives = ordinary_text()
        return Ordinary(chat + "\n" + negatives)

    def screen(self) -> Ordinary:
        """The screen for the current library: the ordinary text, and the words common to its case texts
        (worked out once per library)."""
        cases = self.cases()
        with self._lock:
            cached = self._screen
        if cached is not None and cached[0] is cases:
            return cached[1]
        ids = list(cases)
        step = max(1, len(ids) // CASE_SAMPLE)
        texts = (case_document(cases[case_id]) for case_id in ids[::step][:CASE_SAMPLE])
        screen = self.ordinary.with_common(common_words(texts))
        with self._lock:
            self._screen = (cases, screen)
            self._screened = {}  # a new library, a new screen: lines are screened again, once
        return screen

    def passes(self, line: str) -> bool:
        """Whether ``line`` passes the screen (:func:`refusal`), worked out once per line and library: the
        example index is rebuilt from stored lines without screening them again."""
        screen = self.screen()
        with self._lock:
            known = self._screened.get(line)
        if known is None:
            known = refusal(line, screen) is None
            with self._lock:
                if len(self._screened) >= SCREENED_KEPT:
                    self._screened.clear()
                self._screened[line] = known
        return known

    def signature_cases(self, line: str) -> frozenset[str]:
        """The cases whose signatures hit ``line`` on its own (the matcher's signature stage)."""
        matcher = self.matcher()
        if matcher is None:
            return frozenset()
        result = matcher.match(line, slack_encoded=False)
        return frozenset(m.case_id for m in result.matches if any(ev.kind == "signature" for ev in m.evidence))

    def purge_if_due(self, nodes: NodeMemory) -> None:
        """Delete expired examples, rejections and node events at most every ``PURGE_EVERY`` (called by
        every refresh: at start and on each reload check), so retention holds when nothing is written."""
        now = self.now()
        if self._purged_at is not None and now - self._purged_at < PURGE_EVERY:
            return
        self._purged_at = now
        gone = self.storage.purge_examples(self.since())
        nodes.purge()
        if gone:
            log.info("retention: %d expired example line(s) deleted", gone)

    def evidence_for(self, case_id: str, lines: Sequence[str]) -> tuple[str, ...]:
        """Which of ``lines`` a confirmation of ``case_id`` may store, by the rule of
        :func:`bot.matching.examples.evidence_of` checked again against the library as it is now: of the
        lines that pass the screen, those a signature of the case hits; when none does, those no other
        case's signature hits."""
        fit = [line for line in dict.fromkeys(lines) if self.passes(line)]
        hits = {line: self.signature_cases(line) for line in fit}
        own = [line for line in fit if case_id in hits[line]]
        return tuple(own or [line for line in fit if not hits[line]])

    def since(self) -> datetime:
        return self.now() - self.retention

    def lines_of(self, result: MatchResult) -> list[str]:
        """What a confirmation of ``result`` would store (carried in its buttons' values)."""
        screen = self.screen()
        best = result.best.case_id if result.best is not None else None
        return lines_to_keep(result, screen, weight=self._weight(best, screen) if best else None)

    def draft_lines(self, result: MatchResult) -> list[str]:
        """What a case draft of ``result``'s paste proposes from (``paste_lines``)."""
        return paste_lines(result, self.screen())

    def _weight(self, case_id: str, screen: Ordinary) -> Callable[[str], int]:
        """How many of a line's specific words (:meth:`Ordinary.specific`) the case's own text has."""
        cases = self.cases()

        @cache
        def known() -> set[str]:  # read only when an answer falls back to its case text (rare)
            case = cases.get(case_id)
            return words(case_document(case)) if case is not None else set()

        return lambda line: sum(1 for word in screen.specific(line) if word in known())

    def confirm(self, case_id: str, lines: Sequence[str], user_id: str, channel: str, reply_id: int) -> int:
        """Store what of ``lines`` is evidence for ``case_id`` (:meth:`evidence_for`: a value is ours, but the
        rules or the library may have changed) as confirmed by ``user_id``; returns how many were kept.
        Expired examples are purged on the way."""
        kept = self.evidence_for(case_id, lines)
        if not kept:
            return 0
        self.storage.purge_examples(self.since())
        return self.storage.add_examples(case_id, kept, user_id, channel, reply_id, self.now())

    def withdraw(self, case_id: str, lines: Sequence[str], user_id: str, reply_id: int) -> int:
        """``user_id`` said "Not this case": drop what they confirmed for it from this reply, and record their
        rejection of the case's stored examples that made the answer: those the rejected paste's lines
        (``lines``) match as example evidence, near-copies as the matcher's text stage reads them, not only
        byte-identical lines. Returns how many of their own lines went."""
        gone = self.storage.withdraw_examples(reply_id, user_id, case_id)
        caused = self._example_evidence(case_id, lines)
        stored = dict.fromkeys(example.line for example in self.stored(case_id))
        rejected = tuple(line for line in stored if any(resembles(pasted, line) for pasted in caused))
        if rejected:
            reviewer = user_id in self.reviewers
            self.storage.reject_examples(case_id, rejected, user_id, reviewer, self.now())
        return gone

    def _example_evidence(self, case_id: str, lines: Sequence[str]) -> list[str]:
        """Of the rejected paste's ``lines``, those a confirmed example of ``case_id`` made evidence when
        matched now: a rejection counts against the examples that caused the answer, not any it mentions."""
        matcher = self.matcher()
        if matcher is None or not lines:
            return []
        result = matcher.match("\n".join(lines), slack_encoded=False)
        match = next((m for m in result.matches if m.case_id == case_id), None)
        return [ev.line for ev in match.evidence if ev.kind == "example"] if match is not None else []

    def delete(self, example_id: int) -> int:
        """Delete example ``example_id``'s line for its case (everyone's confirmations of it, and its
        rejections); every replica drops it on its next check. Returns how many rows went."""
        return self.storage.delete_example(example_id)

    def version(self) -> tuple[int, int, int]:
        return self.storage.examples_version(self.since())

    def stored(self, case_id: str | None = None, since: datetime | None = None) -> list[ExampleRecord]:
        """Unexpired examples (of one case; created at or after ``since``), oldest first."""
        start = max(self.since(), since) if since is not None else self.since()
        return self.storage.list_examples(start, case_id)

    def known_lines(self, cases: Container[str]) -> list[KnownLine]:
        """The matcher's lines for the unexpired examples of cases still in the library, with their
        rejections counted."""
        confirmed = [Confirmed(e.case_id, e.line, e.user_id) for e in self.stored() if e.case_id in cases]
        rejected = [
            Rejected(r.case_id, r.line, r.user_id, r.reviewer) for r in self.storage.list_rejections(self.since())
        ]
        return example_lines(confirmed, self.passes, self.reviewers, rejected)
