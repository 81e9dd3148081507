"""Node memory: every answer records the hosts it named (failed, or only reporting a collective failure),
so a host that failed before is named as such the next time, before the next job lands on it.

Hosts are compared as written, lower-case, and through ``NODE_ALIASES`` (``gpu-b07.cluster.example=gpu-b07``
makes a fully qualified name and a short one the same host). Only the team's own pastes are stored; events
older than ``NODE_RETENTION_DAYS`` are deleted as new ones arrive.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from bot.model.results import MatchResult, NodeEvent
from bot.storage.base import Storage, StorageError

log = logging.getLogger("incident_bot.nodes")


@dataclass(frozen=True)
class Where:
    """Where an answer went: the channel and the answered message's ts ("" when shown to one person)."""

    channel: str
    ts: str = ""


def parse_aliases(raw: str) -> dict[str, str]:
    """``NODE_ALIASES``: ``gpu-b07=gpu-b07.dc1.example,n7=gpu-b07`` (each name to the one it stands for)."""
    pairs = {}
    for item in raw.split(","):
        name, _, canonical = item.partition("=")
        if name.strip() and canonical.strip():
            pairs[name.strip().lower()] = canonical.strip().lower()
    return pairs


@dataclass
class NodeMemory:
    storage: Storage
    window: timedelta
    retention: timedelta
    aliases: Mapping[str, str]
    now: Callable[[], datetime]

    def canonical(self, host: str) -> str:
        """The name a host is remembered by: as written, lower-case, through ``NODE_ALIASES``."""
        name = host.strip().lower()
        return self.aliases.get(name, name)

    def events_of(self, result: MatchResult, where: Where) -> tuple[NodeEvent, ...]:
        info, best = result.suspects, result.best
        if info is None or best is None or not info.hosts:
            return ()
        pci = info.pci[0] if len(info.pci) == 1 else ""
        gpu = str(info.gpus[0]) if len(info.gpus) == 1 else ""
        now = self.now()
        hosts = dict.fromkeys(self.canonical(h) for h in list(info.hosts)[:8])
        return tuple(
            NodeEvent(host, best.case_id, best.failure_class or "", info.failed, where.channel, where.ts, now, pci, gpu)
            for host in hosts
        )

    def history(
        self, result: MatchResult, answered: Answered | None = None, where: Where | None = None
    ) -> dict[str, list[NodeEvent]]:
        """Earlier failures, within the window, of the hosts ``result`` names (newest first); a host that
        only reported a collective failure is looked up too (its own paste is never counted). With
        ``answered`` (a reply drawn again, as on a language switch) the history as that answer saw it:
        nothing from the answer itself or after it. With ``where`` (the message an answer is about) not that
        same failure (:meth:`_same_failure`)."""
        info = result.suspects
        if info is None or not info.hosts:
            return {}
        hosts = tuple(dict.fromkeys(self.canonical(h) for h in list(info.hosts)[:8]))
        try:
            events = self.storage.node_events(self.now() - self.window, hosts)
        except StorageError as exc:
            log.warning("node memory not read: %s", exc)
            return {}
        found: dict[str, list[NodeEvent]] = defaultdict(list)
        case_id = result.best.case_id if result.best is not None else ""
        here = where.channel if where is not None else answered.channel if answered is not None else None
        for event in _distinct(events):
            if not event.failed or (answered is not None and not answered.saw(event)):
                continue
            if where is not None and self._same_failure(event, where.channel, where.ts, case_id):
                continue
            # Counted wherever it happened; linked only in its own channel (no link into another one).
            found[event.host].append(event if here is None or event.channel == here else replace(event, ts=""))
        return dict(found)

    def _same_failure(self, earlier: NodeEvent, channel: str, ts: str, case_id: str) -> bool:
        """Whether ``earlier`` (of the same host) is the failure an answer in ``channel`` to message ``ts``
        ("" for an answer shown to one person) about ``case_id`` is about: the same message answered again
        (a mention in its thread, the shortcut), the same crash pasted again within ``SAME_CRASH`` in this or
        another channel (two people, or one cross-post, one failure), or the same case asked about privately
        within ``_AGAIN``."""
        if ts and earlier.ts == ts and earlier.channel == channel:
            return True
        if earlier.case_id != case_id:
            return False
        if ts:  # the same crash pasted again within SAME_CRASH, here or cross-posted to another channel
            return bool(earlier.ts) and earlier.created_at >= self.now() - SAME_CRASH
        return earlier.channel == channel and earlier.created_at >= self.now() - _AGAIN

    def purge(self) -> None:
        """Delete the events older than the retention (storage trouble is logged; the next purge retries)."""
        try:
            self.storage.add_node_events((), self.now() - self.retention)
        except StorageError as exc:
            log.warning("node memory not purged: %s", exc)

    def remember(self, result: MatchResult, where: Where) -> None:
        events = self.events_of(result, where)
        if not events:
            return
        try:
            earlier = self.storage.node_events(self.now() - self.retention, _hosts(events))
            events = tuple(
                e
                for e in events
                if not any(x.host == e.host and self._same_failure(x, e.channel, e.ts, e.case_id) for x in earlier)
            )
            self.storage.add_node_events(events, self.now() - self.retention)
        except StorageError as exc:
            log.warning("node memory not written: %s", exc)

    def repeated_between(self, start: datetime, end: datetime) -> list[tuple[str, list[NodeEvent]]]:
        """Hosts that failed more than once in ``[start, end]``, newest first."""
        by_host: dict[str, list[NodeEvent]] = defaultdict(list)
        for event in _distinct(self.storage.node_events(start)):
            if event.failed and event.created_at <= end:
                by_host[event.host].append(event)
        repeated = [(host, events) for host, events in by_host.items() if len(events) > 1]
        return sorted(repeated, key=lambda item: (item[1][0].created_at, item[0]), reverse=True)

    def repeated(self, days: int | None = None) -> list[tuple[str, list[NodeEvent]]]:
        """Hosts that failed more than once in the last ``days`` (default: the window), newest first."""
        now = self.now()
        return self.repeated_between(now - (timedelta(days=days) if days is not None else self.window), now)


@dataclass(frozen=True)
class Answered:
    """An earlier answer: its channel, the answered message and when it was made."""

    channel: str
    ts: str
    at: datetime

    def saw(self, event: NodeEvent) -> bool:
        """Whether ``event`` was already history when this answer was made (its own event, remembered a
        moment before the reply was logged, was not)."""
        own = event.channel == self.channel and (event.ts == self.ts or abs(event.created_at - self.at) < _MOMENT)
        return not own and event.created_at <= self.at


_MOMENT = timedelta(minutes=2)
SAME_CRASH = timedelta(minutes=10)  # the same case on the same host in one channel within this: one crash
_AGAIN = timedelta(hours=1)  # a private answer about the same host and case within this is the same failure


def _key(event: NodeEvent) -> tuple[str, str, str]:
    return (event.host, event.channel, event.ts)


def _hosts(events: tuple[NodeEvent, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(event.host for event in events))


def _distinct(events: list[NodeEvent]) -> list[NodeEvent]:
    """One event per host and message (rows written before answers were de-duplicated may repeat)."""
    seen: set[tuple[str, str, str]] = set()
    kept = []
    for event in events:
        if event.ts and _key(event) in seen:
            continue
        seen.add(_key(event))
        kept.append(event)
    return kept
