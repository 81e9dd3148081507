"""Drain and resume a node from a reply, guarded for a 3 am button and audited.

Who may: ``OPERATORS`` (checked by the caller, which resolves user groups like ``REVIEWERS``). What is
refused, each with one line saying why: a node the scheduler does not know, a node already drained (its
reason is shown), a scheduler that cannot be asked. More than ``DRAIN_LIMIT_PER_HOUR`` drains in an hour,
workspace-wide, need a second operator: the request waits ``APPROVAL_MINUTES`` for another operator's
approval, then expires. ``DRY_RUN_ACTIONS`` records and shows what would run. A resume is for a drain the
bot made (the node's reason is still the one it set), or overrides an admin's drain with a note. Every
request and action is stored with who, when, the node, the reason, the command and the scheduler's answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from bot.app.nodestates import NodeStates
from bot.model.nodestate import ActionRecord, ActionStatus, NodeState
from bot.scheduler.slurm_control import SlurmControl, safe_reason
from bot.storage import Storage

APPROVAL_MINUTES = 15
DRAINED = ("drained", "draining")


@dataclass(frozen=True, slots=True)
class DrainPolicy:
    limit_per_hour: int = 3
    dry_run: bool = False
    timeout_s: float = 10.0


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened, for the thread: ``status`` is ``done``, ``failed``, ``refused``, ``pending`` (a second
    operator must approve: ``action_id``), ``expired`` or ``dry-run``."""

    status: str
    message: str
    action_id: int | None = None
    command: str = ""


def drain_reason(case_id: str, gist: str, link: str) -> str:
    """The reason prefilled in the form: ``Xid 79 — IL-0415 — <thread link>``."""
    return safe_reason(" — ".join(part for part in (gist, case_id, link) if part))


