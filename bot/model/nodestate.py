"""What the site's scheduler says about a node right now, and the interface its adapters implement. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

# The states a reply names; Slurm's base states and flags map onto them (bot.scheduler.slurm_state).
State = Literal["idle", "allocated", "mixed", "drained", "draining", "down", "unknown"]


@dataclass(frozen=True, slots=True)
class NodeState:
    name: str
    state: State
    not_responding: bool = False
    reason: str | None = None  # why an admin (or the bot) drained it, as the scheduler holds it
    reason_by: str | None = None  # who set the reason
    reason_at: datetime | None = None  # when
    jobs: int = 0  # jobs running on it now
    users: tuple[str, ...] = ()  # their owners, distinct, sorted
    failed_24h: int | None = None  # jobs that failed on it in the last 24 h; None: accounting not reachable
    raw_state: str = ""  # the scheduler's own word for it (IDLE+DRAIN, mixed*, ...)


@dataclass(frozen=True, slots=True)
class Lookup:
    """One question to the scheduler about some nodes: each named node's state (None: the scheduler does not
    know that name), or ``error`` when it could not be asked (down, slow, garbage)."""

    states: Mapping[str, NodeState | None] = field(default_factory=dict)
    error: str | None = None  # "unreachable", "timeout", "garbage": never the scheduler's own text
    source: str = ""  # "slurm-cli" or "slurm-rest"


class SchedulerError(Exception):
    """The scheduler could not be asked or did not answer in a form we read. ``kind`` is one of
    ``unreachable``, ``timeout``, ``garbage``."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind


class Scheduler(Protocol):
    """A read-only view of the site's scheduler. ``nodes`` answers within ``timeout_s`` or raises
    :class:`SchedulerError`; it never blocks longer."""

    name: str

    def nodes(self, names: Sequence[str], timeout_s: float) -> dict[str, NodeState | None]: ...


# What an operator did to a node from Slack, or asked for (``bot.app.drains``): the audit trail.
ActionKind = Literal["drain", "resume"]
ActionStatus = Literal["pending", "running", "done", "failed", "refused", "expired", "dry-run"]


@dataclass(frozen=True, slots=True)
class ActionRecord:
    kind: ActionKind
    node: str
    reason: str
    user_id: str  # who asked (and, unless approved by another, who confirmed)
    channel: str
    thread_ts: str
    status: ActionStatus
    created_at: datetime
    answer: str = ""  # the scheduler's answer, trimmed (exit status and its first line)
    approved_by: str = ""  # the second operator, when the hourly limit asked for one
    decided_at: datetime | None = None
    command: str = ""  # the exact command that ran (or would run)
    id: int | None = None


@dataclass(frozen=True, slots=True)
class AlertPost:
    """The message that answers one alert group on one node (``bot.app.alerts``): claimed once across
    replicas (group key and node are unique), then posted, followed up in its thread and updated when it
    resolves."""

    group_key: str
    node: str
    channel: str
    status: str  # "claimed" (being posted), "firing", "resolved"
    fingerprints: str  # the alerts' fingerprints, sorted, comma-separated: a re-sent notification matches
    created_at: datetime
    ts: str = ""
    case_id: str = ""
    updated_at: datetime | None = None
    id: int | None = None
