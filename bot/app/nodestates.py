"""The scheduler's view of the nodes a reply names, asked within a bound and never raising: a slow, down
or garbage-answering scheduler is a ``Lookup`` with ``error`` set (and a metric), never an exception."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.model.nodestate import Lookup, Scheduler, SchedulerError
from bot.ops.metrics import Metrics

log = logging.getLogger(__name__)
MAX_NODES = 8  # a reply names at most this many hosts


class NodeStates:
    def __init__(self, scheduler: Scheduler, timeout_s: float, metrics: Metrics | None = None) -> None:
        self.scheduler = scheduler
        self.timeout_s = timeout_s
        self._metrics = metrics

    def _count(self, outcome: str) -> None:
        if self._metrics is not None:
            self._metrics.scheduler_lookups.labels(source=self.scheduler.name, outcome=outcome).inc()

    def lookup(self, hosts: Sequence[str]) -> Lookup:
        names = list(dict.fromkeys(hosts))[:MAX_NODES]
        if not names:
            return Lookup(source=self.scheduler.name)
        try:
            states = self.scheduler.nodes(names, self.timeout_s)
        except SchedulerError as failed:
            log.warning("scheduler %s: %s", self.scheduler.name, failed.kind)
            self._count(failed.kind)
            return Lookup(error=failed.kind, source=self.scheduler.name)
        except Exception:  # any adapter bug must leave the reply as it is
            log.warning("scheduler %s: unexpected error", self.scheduler.name, exc_info=True)
            self._count("garbage")
            return Lookup(error="garbage", source=self.scheduler.name)
        self._count("ok")
        return Lookup(states=states, source=self.scheduler.name)
