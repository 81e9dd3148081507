"""SQLite storage backend (the default): one file, WAL mode, safe for several processes on one host.

Writes that must be atomic across processes run in ``BEGIN IMMEDIATE`` transactions (the write lock is
taken up front, so two claimers never both read "free"); a busy timeout makes the loser wait, not fail.
Times are stored as integer microseconds since the epoch (UTC), so comparisons are exact.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from bot.storage.base import (
    DigestClaim,
    DigestEntry,
    FeedbackCount,
    LangPref,
    ReplyRecord,
    StorageError,
    StorageMisconfigured,
    StorageUnavailable,
    Vote,
)

SCHEMA_VERSION = 1
_PURGE_EVERY = 100

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE TABLE events (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)",
        "CREATE INDEX events_expires ON events (expires_at)",
        "CREATE TABLE user_prefs (user_id TEXT PRIMARY KEY, lang TEXT NOT NULL)",
        "CREATE TABLE channel_prefs (channel_id TEXT PRIMARY KEY, auto INTEGER NOT NULL)",
        """CREATE TABLE replies (
            id INTEGER PRIMARY KEY AUTOINCREMENT, channel TEXT NOT NULL, message_ts TEXT NOT NULL,
            thread_ts TEXT NOT NULL, case_ids TEXT NOT NULL, best_case_id TEXT, tier TEXT NOT NULL,
            source TEXT NOT NULL, created_at INTEGER NOT NULL)""",
        "CREATE INDEX replies_best ON replies (channel, best_case_id, created_at)",
        "CREATE INDEX replies_created ON replies (created_at)",
        """CREATE TABLE feedback (
            reply_id INTEGER NOT NULL, user_id TEXT NOT NULL, case_id TEXT NOT NULL, vote TEXT NOT NULL,
            channel TEXT NOT NULL, tier TEXT NOT NULL, updated_at INTEGER NOT NULL,
            PRIMARY KEY (reply_id, user_id, case_id))""",
        """CREATE TABLE digests (
            period_key TEXT PRIMARY KEY, status TEXT NOT NULL, owner TEXT NOT NULL,
            attempt INTEGER NOT NULL, lease_until INTEGER NOT NULL, case_ids TEXT NOT NULL DEFAULT '[]',
            message_ts TEXT NOT NULL DEFAULT '[]', claimed_at INTEGER NOT NULL, completed_at INTEGER)""",
    ),
}


def _us(moment: datetime) -> int:
    if moment.tzinfo is None:
        raise ValueError("storage times must be timezone-aware")
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


def _dt(value: int | None) -> datetime | None:
    if value is None:
        return None
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=value)


def sqlite_path(url: str) -> str:
    """The file path in a ``sqlite:///path`` URL (``sqlite:////abs/path`` for an absolute one)."""
    if not url.startswith("sqlite:///"):
        raise ValueError(f"not a sqlite URL: {url!r}")
    return url.removeprefix("sqlite:///")


