"""The storage interface on SQLite or PostgreSQL: every query written once with SQLAlchemy Core.

Cross-process atomicity comes from single ``INSERT ... ON CONFLICT DO UPDATE ... WHERE`` statements (event
dedupe, digest claims and lease takeover) and owner-conditional ``UPDATE``s; on SQLite every write runs in
``BEGIN IMMEDIATE`` (``bot.storage.dialects``). The schema is Alembic's (``bot.storage.migrate``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Connection, Row, case, func, select, update
from sqlalchemy.exc import InterfaceError, OperationalError, SQLAlchemyError

from bot.storage.base import (
    DigestClaim,
    DigestEntry,
    FeedbackCount,
    LangPref,
    ReplyRecord,
    StorageMisconfigured,
    Vote,
)
from bot.storage.dialects import IMMEDIATE, first_line, insert_for, make_engine, storage_error, where_of
from bot.storage.schema import (
    channel_prefs,
    digests,
    events,
    feedback,
    replies,
    user_prefs,
)
from bot.storage.sql_actions import ActionTables
from bot.storage.sql_alerts import AlertTables
from bot.storage.sql_learning import LearningTables

_PURGE_EVERY = 100


class SqlStorage(LearningTables, ActionTables, AlertTables):
    """The :class:`bot.storage.base.Storage` interface for a ``DATABASE_URL``; thread-safe (a small
    connection pool). Open it with :func:`bot.storage.open_storage`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._insert = insert_for(self.engine)
        self._calls = 0

    # plumbing --------------------------------------------------------------------------------------
    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """A write transaction (on SQLite it takes the write lock at once)."""
        try:
            with self.engine.connect() as conn:
                conn.info[IMMEDIATE] = True
                with conn.begin():
                    yield conn
        except SQLAlchemyError as exc:
            raise storage_error(exc, self.url) from None

    def _rows(self, statement: Any) -> list[Row[Any]]:
        try:
            with self.engine.connect() as conn:
                return list(conn.execute(statement).all())
        except SQLAlchemyError as exc:
            raise storage_error(exc, self.url) from None

    # lifecycle -------------------------------------------------------------------------------------
    def migrate(self) -> None:
        """Upgrade the schema to the newest revision (see ``bot.storage.migrate``)."""
        from bot.storage.migrate import upgrade

        try:
            upgrade(self.engine)
        except (OperationalError, InterfaceError) as exc:  # cannot connect, locked, gone: maybe try again
            raise storage_error(exc, self.url) from None
        except (SQLAlchemyError, ValueError) as exc:  # the data did not convert: rolled back, never retried
            raise StorageMisconfigured(
                f"DATABASE_URL ({where_of(self.url)}): the schema upgrade failed and was rolled back, "
                f"the database is as it was: {first_line(exc)}"
            ) from None

    def schema_version(self) -> str | None:
        """The Alembic revision the database is at (None before :meth:`migrate`)."""
        from bot.storage.migrate import current_revision

        try:
            return current_revision(self.engine)
        except SQLAlchemyError as exc:
            raise storage_error(exc, self.url) from None

    def ping(self) -> bool:
        try:
            return self._rows(select(1)) == [(1,)]
        except Exception:  # any failure means "not answering"
            return False

    def close(self) -> None:
        self.engine.dispose()

    # event dedupe -------------------------------------------------------------------------------------
    def claim_event(self, key: str, now: datetime, ttl_seconds: int) -> bool:
        statement = (
            self._insert(events)
            .values(key=key, expires_at=now + timedelta(seconds=ttl_seconds))
            .on_conflict_do_update(
                index_elements=[events.c.key],
                set_={"expires_at": now + timedelta(seconds=ttl_seconds)},
                where=events.c.expires_at <= now,
            )
            .returning(events.c.key)
        )
        with self._write() as conn:
            self._calls += 1
            if self._calls % _PURGE_EVERY == 0:
                conn.execute(events.delete().where(events.c.expires_at <= now))
            return conn.execute(statement).first() is not None

    # preferences --------------------------------------------------------------------------------------
    def get_user_lang(self, user_id: str) -> LangPref | None:
        rows = self._rows(select(user_prefs.c.lang).where(user_prefs.c.user_id == user_id))
        return cast(LangPref, rows[0][0]) if rows else None

    def _put(self, table: Any, key: dict[str, Any], values: dict[str, Any]) -> None:
        """Insert the row, or update ``values`` on the row with this ``key``."""
        statement = (
            self._insert(table)
            .values(**key, **values)
            .on_conflict_do_update(index_elements=[table.c[name] for name in key], set_=values)
        )
        with self._write() as conn:
            conn.execute(statement)

    def set_user_lang(self, user_id: str, lang: LangPref) -> None:
        self._put(user_prefs, {"user_id": user_id}, {"lang": lang})

    def get_channel_auto(self, channel_id: str) -> bool:
        rows = self._rows(select(channel_prefs.c.auto).where(channel_prefs.c.channel_id == channel_id))
        return bool(rows[0][0]) if rows else True

    def set_channel_auto(self, channel_id: str, enabled: bool) -> None:
        self._put(channel_prefs, {"channel_id": channel_id}, {"auto": enabled})

    # reply log ----------------------------------------------------------------------------------------
    _REPLY_COLUMNS = (
        replies.c.id,
        replies.c.channel,
        replies.c.message_ts,
        replies.c.thread_ts,
        replies.c.case_ids,
        replies.c.tier,
        replies.c.created_at,
        replies.c.source,
    )

    @staticmethod
    def _reply(row: Row[Any]) -> ReplyRecord:
        return ReplyRecord(
            channel=row.channel,
            message_ts=row.message_ts,
            thread_ts=row.thread_ts,
            case_ids=tuple(row.case_ids),
            tier=row.tier,
            created_at=row.created_at,
            source=row.source,
            id=int(row.id),
        )

    def log_reply(self, record: ReplyRecord) -> int:
        statement = (
            replies.insert()
            .values(
                channel=record.channel,
                message_ts=record.message_ts,
                thread_ts=record.thread_ts,
                case_ids=list(record.case_ids),
                best_case_id=record.case_ids[0] if record.case_ids else None,
                tier=record.tier,
                source=record.source,
                created_at=record.created_at,
            )
            .returning(replies.c.id)
        )
        with self._write() as conn:
            return int(conn.execute(statement).scalar_one())

    def get_reply(self, reply_id: int) -> ReplyRecord | None:
        rows = self._rows(select(*self._REPLY_COLUMNS).where(replies.c.id == reply_id))
        return self._reply(rows[0]) if rows else None

    def last_reply_for_case(self, channel: str, case_id: str) -> datetime | None:
        rows = self._rows(
            select(func.max(replies.c.created_at)).where(
                replies.c.channel == channel, replies.c.best_case_id == case_id
            )
        )
        return cast(datetime | None, rows[0][0])

    def replies_since(self, since: datetime) -> list[ReplyRecord]:
        statement = (
            select(*self._REPLY_COLUMNS)
            .where(replies.c.created_at >= since)
            .order_by(replies.c.created_at, replies.c.id)
        )
        return [self._reply(row) for row in self._rows(statement)]

    def best_case_counts(self, since: datetime, limit: int) -> list[tuple[str, int]]:
        count = func.count().label("n")
        statement = (
            select(replies.c.best_case_id, count)
            .where(replies.c.created_at >= since, replies.c.best_case_id.is_not(None))
            .group_by(replies.c.best_case_id)
            .order_by(count.desc(), replies.c.best_case_id)
            .limit(limit)
        )
        rows: list[Any] = self._rows(statement)
        return [(str(case_id), int(n)) for case_id, n in rows]

    def reply_for_message(self, channel: str, message_ts: str) -> ReplyRecord | None:
        if not message_ts:  # ephemeral replies are logged with "": never a match for a click
            return None
        statement = (
            select(*self._REPLY_COLUMNS)
            .where(replies.c.channel == channel, replies.c.message_ts == message_ts)
            .order_by(replies.c.id.desc())
            .limit(1)
        )
        rows = self._rows(statement)
        return self._reply(rows[0]) if rows else None

    # feedback -----------------------------------------------------------------------------------------
    def record_feedback(
        self, reply_id: int, user_id: str, case_id: str, vote: Vote, channel: str, tier: str, now: datetime
    ) -> None:
        key = {"reply_id": reply_id, "user_id": user_id, "case_id": case_id}
        self._put(feedback, key, {"vote": vote, "channel": channel, "tier": tier, "updated_at": now})

    def feedback_counts(self) -> list[FeedbackCount]:
        statement = (
            select(
                feedback.c.case_id,
                func.sum(case((feedback.c.vote == "helpful", 1), else_=0)),
                func.sum(case((feedback.c.vote == "not_helpful", 1), else_=0)),
            )
            .group_by(feedback.c.case_id)
            .order_by(feedback.c.case_id)
        )
        rows: list[Any] = self._rows(statement)
        return [FeedbackCount(str(case_id), int(helpful), int(unhelpful)) for case_id, helpful, unhelpful in rows]

    # digest ledger ------------------------------------------------------------------------------------
    @staticmethod
    def _entry(row: Row[Any]) -> DigestEntry:
        return DigestEntry(
            period_key=row.period_key,
            status=row.status,
            owner=row.owner,
            attempt=int(row.attempt),
            lease_until=row.lease_until,
            case_ids=tuple(row.case_ids),
            message_ts=tuple(row.message_ts),
            completed_at=row.completed_at,
        )

    def digested_case_ids(self) -> set[str]:
        ids: set[str] = set()
        for (case_ids,) in self._rows(select(digests.c.case_ids)):
            ids.update(case_ids)
        return ids

    def claim_digest(self, period_key: str, owner: str, now: datetime, lease_seconds: int) -> DigestClaim | None:
        lease_until = now + timedelta(seconds=lease_seconds)
        statement = (
            self._insert(digests)
            .values(
                period_key=period_key,
                status="claimed",
                owner=owner,
                attempt=1,
                lease_until=lease_until,
                case_ids=[],
                message_ts=[],
                claimed_at=now,
            )
            .on_conflict_do_update(
                index_elements=[digests.c.period_key],
                set_={"owner": owner, "attempt": digests.c.attempt + 1, "lease_until": lease_until, "claimed_at": now},
                # Only a claim whose lease ran out is taken over; a done period stays done.
                where=(digests.c.status == "claimed") & (digests.c.lease_until <= now),
            )
            .returning(digests.c.attempt)
        )
        with self._write() as conn:
            attempt = conn.execute(statement).scalar_one_or_none()
        if attempt is None:
            return None
        return DigestClaim(period_key=period_key, owner=owner, attempt=int(attempt), lease_until=lease_until)

    def _held(self, period_key: str, owner: str) -> Any:
        return update(digests).where(
            digests.c.period_key == period_key, digests.c.owner == owner, digests.c.status == "claimed"
        )

    def record_digest_cases(self, period_key: str, owner: str, case_ids: tuple[str, ...]) -> None:
        with self._write() as conn:
            conn.execute(self._held(period_key, owner).values(case_ids=list(case_ids)))

    def renew_digest(self, period_key: str, owner: str, now: datetime, lease_seconds: int) -> bool:
        with self._write() as conn:
            result = conn.execute(
                self._held(period_key, owner).values(lease_until=now + timedelta(seconds=lease_seconds))
            )
            return result.rowcount == 1

    def complete_digest(self, period_key: str, owner: str, message_ts: tuple[str, ...], now: datetime) -> bool:
        with self._write() as conn:
            result = conn.execute(
                self._held(period_key, owner).values(status="done", message_ts=list(message_ts), completed_at=now)
            )
            return result.rowcount == 1

    _DIGEST_COLUMNS = (
        digests.c.period_key,
        digests.c.status,
        digests.c.owner,
        digests.c.attempt,
        digests.c.lease_until,
        digests.c.case_ids,
        digests.c.message_ts,
        digests.c.completed_at,
    )

    def get_digest(self, period_key: str) -> DigestEntry | None:
        rows = self._rows(select(*self._DIGEST_COLUMNS).where(digests.c.period_key == period_key))
        return self._entry(rows[0]) if rows else None

    def list_digests(self) -> list[DigestEntry]:
        rows = self._rows(select(*self._DIGEST_COLUMNS).order_by(digests.c.period_key.desc()))
        return [self._entry(row) for row in rows]
