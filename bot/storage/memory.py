"""In-memory storage, for unit tests of the service only (every behaviour is tested on the real backends).

Same semantics as the SQLite and PostgreSQL backends within one process; nothing survives ``close``.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, cast

from bot.model.nodestate import ActionRecord, ActionStatus, AlertPost
from bot.storage.base import (
    DigestClaim,
    DigestEntry,
    DraftRecord,
    ExampleRecord,
    FeedbackCount,
    LangPref,
    NodeEvent,
    RejectionRecord,
    ReplyRecord,
    ReviewRecord,
    Vote,
)


class MemoryStorage:
    """The :class:`bot.storage.base.Storage` interface in dicts behind one lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, datetime] = {}
        self._user_lang: dict[str, LangPref] = {}
        self._channel_auto: dict[str, bool] = {}
        self._replies: list[ReplyRecord] = []
        self._feedback: dict[tuple[int, str, str], Vote] = {}
        self._digests: dict[str, DigestEntry] = {}
        self._examples: dict[tuple[str, str, str], ExampleRecord] = {}
        self._example_ids = 0
        self._rejections: dict[tuple[str, str, str], RejectionRecord] = {}
        self._rejection_ids = 0
        self._drafts: list[DraftRecord] = []
        self._reviews: list[ReviewRecord] = []
        self._nodes: list[NodeEvent] = []
        self._actions: list[ActionRecord] = []
        self._alert_bodies: list[tuple[int, str, bool]] = []
        self._alert_posts: dict[tuple[str, str], AlertPost] = {}

    def migrate(self) -> None:
        return None

    def ping(self) -> bool:
        return True

    def close(self) -> None:
        return None

    def claim_event(self, key: str, now: datetime, ttl_seconds: int) -> bool:
        with self._lock:
            expires = self._events.get(key)
            if expires is not None and expires > now:
                return False
            self._events = {k: v for k, v in self._events.items() if v > now}
            self._events[key] = now + timedelta(seconds=ttl_seconds)
            return True

    def get_user_lang(self, user_id: str) -> LangPref | None:
        return self._user_lang.get(user_id)

    def set_user_lang(self, user_id: str, lang: LangPref) -> None:
        with self._lock:
            self._user_lang[user_id] = lang

    def get_channel_auto(self, channel_id: str) -> bool:
        return self._channel_auto.get(channel_id, True)

    def set_channel_auto(self, channel_id: str, enabled: bool) -> None:
        with self._lock:
            self._channel_auto[channel_id] = enabled

    def log_reply(self, record: ReplyRecord) -> int:
        with self._lock:
            reply_id = len(self._replies) + 1
            self._replies.append(replace(record, id=reply_id))
            return reply_id

    def get_reply(self, reply_id: int) -> ReplyRecord | None:
        return self._replies[reply_id - 1] if 0 < reply_id <= len(self._replies) else None

    def last_reply_for_case(self, channel: str, case_id: str) -> datetime | None:
        times = [r.created_at for r in self._replies if r.channel == channel and r.case_ids[:1] == (case_id,)]
        return max(times, default=None)

    def replies_since(self, since: datetime) -> list[ReplyRecord]:
        chosen = [r for r in self._replies if r.created_at >= since]
        return sorted(chosen, key=lambda r: (r.created_at, r.id or 0))

    def best_case_counts(self, since: datetime, limit: int) -> list[tuple[str, int]]:
        counts = Counter(r.case_ids[0] for r in self._replies if r.created_at >= since and r.case_ids)
        return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]

    def reply_for_message(self, channel: str, message_ts: str) -> ReplyRecord | None:
        if not message_ts:
            return None
        found = [r for r in self._replies if r.channel == channel and r.message_ts == message_ts]
        return found[-1] if found else None

    def record_feedback(
        self, reply_id: int, user_id: str, case_id: str, vote: Vote, channel: str, tier: str, now: datetime
    ) -> None:
        with self._lock:
            self._feedback[(reply_id, user_id, case_id)] = vote

    def feedback_counts(self) -> list[FeedbackCount]:
        counts: dict[str, list[int]] = {}
        for (_, _, case_id), vote in self._feedback.items():
            pair = counts.setdefault(case_id, [0, 0])
            pair[0 if vote == "helpful" else 1] += 1
        return [FeedbackCount(case_id, h, n) for case_id, (h, n) in sorted(counts.items())]

    def add_examples(
        self, case_id: str, lines: tuple[str, ...], user_id: str, channel: str, reply_id: int, now: datetime
    ) -> int:
        with self._lock:
            for line in dict.fromkeys(lines):
                old = self._examples.get((case_id, user_id, line))
                self._example_ids += 1
                self._examples[(case_id, user_id, line)] = ExampleRecord(
                    case_id,
                    line,
                    user_id,
                    channel,
                    reply_id,
                    now,
                    old.rejections if old else 0,
                    old.id if old else self._example_ids,
                )
            return len(dict.fromkeys(lines))

    def withdraw_examples(self, reply_id: int, user_id: str, case_id: str) -> int:
        with self._lock:
            gone = [
                k
                for k, e in self._examples.items()
                if (e.reply_id, e.user_id, e.case_id) == (reply_id, user_id, case_id)
            ]
            for key in gone:
                del self._examples[key]
            return len(gone)

    def reject_examples(self, case_id: str, lines: tuple[str, ...], user_id: str, reviewer: bool, now: datetime) -> int:
        with self._lock:
            hit = {e.line for e in self._examples.values() if e.case_id == case_id and e.line in lines}
            for line in hit:
                key = (case_id, line, user_id)
                if key not in self._rejections:
                    self._rejection_ids += 1
                    self._rejections[key] = RejectionRecord(case_id, line, user_id, reviewer, now, self._rejection_ids)
            for key, example in self._examples.items():
                if example.case_id == case_id and example.line in hit:
                    people = sum(1 for c, line, _ in self._rejections if (c, line) == (case_id, example.line))
                    self._examples[key] = replace(example, rejections=people)
            return len(hit)

    def list_rejections(self, since: datetime) -> list[RejectionRecord]:
        found = [r for r in self._rejections.values() if r.created_at >= since]
        return sorted(found, key=lambda r: r.id or 0)

    def delete_example(self, example_id: int) -> int:
        with self._lock:
            found = next((e for e in self._examples.values() if e.id == example_id), None)
            if found is None:
                return 0
            gone = [k for k, e in self._examples.items() if (e.case_id, e.line) == (found.case_id, found.line)]
            for key in gone:
                del self._examples[key]
            for key in [k for k in self._rejections if k[:2] == (found.case_id, found.line)]:
                del self._rejections[key]
            return len(gone)

    def list_examples(self, since: datetime, case_id: str | None = None) -> list[ExampleRecord]:
        found = [e for e in self._examples.values() if e.created_at >= since and case_id in (None, e.case_id)]
        return sorted(found, key=lambda e: e.id or 0)

    def examples_version(self, since: datetime) -> tuple[int, int, int]:
        found = self.list_examples(since)
        return len(found), max((e.id or 0 for e in found), default=0), len(self.list_rejections(since))

    def purge_examples(self, before: datetime) -> int:
        with self._lock:
            old = [k for k, e in self._examples.items() if e.created_at < before]
            for key in old:
                del self._examples[key]
            for key in [k for k, r in self._rejections.items() if r.created_at < before]:
                del self._rejections[key]
            return len(old)

    def add_draft(self, draft: DraftRecord) -> int:
        with self._lock:
            same = [d for d in self._drafts if draft.form_nonce is not None and d.form_nonce == draft.form_nonce]
            if same:
                return same[0].id or 0
            self._drafts.append(replace(draft, id=len(self._drafts) + 1))
            return len(self._drafts)

    def mark_draft_exported(self, draft_id: int, case_id: str) -> None:
        with self._lock:
            if 0 < draft_id <= len(self._drafts):
                self._drafts[draft_id - 1] = replace(self._drafts[draft_id - 1], exported_as=case_id)

    def get_draft(self, draft_id: int) -> DraftRecord | None:
        return self._drafts[draft_id - 1] if 0 < draft_id <= len(self._drafts) else None

    def list_drafts(self) -> list[DraftRecord]:
        return list(reversed(self._drafts))

    def add_review(self, review: ReviewRecord) -> int:
        with self._lock:
            self._reviews.append(replace(review, id=len(self._reviews) + 1))
            return len(self._reviews)

    def list_reviews(self, case_id: str | None = None) -> list[ReviewRecord]:
        found = [r for r in self._reviews if case_id in (None, r.case_id)]
        return sorted(found, key=lambda r: (r.reviewed_at, r.id or 0))

    def add_node_events(self, events: tuple[NodeEvent, ...], purge_before: datetime) -> None:
        with self._lock:
            self._nodes = [e for e in self._nodes if e.created_at >= purge_before]
            for event in events:
                self._nodes.append(replace(event, id=len(self._nodes) + 1))

    def node_events(self, since: datetime, hosts: tuple[str, ...] | None = None) -> list[NodeEvent]:
        found = [e for e in self._nodes if e.created_at >= since and (hosts is None or e.host in hosts)]
        return sorted(found, key=lambda e: (e.created_at, e.id or 0), reverse=True)

    def add_action(self, record: ActionRecord) -> int:
        with self._lock:
            self._actions.append(replace(record, id=len(self._actions) + 1))
            return len(self._actions)

    def decide_action(
        self, action_id: int, expected: str, status: str, *, answer: str, approved_by: str, decided_at: datetime
    ) -> bool:
        with self._lock:
            if not 0 < action_id <= len(self._actions) or self._actions[action_id - 1].status != expected:
                return False
            old = self._actions[action_id - 1]
            self._actions[action_id - 1] = replace(
                old,
                status=cast(ActionStatus, status),
                answer=answer,
                approved_by=approved_by,
                decided_at=decided_at,
            )
            return True

    def get_action(self, action_id: int) -> ActionRecord | None:
        return self._actions[action_id - 1] if 0 < action_id <= len(self._actions) else None

    def list_actions(self, since: datetime, node: str | None = None) -> list[ActionRecord]:
        found = [a for a in self._actions if a.created_at >= since and (node is None or a.node == node)]
        return sorted(found, key=lambda a: (a.created_at, a.id or 0), reverse=True)

    def add_alert_notification(self, received_at: datetime, group_key: str, status: str, body: str) -> int:
        with self._lock:
            self._alert_bodies.append((len(self._alert_bodies) + 1, body, False))
            return len(self._alert_bodies)

    def pending_alert_notifications(self, limit: int = 50) -> list[tuple[int, str]]:
        return [(i, body) for i, body, done in self._alert_bodies if not done][:limit]

    def finish_alert_notification(self, notification_id: int) -> None:
        with self._lock:
            i, body, _ = self._alert_bodies[notification_id - 1]
            self._alert_bodies[notification_id - 1] = (i, body, True)

    def claim_alert_post(self, post: AlertPost) -> AlertPost | None:
        with self._lock:
            key = (post.group_key, post.node)
            if key in self._alert_posts:
                return None
            self._alert_posts[key] = replace(post, id=len(self._alert_posts) + 1)
            return self._alert_posts[key]

    def get_alert_post(self, group_key: str, node: str) -> AlertPost | None:
        return self._alert_posts.get((group_key, node))

    def update_alert_post(self, post_id: int, **changes: Any) -> None:
        with self._lock:
            for key, post in self._alert_posts.items():
                if post.id == post_id:
                    self._alert_posts[key] = replace(post, **changes)

    def digested_case_ids(self) -> set[str]:
        return {case_id for entry in self._digests.values() for case_id in entry.case_ids}

    def claim_digest(self, period_key: str, owner: str, now: datetime, lease_seconds: int) -> DigestClaim | None:
        lease_until = now + timedelta(seconds=lease_seconds)
        with self._lock:
            entry = self._digests.get(period_key)
            if entry is None:
                entry = DigestEntry(period_key, "claimed", owner, 1, lease_until)
            elif entry.status == "claimed" and entry.lease_until <= now:
                entry = replace(entry, owner=owner, attempt=entry.attempt + 1, lease_until=lease_until)
            else:
                return None
            self._digests[period_key] = entry
            return DigestClaim(period_key, owner, entry.attempt, lease_until)

    def _update(self, period_key: str, owner: str, **changes: object) -> bool:
        with self._lock:
            entry = self._digests.get(period_key)
            if entry is None or entry.owner != owner or entry.status != "claimed":
                return False
            self._digests[period_key] = replace(entry, **changes)  # type: ignore[arg-type]
            return True

    def record_digest_cases(self, period_key: str, owner: str, case_ids: tuple[str, ...]) -> None:
        self._update(period_key, owner, case_ids=tuple(case_ids))

    def renew_digest(self, period_key: str, owner: str, now: datetime, lease_seconds: int) -> bool:
        return self._update(period_key, owner, lease_until=now + timedelta(seconds=lease_seconds))

    def complete_digest(self, period_key: str, owner: str, message_ts: tuple[str, ...], now: datetime) -> bool:
        return self._update(period_key, owner, status="done", message_ts=tuple(message_ts), completed_at=now)

    def get_digest(self, period_key: str) -> DigestEntry | None:
        return self._digests.get(period_key)

    def list_digests(self) -> list[DigestEntry]:
        return [self._digests[key] for key in sorted(self._digests, reverse=True)]