class Drains:
    def __init__(
        self,
        storage: Storage,
        states: NodeStates,
        control: SlurmControl,
        policy: DrainPolicy,
        now: Callable[[], datetime],
    ) -> None:
        self.storage = storage
        self.states = states
        self.control = control
        self.policy = policy
        self._now = now

    def state_of(self, node: str) -> tuple[NodeState | None, str | None]:
        """The node's state now, or the reason it cannot be acted on."""
        found = self.states.lookup([node])
        if found.error is not None:
            return None, "the scheduler could not be asked; nothing was changed"
        state = found.states.get(node)
        if state is None:
            return None, f"{node} is not a node the scheduler knows; nothing was changed"
        return state, None

    def drains_last_hour(self) -> int:
        since = self._now() - timedelta(hours=1)
        return sum(1 for a in self.storage.list_actions(since) if a.kind == "drain" and a.status == "done")

    def _store(self, record: ActionRecord) -> int:
        return self.storage.add_action(record)

    def request(self, user: str, node: str, reason: str, channel: str, thread_ts: str) -> Outcome:
        """Drain ``node`` for operator ``user`` (already checked), or ask for a second operator."""
        reason = safe_reason(reason)
        command = self.control.command(node, "drain", reason)
        base = ActionRecord("drain", node, reason, user, channel, thread_ts, "refused", self._now(), command=command)
        state, problem = self.state_of(node)
        if problem is not None or state is None:
            self._store(replace(base, answer=problem or ""))
            return Outcome("refused", problem or "", command=command)
        if state.state in DRAINED:
            said = f"{node} is {state.state} already" + (f" (reason: {state.reason})" if state.reason else "")
            self._store(replace(base, answer=said))
            return Outcome("refused", said + "; nothing was changed", command=command)
        if self.drains_last_hour() >= self.policy.limit_per_hour:
            action_id = self._store(replace(base, status="pending"))
            said = (
                f"more than {self.policy.limit_per_hour} drains in the last hour: another operator must approve "
                f"the drain of {node} within {APPROVAL_MINUTES} minutes"
            )
            return Outcome("pending", said, action_id, command)
        return self._run(base)

    def _run(self, record: ActionRecord, approved_by: str = "", action_id: int | None = None) -> Outcome:
        if self.policy.dry_run:
            self._save(record, "dry-run", "not run (DRY_RUN_ACTIONS)", approved_by, action_id)
            return Outcome("dry-run", f"would run: {record.command}", action_id, record.command)
        if record.kind == "drain":
            result = self.control.drain(record.node, record.reason, self.policy.timeout_s)
        else:
            result = self.control.resume(record.node, self.policy.timeout_s)
        status: ActionStatus = "done" if result.ok else "failed"
        if not result.ok and record.kind == "resume":
            # scontrol clears the drain of a node that is down or not responding and still exits 1 ("Invalid
            # node state specified"): what counts is whether the drain is gone.
            state, _ = self.state_of(record.node)
            if state is not None and state.state not in DRAINED:
                status = "done"
        saved = self._save(record, status, result.answer, approved_by, action_id)
        return Outcome(status, result.answer, saved, result.command)

    def _save(
        self, record: ActionRecord, status: ActionStatus, answer: str, approved_by: str, action_id: int | None
    ) -> int:
        if action_id is None:
            done = replace(record, status=status, answer=answer, approved_by=approved_by, decided_at=self._now())
            return self._store(done)
        self.storage.decide_action(
            action_id, "running", status, answer=answer, approved_by=approved_by, decided_at=self._now()
        )
        return action_id

    def approve(self, action_id: int, user: str) -> Outcome:
        """A second operator (already checked) approves a pending drain; the requester cannot."""
        pending = self.storage.get_action(action_id)
        if pending is None or pending.status != "pending":
            return Outcome("refused", "this request was already decided or does not exist")
        if pending.user_id == user:
            return Outcome("refused", "another operator must approve: not the one who asked")
        if self._now() - pending.created_at > timedelta(minutes=APPROVAL_MINUTES):
            self.storage.decide_action(
                action_id, "pending", "expired", answer="", approved_by="", decided_at=self._now()
            )
            return Outcome("expired", f"the request expired after {APPROVAL_MINUTES} minutes; nothing was changed")
        # Claim it before running, so two approvals at once run it once (across replicas).
        if not self.storage.decide_action(
            action_id, "pending", "running", answer="", approved_by=user, decided_at=self._now()
        ):
            return Outcome("refused", "this request was already decided")
        state, problem = self.state_of(pending.node)
        if problem is not None or state is None or state.state in DRAINED:
            said = problem or f"{pending.node} is {state.state if state else '?'} already; nothing was changed"
            self.storage.decide_action(
                action_id, "running", "refused", answer=said, approved_by=user, decided_at=self._now()
            )
            return Outcome("refused", said)
        return self._run(pending, user, action_id)

    def made_by_bot(self, node: str, state: NodeState) -> bool:
        """Whether the node's drain is one the bot made: its latest done drain of ``node`` set the reason the
        node still holds."""
        for action in self.storage.list_actions(self._now() - timedelta(days=365), node):
            if action.kind == "drain" and action.status == "done":
                return state.reason == action.reason
        return False

    def resume(self, user: str, node: str, channel: str, thread_ts: str, *, override: bool, note: str) -> Outcome:
        command = self.control.command(node, "resume")
        base = ActionRecord(
            "resume", node, note.strip(), user, channel, thread_ts, "refused", self._now(), command=command
        )
        state, problem = self.state_of(node)
        if problem is not None or state is None:
            self._store(replace(base, answer=problem or ""))
            return Outcome("refused", problem or "", command=command)
        if state.state not in DRAINED and state.state != "down":
            said = f"{node} is {state.state}, not drained; nothing was changed"
            self._store(replace(base, answer=said))
            return Outcome("refused", said, command=command)
        if not self.made_by_bot(node, state) and (not override or not note.strip()):
            said = f"{node} was drained by someone else (reason: {state.reason or '?'}): override it with a note"
            self._store(replace(base, answer=said))
            return Outcome("refused", said, command=command)
        return self._run(base)
