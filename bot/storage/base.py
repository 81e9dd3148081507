"""The storage interface: digest ledger, event dedupe, preferences, reply log and feedback.

Two real backends implement it (SQLite, the default, and PostgreSQL for several bot processes); an
in-memory one exists only for unit tests of the service. All times are timezone-aware UTC datetimes
passed in by the caller, so behaviour is testable with an injected clock. Every method is synchronous
and short; async callers run them with ``asyncio.to_thread``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from bot.model.case import LangPref
from bot.model.nodestate import ActionRecord, AlertPost
from bot.model.results import DraftRecord, ExampleRecord, NodeEvent, RejectionRecord, ReviewRecord, Vote

__all__ = [
    "DigestClaim",
    "DigestEntry",
    "DraftRecord",
    "ExampleRecord",
    "FeedbackCount",
    "LangPref",
    "NodeEvent",
    "RejectionRecord",
    "ReplyRecord",
    "ReviewRecord",
    "Storage",
    "StorageError",
    "StorageMisconfigured",
    "StorageUnavailable",
    "Vote",
    "line_key",
]


def line_key(line: str) -> str:
    """The key an example line is stored under (its SHA-256): one row per case, user and line."""
    return hashlib.sha256(line.encode()).hexdigest()


class StorageError(Exception):
    """Storage failed; ``str(error)`` is one line naming the setting and the cause, never a password."""


class StorageMisconfigured(StorageError):
    """The settings cannot work (a bad URL, a missing database, an unwritable directory): fix and restart."""


class StorageUnavailable(StorageError):
    """The database cannot be reached now (refused, timed out, locked): worth retrying."""


@dataclass(frozen=True, slots=True)
class ReplyRecord:
    """One reply the bot posted (or showed) for a match."""

    channel: str
    message_ts: str  # ts of the bot's own reply message ("" when ephemeral)
    thread_ts: str  # ts of the message that was answered (thread parent)
    case_ids: tuple[str, ...]  # best first
    tier: str
    created_at: datetime
    source: str = "auto"  # auto | command | mention | dm | shortcut
    id: int | None = None


@dataclass(frozen=True, slots=True)
class FeedbackCount:
    case_id: str
    helpful: int
    not_helpful: int


@dataclass(frozen=True, slots=True)
class DigestClaim:
    """A claimed digest period. ``attempt`` counts claims (1 on the first; >1 after a lease expired)."""

    period_key: str
    owner: str
    attempt: int
    lease_until: datetime


@dataclass(frozen=True, slots=True)
class DigestEntry:
    period_key: str
    status: Literal["claimed", "done"]
    owner: str
    attempt: int
    lease_until: datetime
    case_ids: tuple[str, ...] = field(default_factory=tuple)
    message_ts: tuple[str, ...] = field(default_factory=tuple)
    completed_at: datetime | None = None


class Storage(Protocol):
    # lifecycle -------------------------------------------------------------------------------------
    def migrate(self) -> None:
        """Create or upgrade the schema. Idempotent; safe to run from several processes at once."""

    def ping(self) -> bool:
        """True when the backend answers a trivial query."""

    def close(self) -> None: ...

    # event dedupe -------------------------------------------------------------------------------------
    def claim_event(self, key: str, now: datetime, ttl_seconds: int) -> bool:
        """Atomically record ``key``; True only for the first caller while the key is unexpired.

        Used for Slack ``event_id``s and ``(channel, ts)`` pairs, across processes.
        Expired keys may be purged opportunistically.
        """

    # preferences --------------------------------------------------------------------------------------
    def get_user_lang(self, user_id: str) -> LangPref | None: ...

    def set_user_lang(self, user_id: str, lang: LangPref) -> None: ...

    def get_channel_auto(self, channel_id: str) -> bool:
        """Whether automatic replies are on for a channel (default True)."""

    def set_channel_auto(self, channel_id: str, enabled: bool) -> None: ...

    # reply log ----------------------------------------------------------------------------------------
    def log_reply(self, record: ReplyRecord) -> int:
        """Store a reply; returns its id."""

    def get_reply(self, reply_id: int) -> ReplyRecord | None: ...

    def last_reply_for_case(self, channel: str, case_id: str) -> datetime | None:
        """When the bot last replied with ``case_id`` as best case in ``channel`` (noise window)."""

    def replies_since(self, since: datetime) -> list[ReplyRecord]:
        """Replies created at or after ``since``, oldest first."""

    def best_case_counts(self, since: datetime, limit: int) -> list[tuple[str, int]]:
        """How many replies since ``since`` named each case best, most first (then case id), at most
        ``limit`` cases: counted by the database, not read row by row (App Home)."""

    def reply_for_message(self, channel: str, message_ts: str) -> ReplyRecord | None:
        """The reply logged for the bot's message ``message_ts`` in ``channel`` (the newest when several),
        else None. How a button click on a posted reply finds its reply-log entry."""

    # feedback -----------------------------------------------------------------------------------------
    def record_feedback(
        self, reply_id: int, user_id: str, case_id: str, vote: Vote, channel: str, tier: str, now: datetime
    ) -> None:
        """One vote per user per reply and case; a later vote replaces the earlier one."""

    def feedback_counts(self) -> list[FeedbackCount]:
        """Per case, sorted by case id."""

    # confirmed examples -------------------------------------------------------------------------------
    def add_examples(
        self, case_id: str, lines: tuple[str, ...], user_id: str, channel: str, reply_id: int, now: datetime
    ) -> int:
        """Store each line as confirmed by ``user_id`` (a repeat refreshes its time); returns how many."""

    def withdraw_examples(self, reply_id: int, user_id: str, case_id: str) -> int:
        """Drop what ``user_id`` confirmed for ``case_id`` from reply ``reply_id``; returns how many."""

    def reject_examples(self, case_id: str, lines: tuple[str, ...], user_id: str, reviewer: bool, now: datetime) -> int:
        """Record ``user_id``'s "Not this case" against the stored examples of ``case_id`` equal to one of
        ``lines`` (once per person and line; ``rejections`` becomes the number of people); returns how many
        stored lines it touched."""

    def list_rejections(self, since: datetime) -> list[RejectionRecord]:
        """Rejections recorded at or after ``since``, oldest first."""

    def delete_example(self, example_id: int) -> int:
        """Delete example ``example_id``'s line for its case, whoever confirmed it, and its rejections;
        returns how many rows of examples went (0: no such example)."""

    def list_examples(self, since: datetime, case_id: str | None = None) -> list[ExampleRecord]:
        """Examples created at or after ``since`` (optionally of one case), oldest first."""

    def examples_version(self, since: datetime) -> tuple[int, int, int]:
        """(count, largest id, rejections) of the examples and rejections created at or after ``since``:
        changes with every add, withdrawal, rejection, deletion and expiry, so a reloader can tell when to
        rebuild."""

    def purge_examples(self, before: datetime) -> int:
        """Delete examples and rejections created before ``before`` (retention); returns how many examples."""

    # drafts and reviews ------------------------------------------------------------------------------
    def add_draft(self, draft: DraftRecord) -> int:
        """Store a draft; returns its id. A draft whose ``form_nonce`` is already stored is not stored again:
        the id of the one stored is returned."""

    def mark_draft_exported(self, draft_id: int, case_id: str) -> None:
        """Remember that draft ``draft_id`` was exported as ``case_id``."""

    def get_draft(self, draft_id: int) -> DraftRecord | None: ...

    def list_drafts(self) -> list[DraftRecord]:
        """Every draft, newest first."""

    def add_review(self, review: ReviewRecord) -> int:
        """Store a review; returns its id."""

    def list_reviews(self, case_id: str | None = None) -> list[ReviewRecord]:
        """Reviews (of one case), oldest first."""

    # node memory -------------------------------------------------------------------------------------
    def add_node_events(self, events: tuple[NodeEvent, ...], purge_before: datetime) -> None:
        """Store the hosts an answer named; events older than ``purge_before`` are deleted on the way."""

    def node_events(self, since: datetime, hosts: tuple[str, ...] | None = None) -> list[NodeEvent]:
        """Events created at or after ``since`` (of ``hosts``, as stored), newest first."""

    # actions on nodes ---------------------------------------------------------------------------------
    def add_action(self, record: ActionRecord) -> int:
        """Store an action or a request (drain, resume); returns its id."""

    def decide_action(
        self, action_id: int, expected: str, status: str, *, answer: str, approved_by: str, decided_at: datetime
    ) -> bool:
        """Move action ``action_id`` from ``expected`` to ``status``; False when it was not ``expected``
        (someone else decided it first). Atomic across processes."""

    def get_action(self, action_id: int) -> ActionRecord | None: ...

    def list_actions(self, since: datetime, node: str | None = None) -> list[ActionRecord]:
        """Actions created at or after ``since`` (on ``node``), newest first."""

    # alerts -------------------------------------------------------------------------------------------
    def add_alert_notification(self, received_at: datetime, group_key: str, status: str, body: str) -> int:
        """Store an Alertmanager notification before it is acknowledged; returns its id."""

    def pending_alert_notifications(self, limit: int = 50) -> list[tuple[int, str]]:
        """(id, body) of notifications not yet handled, oldest first."""

    def finish_alert_notification(self, notification_id: int) -> None: ...

    def claim_alert_post(self, post: AlertPost) -> AlertPost | None:
        """Claim the message for (group key, node); None when another process claimed it first."""

    def get_alert_post(self, group_key: str, node: str) -> AlertPost | None: ...

    def update_alert_post(self, post_id: int, **changes: Any) -> None: ...

    # digest ledger ------------------------------------------------------------------------------------
    def digested_case_ids(self) -> set[str]:
        """Case ids that appeared in a completed digest, or in a claimed one (so they are not re-picked)."""

    def claim_digest(self, period_key: str, owner: str, now: datetime, lease_seconds: int) -> DigestClaim | None:
        """Claim a period for posting. None when it is done, or claimed by someone whose lease has not
        expired. A claim whose lease expired is taken over (``attempt`` + 1). Atomic across processes."""

    def record_digest_cases(self, period_key: str, owner: str, case_ids: tuple[str, ...]) -> None:
        """Remember which cases the claimed period is about to post (before posting)."""

    def renew_digest(self, period_key: str, owner: str, now: datetime, lease_seconds: int) -> bool:
        """Extend the lease to ``now + lease_seconds`` if ``owner`` still holds the claim (added for the
        digest runner, which renews before each post so a slow post is not taken over); False when lost."""

    def complete_digest(self, period_key: str, owner: str, message_ts: tuple[str, ...], now: datetime) -> bool:
        """Mark the period done if ``owner`` still holds it; False when the claim was lost."""

    def get_digest(self, period_key: str) -> DigestEntry | None: ...

    def list_digests(self) -> list[DigestEntry]:
        """Every ledger row, newest period first."""
