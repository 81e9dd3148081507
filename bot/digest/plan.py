"""The next digest: which period it covers and which cases it will carry. Pure.

One function answers for every preview (the console's and Slack's ``/incident digest``, the command line's
``digest --dry-run``), so they cannot disagree. The next digest is the latest slot's when that one is not
posted yet (the runner posts it on its next run), else the following slot's, with what is known now.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.digest.content import (
    DigestMessage,
    Reviewed,
    build_digest_messages,
    latest_slot,
    next_slot,
    nodes_message,
    period_key,
    previous_slot,
    select_new_cases,
)
from bot.model.case import Case, Lang
from bot.storage.base import DigestEntry


@dataclass(frozen=True, slots=True)
class DigestPlan:
    period_start: datetime  # both in the digest's time zone
    period_end: datetime  # the slot the digest is posted at
    cases: tuple[Case, ...]
    due: bool  # the slot has passed and its digest is not posted yet
    # (mrkdwn, plain) lines of the hosts that failed more than once in the period: the digest's last part
    nodes: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        return period_key(self.period_end)

    def messages(self, langs: Sequence[Lang], post_empty: bool) -> list[DigestMessage]:
        """What the runner posts for this plan: the cases' messages, then the nodes part when there is one."""
        messages = build_digest_messages(self.cases, self.period_start, self.period_end, langs, post_empty)
        if self.nodes:
            period = f"{self.period_start:%Y-%m-%d %H:%M} – {self.period_end:%Y-%m-%d %H:%M %Z}"
            messages.append(nodes_message(self.nodes, langs, period))
        return messages

    def as_json(self, langs: Sequence[Lang], post_empty: bool) -> dict[str, Any]:
        """The plan and its messages; ``messages`` is empty when nothing would be posted."""
        return {
            "period": {
                "start": self.period_start.isoformat(timespec="minutes"),
                "end": self.period_end.isoformat(timespec="minutes"),
                "timezone": str(self.period_end.tzinfo),
            },
            "due": self.due,
            "case_ids": [case.id for case in self.cases],
            "messages": [{"text": m.text, "blocks": m.blocks} for m in self.messages(langs, post_empty)],
        }


def plan_next_digest(
    cases: Iterable[Reviewed],
    digested_ids: set[str] | frozenset[str],
    latest_entry: DigestEntry | None,
    *,
    cron: str,
    timezone: str,
    lookback_days: int,
    now: datetime,
    lookup: Callable[[str], Case | None] | None = None,
) -> DigestPlan:
    """The next digest. ``latest_entry`` is the ledger row of the latest slot at or before ``now``.

    When that slot is not done, its digest is next: the cases its run already chose, else the undigested
    cases reviewed by the slot. Otherwise the following slot's: the undigested cases reviewed by then, as
    far as they are known now. ``cases`` may be summaries: ``lookup`` reads a chosen one in full."""
    library = list(cases)

    def whole(chosen: Iterable[Reviewed]) -> tuple[Case, ...]:
        found = (item if isinstance(item, Case) else (lookup(item.id) if lookup else None) for item in chosen)
        return tuple(case for case in found if case is not None)

    slot = latest_slot(cron, timezone, now)
    if latest_entry is None or latest_entry.status != "done":
        own = set(latest_entry.case_ids) if latest_entry is not None else set()
        if latest_entry is not None and own:
            by_id = {case.id: case for case in library}
            chosen = [by_id[case_id] for case_id in latest_entry.case_ids if case_id in by_id]
        else:
            chosen = select_new_cases(library, set(digested_ids) - own, slot, lookback_days)
        return DigestPlan(previous_slot(cron, timezone, slot), slot, whole(chosen), due=True)
    upcoming = next_slot(cron, timezone, now)
    chosen = select_new_cases(library, digested_ids, upcoming, lookback_days)
    return DigestPlan(slot, upcoming, whole(chosen), due=False)
