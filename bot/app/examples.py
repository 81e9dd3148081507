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
from functools import cached_property

from bot.library.ordinary import ordinary_text
from bot.matching.casetext import case_document
from bot.matching.examples import Confirmed, Ordinary, common_words, example_lines, lines_to_keep, refusal, resembles
from bot.matching.knownlines import KnownLine
from bot.model.case import Case
from bot.model.results import MatchResult
from bot.storage.base import ExampleRecord, Storage

CASE_SAMPLE = 400  # cases read for the common words (an even sample of a larger library)

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
    _screen: tuple[object, Ordinary] | None = field(default=None, init=False, repr=False)
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
        return screen

    def since(self) -> datetime:
        return self.now() - self.retention

    def lines_of(self, result: MatchResult) -> list[str]:
        """What a confirmation of ``result`` would store (carried in its buttons' values)."""
        return lines_to_keep(result, self.screen())

    def confirm(self, case_id: str, lines: Sequence[str], user_id: str, channel: str, reply_id: int) -> int:
        """Store ``lines`` (screened again: a value is ours, but the rules may have changed) as confirmed
        by ``user_id``; returns how many were kept. Expired examples are purged on the way."""
        screen = self.screen()
        kept = tuple(line for line in dict.fromkeys(lines) if refusal(line, screen) is None)
        if not kept:
            return 0
        self.storage.purge_examples(self.since())
        return self.storage.add_examples(case_id, kept, user_id, channel, reply_id, self.now())

    def withdraw(self, case_id: str, lines: Sequence[str], user_id: str, reply_id: int) -> int:
        """``user_id`` said "Not this case": drop what they confirmed for it from this reply, and count a
        rejection against the case's stored examples that the rejected paste's lines (``lines``) are
        near-copies of, as the matcher's text stage reads them: the examples that made that answer, not
        only byte-identical lines."""
        gone = self.storage.withdraw_examples(reply_id, user_id, case_id)
        stored = dict.fromkeys(example.line for example in self.stored(case_id))
        rejected = tuple(line for line in stored if any(resembles(pasted, line) for pasted in lines))
        if rejected:
            self.storage.reject_examples(case_id, rejected)
        return gone

    def version(self) -> tuple[int, int]:
        return self.storage.examples_version(self.since())

    def stored(self, case_id: str | None = None, since: datetime | None = None) -> list[ExampleRecord]:
        """Unexpired examples (of one case; created at or after ``since``), oldest first."""
        start = max(self.since(), since) if since is not None else self.since()
        return self.storage.list_examples(start, case_id)

    def known_lines(self, cases: Container[str]) -> list[KnownLine]:
        """The matcher's lines for the unexpired examples of cases still in the library."""
        confirmed = [Confirmed(e.case_id, e.line, e.user_id) for e in self.stored() if e.case_id in cases]
        return example_lines(confirmed, self.screen(), self.reviewers)