class SqliteStorage:
    """The :class:`bot.storage.base.Storage` interface on one SQLite file.

    One connection per instance, guarded by a lock (calls arrive from ``asyncio.to_thread`` workers).
    ``busy_timeout`` is in seconds.
    """

    def __init__(self, path: str | Path, busy_timeout: float = 10.0) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._calls = 0
        try:
            self._conn = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:
            raise StorageMisconfigured(
                f"DATA_DIR / DATABASE_URL: cannot open the SQLite file {self.path}: {exc}"
            ) from None

    def _failed(self, exc: sqlite3.Error) -> StorageError:
        text = str(exc)
        if "readonly" in text or "unable to open" in text:
            return StorageMisconfigured(f"DATA_DIR / DATABASE_URL: the SQLite file {self.path} is not writable: {text}")
        return StorageUnavailable(f"DATABASE_URL: SQLite {self.path}: {text}")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that takes the database write lock immediately."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise self._failed(exc) from None

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return cast(list[tuple[Any, ...]], self._conn.execute(sql, params).fetchall())
            except sqlite3.Error as exc:
                raise self._failed(exc) from None

    # lifecycle -------------------------------------------------------------------------------------
    def migrate(self) -> None:
        with self._tx() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
            current = int(row[0] or 0)
            for version in sorted(v for v in _MIGRATIONS if v > current):
                for statement in _MIGRATIONS[version]:
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))

    def schema_version(self) -> int:
        """The applied schema version (0 before :meth:`migrate`)."""
        rows = self._query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
        if not rows:
            return 0
        return int(self._query("SELECT max(version) FROM schema_version")[0][0] or 0)

    def ping(self) -> bool:
        try:
            return self._query("SELECT 1") == [(1,)]
        except StorageError:
            return False

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # event dedupe -------------------------------------------------------------------------------------
    def claim_event(self, key: str, now: datetime, ttl_seconds: int) -> bool:
        now_us = _us(now)
        with self._tx() as conn:
            self._calls += 1
            if self._calls % _PURGE_EVERY == 0:
                conn.execute("DELETE FROM events WHERE expires_at <= ?", (now_us,))
            cursor = conn.execute(
                """INSERT INTO events (key, expires_at) VALUES (?, ?)
                   ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at
                   WHERE events.expires_at <= ?""",
                (key, now_us + ttl_seconds * 1_000_000, now_us),
            )
            return cursor.rowcount == 1

    # preferences --------------------------------------------------------------------------------------
    def get_user_lang(self, user_id: str) -> LangPref | None:
        rows = self._query("SELECT lang FROM user_prefs WHERE user_id = ?", (user_id,))
        return cast(LangPref, rows[0][0]) if rows else None

    def set_user_lang(self, user_id: str, lang: LangPref) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO user_prefs (user_id, lang) VALUES (?, ?) "
                "ON CONFLICT (user_id) DO UPDATE SET lang = excluded.lang",
                (user_id, lang),
            )

    def get_channel_auto(self, channel_id: str) -> bool:
        rows = self._query("SELECT auto FROM channel_prefs WHERE channel_id = ?", (channel_id,))
        return bool(rows[0][0]) if rows else True

    def set_channel_auto(self, channel_id: str, enabled: bool) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO channel_prefs (channel_id, auto) VALUES (?, ?) "
                "ON CONFLICT (channel_id) DO UPDATE SET auto = excluded.auto",
                (channel_id, int(enabled)),
            )

    # reply log ----------------------------------------------------------------------------------------
    @staticmethod
    def _reply(row: tuple[Any, ...]) -> ReplyRecord:
        created = _dt(row[6])
        assert created is not None
        return ReplyRecord(
            channel=row[1],
            message_ts=row[2],
            thread_ts=row[3],
            case_ids=tuple(json.loads(row[4])),
            tier=row[5],
            created_at=created,
            source=row[7],
            id=row[0],
        )

    def log_reply(self, record: ReplyRecord) -> int:
        with self._tx() as conn:
            cursor = conn.execute(
                "INSERT INTO replies (channel, message_ts, thread_ts, case_ids, best_case_id, tier, source,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.channel,
                    record.message_ts,
                    record.thread_ts,
                    json.dumps(list(record.case_ids)),
                    record.case_ids[0] if record.case_ids else None,
                    record.tier,
                    record.source,
                    _us(record.created_at),
                ),
            )
            return int(cursor.lastrowid or 0)

    def get_reply(self, reply_id: int) -> ReplyRecord | None:
        rows = self._query(
            "SELECT id, channel, message_ts, thread_ts, case_ids, tier, created_at, source FROM replies WHERE id = ?",
            (reply_id,),
        )
        return self._reply(rows[0]) if rows else None

    def last_reply_for_case(self, channel: str, case_id: str) -> datetime | None:
        rows = self._query(
            "SELECT max(created_at) FROM replies WHERE channel = ? AND best_case_id = ?", (channel, case_id)
        )
        return _dt(rows[0][0])

    def replies_since(self, since: datetime) -> list[ReplyRecord]:
        rows = self._query(
            "SELECT id, channel, message_ts, thread_ts, case_ids, tier, created_at, source"
            " FROM replies WHERE created_at >= ? ORDER BY created_at, id",
            (_us(since),),
        )
        return [self._reply(row) for row in rows]

    def reply_for_message(self, channel: str, message_ts: str) -> ReplyRecord | None:
        if not message_ts:  # ephemeral replies are logged with "": never a match for a click
            return None
        rows = self._query(
            "SELECT id, channel, message_ts, thread_ts, case_ids, tier, created_at, source"
            " FROM replies WHERE channel = ? AND message_ts = ? ORDER BY id DESC LIMIT 1",
            (channel, message_ts),
        )
        return self._reply(rows[0]) if rows else None

    # feedback -----------------------------------------------------------------------------------------
    def record_feedback(
        self, reply_id: int, user_id: str, case_id: str, vote: Vote, channel: str, tier: str, now: datetime
    ) -> None:
        with self._tx() as conn:
            conn.execute(
                """INSERT INTO feedback (reply_id, user_id, case_id, vote, channel, tier, updated_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT (reply_id, user_id, case_id) DO UPDATE SET
                   vote = excluded.vote, channel = excluded.channel, tier = excluded.tier,
                   updated_at = excluded.updated_at""",
                (reply_id, user_id, case_id, vote, channel, tier, _us(now)),
            )

    def feedback_counts(self) -> list[FeedbackCount]:
        rows = self._query(
            "SELECT case_id, sum(vote = 'helpful'), sum(vote = 'not_helpful') FROM feedback "
            "GROUP BY case_id ORDER BY case_id"
        )
        return [FeedbackCount(row[0], int(row[1]), int(row[2])) for row in rows]

    # digest ledger ------------------------------------------------------------------------------------
    @staticmethod
    def _entry(row: tuple[Any, ...]) -> DigestEntry:
        lease_until = _dt(row[4])
        assert lease_until is not None
        return DigestEntry(
            period_key=row[0],
            status=row[1],
            owner=row[2],
            attempt=row[3],
            lease_until=lease_until,
            case_ids=tuple(json.loads(row[5])),
            message_ts=tuple(json.loads(row[6])),
            completed_at=_dt(row[7]),
        )

    def digested_case_ids(self) -> set[str]:
        ids: set[str] = set()
        for (case_ids,) in self._query("SELECT case_ids FROM digests"):
            ids.update(json.loads(case_ids))
        return ids

    def claim_digest(self, period_key: str, owner: str, now: datetime, lease_seconds: int) -> DigestClaim | None:
        lease_until = now + timedelta(seconds=lease_seconds)
        with self._tx() as conn:
            row = conn.execute(
                """INSERT INTO digests (period_key, status, owner, attempt, lease_until, claimed_at)
                   VALUES (?, 'claimed', ?, 1, ?, ?)
                   ON CONFLICT (period_key) DO UPDATE SET owner = excluded.owner,
                   attempt = digests.attempt + 1, lease_until = excluded.lease_until,
                   claimed_at = excluded.claimed_at
                   WHERE digests.status = 'claimed' AND digests.lease_until <= ?
                   RETURNING attempt""",
                (period_key, owner, _us(lease_until), _us(now), _us(now)),
            ).fetchall()  # fetch everything: COMMIT fails while a RETURNING statement is still stepping
        if not row:
            return None
        return DigestClaim(period_key=period_key, owner=owner, attempt=int(row[0][0]), lease_until=lease_until)

    def record_digest_cases(self, period_key: str, owner: str, case_ids: tuple[str, ...]) -> None:
        with self._tx() as conn:
            conn.execute(
                "UPDATE digests SET case_ids = ? WHERE period_key = ? AND owner = ? AND status = 'claimed'",
                (json.dumps(list(case_ids)), period_key, owner),
            )

    def renew_digest(self, period_key: str, owner: str, now: datetime, lease_seconds: int) -> bool:
        lease_until = now + timedelta(seconds=lease_seconds)
        with self._tx() as conn:
            cursor = conn.execute(
                "UPDATE digests SET lease_until = ? WHERE period_key = ? AND owner = ? AND status = 'claimed'",
                (_us(lease_until), period_key, owner),
            )
            return cursor.rowcount == 1

    def complete_digest(self, period_key: str, owner: str, message_ts: tuple[str, ...], now: datetime) -> bool:
        with self._tx() as conn:
            cursor = conn.execute(
                "UPDATE digests SET status = 'done', message_ts = ?, completed_at = ? "
                "WHERE period_key = ? AND owner = ? AND status = 'claimed'",
                (json.dumps(list(message_ts)), _us(now), period_key, owner),
            )
            return cursor.rowcount == 1

    def get_digest(self, period_key: str) -> DigestEntry | None:
        rows = self._query(
            "SELECT period_key, status, owner, attempt, lease_until, case_ids, message_ts, completed_at"
            " FROM digests WHERE period_key = ?",
            (period_key,),
        )
        return self._entry(rows[0]) if rows else None

    def list_digests(self) -> list[DigestEntry]:
        rows = self._query(
            "SELECT period_key, status, owner, attempt, lease_until, case_ids, message_ts, completed_at"
            " FROM digests ORDER BY period_key DESC"
        )
        return [self._entry(row) for row in rows]
