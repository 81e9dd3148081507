"""The weekly digest as the service sees it: which cases may go in (the later of a file's review date and
its stored reviews), the repeat-nodes part, the next digest's plan and its preview. The runner
(``bot.digest.runner``) posts what ``candidates`` and ``nodes`` give it; the preview and ``digest --dry-run``
read ``plan``, so all three agree.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from bot.app.drafts import WithReview
from bot.app.nodes import NodeMemory
from bot.digest.content import latest_slot, period_key
from bot.digest.plan import DigestPlan, plan_next_digest
from bot.library.case_store import CaseLibrary
from bot.model.case import Lang
from bot.model.results import Reply, ReviewRecord
from bot.replies.drain import action_lines
from bot.replies.labels import label
from bot.replies.nodes import host_lines
from bot.storage.base import DigestEntry, Storage, StorageError

log = logging.getLogger("incident_bot.service")


@dataclass(frozen=True)
class DigestTiming:
    """``DIGEST_CRON``, ``DIGEST_TIMEZONE``, ``DIGEST_LOOKBACK_DAYS`` and ``DIGEST_POST_EMPTY``."""

    cron: str = "0 9 * * mon"
    timezone: str = "Asia/Seoul"
    lookback_days: int = 30
    post_empty: bool = False


class DigestDesk:
    def __init__(
        self,
        storage: Storage,
        nodes: NodeMemory,
        library: Callable[[], CaseLibrary],
        reviews: Callable[[], dict[str, ReviewRecord]],
        now: Callable[[], datetime],
        schedule: DigestTiming,
    ) -> None:
        self.storage, self.nodes, self.library, self.reviews = storage, nodes, library, reviews
        self.now, self.schedule = now, schedule

    def candidates(self) -> list[WithReview]:
        """What may go into a digest: every case, reviewed at the later of its file's review date and its
        stored reviews (the digest runner and the preview both read this)."""
        stored = self.reviews()
        summaries = self.library().summaries.values()
        return [WithReview(s, stored[s.id].reviewed_at if s.id in stored else None) for s in summaries]

    def nodes_part(self, start: datetime, end: datetime) -> list[tuple[str, str]]:
        """The digest's node section: hosts that failed more than once in its period (storage trouble: none)."""
        try:
            # No thread links: the digest channel's readers may not read the channels the failures were in.
            hosts = host_lines(self.nodes.repeated_between(start, end), "en", linked=lambda _event: False)
            taken = [a for a in self.storage.list_actions(start) if a.created_at < end]
            return [*hosts, *action_lines(taken)]
        except StorageError as exc:
            log.warning("node memory not read for the digest: %s", exc)
            return []

    def plan(self) -> DigestPlan:
        """The next digest that posts: its period (in the digest's time zone) and the cases it will carry;
        the same answer the command line's ``digest --dry-run`` gives. When the due digest would post
        nothing (no case, no repeat node, ``DIGEST_POST_EMPTY`` off), its run only marks the slot done, so
        the next one is the following slot's, with the reviews known now."""
        now, schedule = self.now(), self.schedule
        key = period_key(latest_slot(schedule.cron, schedule.timezone, now))
        plan = self._plan(self.storage.get_digest(key), now)
        if plan.due and not plan.cases and not plan.nodes and not schedule.post_empty:
            plan = self._plan(DigestEntry(key, "done", "", 0, now), now)
        return plan

    def _plan(self, latest: DigestEntry | None, now: datetime) -> DigestPlan:
        schedule = self.schedule
        plan = plan_next_digest(
            self.candidates(),
            self.storage.digested_case_ids(),
            latest,
            cron=schedule.cron,
            timezone=schedule.timezone,
            lookback_days=schedule.lookback_days,
            now=now,
            lookup=self.library().cases.get,
        )
        nodes = tuple(self.nodes_part(plan.period_start, plan.period_end))
        return replace(plan, nodes=nodes) if nodes else plan

    def preview(self, langs: Sequence[Lang]) -> Reply:
        """What the next digest will post, as one reply (the first message; a note says if more follow)."""
        plan = self.plan()
        messages = plan.messages(langs, post_empty=True)
        first = messages[0]
        when = "due now" if plan.due else f"posts at {plan.period_end:%Y-%m-%d %H:%M %Z}"
        notes = [f"Digest preview, nothing is posted ({when})."]
        if not plan.cases and not self.schedule.post_empty:
            notes.append("No new case: nothing will be posted (DIGEST_POST_EMPTY is off).")
        if not plan.cases:
            notes.append(label("digest.how_reviewed", langs[0]))
        if len(messages) > 1:
            notes.append(f"(+{len(messages) - 1} more message(s))")
        plain = "\n".join([*notes, *(m.text for m in messages)])
        return Reply(
            text=first.text + "\n" + " ".join(notes), blocks=first.blocks, plain=plain, case_ids=list(first.case_ids)
        )
