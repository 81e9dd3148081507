"""Confirmed examples, the use case: what a confirmation stores, and the matcher's example lines.

A Helpful vote, or "It was …" in Other matches, stores the paste's lines for the case (redacted and
screened in ``bot.matching.examples``); "Not this case" from the same person withdraws theirs. Examples live
in the database, so every replica sees them: :meth:`ExampleBook.version` is one cheap query, and the
service rebuilds the matcher's example index when it changed (``IncidentService.refresh_examples``, run by
the reload watcher every ``CASES_RELOAD_SECONDS``). They expire after ``EXAMPLE_RETENTION_DAYS``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property

from bot.library.ordinary import ordinary_text
from bot.matching.examples import Confirmed, Ordinary, example_lines, lines_to_keep, refusal
from bot.matching.knownlines import KnownLine
from bot.model.results import MatchResult
from bot.storage.base import ExampleRecord, Storage

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

    @cached_property
    def ordinary(self) -> Ordinary:
        chat, negatives = ordinary_text()
        return Ordinary(chat + "\n" + negatives)

    def since(self) -> datetime:
        return self.now() - self.retention

    def lines_of(self, result: MatchResult) -> list[str]:
        """What a confirmation of ``result`` would store (carried in its buttons' values)."""
        return lines_to_keep(result, self.ordinary)

    def confirm(self, case_id: str, lines: Sequence[str], user_id: str, channel: str, reply_id: int) -> int:
        """Store ``lines`` (screened again: a value is ours, but the rules may have changed) as confirmed
        by ``user_id``; returns how many were kept. Expired examples are purged on the way."""
        kept = tuple(line for line in dict.fromkeys(lines) if refusal(line, self.ordinary) is None)
        if not kept:
            return 0
        self.storage.purge_examples(self.since())
        return self.storage.add_examples(case_id, kept, user_id, channel, reply_id, self.now())

    def withdraw(self, case_id: str, lines: Sequence[str], user_id: str, reply_id: int) -> int:
        """``user_id`` said "Not this case": drop what they confirmed for it from this reply, and count a
        rejection against the case's examples among ``lines``."""
        gone = self.storage.withdraw_examples(reply_id, user_id, case_id)
        self.storage.reject_examples(case_id, tuple(lines))
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
        return example_lines(confirmed, self.ordinary, self.reviewers)
