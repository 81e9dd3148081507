"""PostgreSQL storage backend (psycopg 3), for several bot processes sharing one database.

One autocommit connection per instance, guarded by a lock and reopened when it breaks; multi-statement
work runs in explicit transactions. Cross-process atomicity comes from single ``INSERT ... ON CONFLICT``
statements and owner-conditional ``UPDATE``s; migrations serialize on ``pg_advisory_xact_lock``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import psycopg

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
# libpq's words for settings that cannot work (anything else, such as a refused connection, a timeout or a
# name that does not resolve yet, is worth retrying).
_MISCONFIGURED = (
    "does not exist",
    "authentication failed",
    "no password supplied",
    "invalid connection option",
    "invalid dsn",
    'missing "="',
    "invalid URI",
    "invalid integer value",
)
_PURGE_EVERY = 100

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE TABLE events (key text PRIMARY KEY, expires_at timestamptz NOT NULL)",
        "CREATE INDEX events_expires ON events (expires_at)",
        "CREATE TABLE user_prefs (user_id text PRIMARY KEY, lang text NOT NULL)",
        "CREATE TABLE channel_prefs (channel_id text PRIMARY KEY, auto boolean NOT NULL)",
        """CREATE TABLE replies (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, channel text NOT NULL,
            message_ts text NOT NULL, thread_ts text NOT NULL, case_ids text[] NOT NULL,
            best_case_id text, tier text NOT NULL, source text NOT NULL, created_at timestamptz NOT NULL)""",
        "CREATE INDEX replies_best ON replies (channel, best_case_id, created_at)",
        "CREATE INDEX replies_created ON replies (created_at)",
        """CREATE TABLE feedback (
            reply_id bigint NOT NULL, user_id text NOT NULL, case_id text NOT NULL, vote text NOT NULL,
            channel text NOT NULL, tier text NOT NULL, updated_at timestamptz NOT NULL,
            PRIMARY KEY (reply_id, user_id, case_id))""",
        """CREATE TABLE digests (
            period_key text PRIMARY KEY, status text NOT NULL, owner text NOT NULL, attempt integer NOT NULL,
            lease_until timestamptz NOT NULL, case_ids text[] NOT NULL DEFAULT '{}',
            message_ts text[] NOT NULL DEFAULT '{}', claimed_at timestamptz NOT NULL,
            completed_at timestamptz)""",
    ),
}


def _utc(value: datetime | None) -> datetime | None:
    return value.astimezone(UTC) if value is not None else None


class PostgresStorage:
    """The :class:`bot.storage.base.Storage` interface on PostgreSQL.

    ``conninfo`` is a libpq URL; tests add ``?options=-csearch_path%3D<schema>`` to isolate themselves.
    """

    def __init__(self, conninfo: str, connect_timeout: int = 10) -> None:
        self._conninfo = conninfo
        self._connect_timeout = connect_timeout
        self._lock = threading.RLock()
        self._calls = 0
        self._conn: psycopg.Connection[tuple[Any, ...]] | None = None

    def _connection(self) -> psycopg.Connection[tuple[Any, ...]]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = psycopg.connect(self._conninfo, autocommit=True, connect_timeout=self._connect_timeout)
        return self._conn

    def _where(self) -> str:
        """host:port/database of the URL, for messages (never the user's password)."""
        try:
            parts = psycopg.conninfo.conninfo_to_dict(self._conninfo)
        except psycopg.Error:
            return "the DATABASE_URL"
        return f"{parts.get('host') or 'localhost'}:{parts.get('port') or 5432}/{parts.get('dbname') or ''}"

    def _failed(self, exc: psycopg.Error) -> StorageError:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, psycopg.ProgrammingError) or any(word in first for word in _MISCONFIGURED):
            return StorageMisconfigured(f"DATABASE_URL ({self._where()}): {first}")
        return StorageUnavailable(f"DATABASE_URL: cannot reach PostgreSQL at {self._where()}: {first}")

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        with self._lock:
            try:
                conn = self._connection()
                with conn.transaction():
                    yield conn
            except psycopg.Error as exc:
                raise self._failed(exc) from None

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._connection().execute(sql, params).fetchall()
            except psycopg.Error as exc:
                raise self._failed(exc) from None

    # lifecycle -------------------------------------------------------------------------------------
    def migrate(self) -> None:
        with self._tx() as conn:
            # Serialize concurrent start-ups per schema; CREATE TABLE IF NOT EXISTS alone races.
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtext('incident-bot:migrate:' || coalesce(current_schema(), '')))"
            )
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)")
            row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
            current = int(row[0] or 0) if row else 0
            for version in sorted(v for v in _MIGRATIONS if v > current):
                for statement in _MIGRATIONS[version]:
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))

    def schema_version(self) -> int:
        """The applied schema version (0 before :meth:`migrate`)."""
        if self._query("SELECT to_regclass('schema_version')")[0][0] is None:
            return 0
        return int(self._query("SELECT max(version) FROM schema_version")[0][0] or 0)

    def ping(self) -> bool:
        try:
            return self._query("SELECT 1") == [(1,)]
        except StorageError:
            return False

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # event dedupe -------------------------------------------------------------------------------------
    def claim_event(self, key: str, now: datetime, ttl_seconds: int) -> bool:
        with self._tx() as conn:
            self._calls += 1
            if self._calls % _PURGE_EVERY == 0:
                conn.execute("DELETE FROM events WHERE expires_at <= %s", (now,))
            row = conn.execute(
                """INSERT INTO events (key, expires_at) VALUES (%s, %s)
                   ON CONFLICT (key) DO UPDATE SET expires_at = EXCLUDED.expires_at
                   WHERE events.expires_at <= %s RETURNING key""",
                (key, now + timedelta(seconds=ttl_seconds), now),
            ).fetchone()
            return row is not None

    # preferences --------------------------------------------------------------------------------------
    def get_user_lang(self, user_id: str) -> LangPref | None:
        rows = self._query("SELECT lang FROM user_prefs WHERE user_id = %s", (user_id,))
        return cast(LangPref, rows[0][0]) if rows else None

    def set_user_lang(self, user_id: str, lang: LangPref) -> None:
        self._query(
            "INSERT INTO user_prefs (user_id, lang) VALUES (%s, %s) "
            "ON CONFLICT (user_id) DO UPDATE SET lang = EXCLUDED.lang RETURNING 1",
            (user_id, lang),
        )

    def get_channel_auto(self, channel_id: str) -> bool:
        rows = self._query("SELECT auto FROM channel_prefs WHERE channel_id = %s", (channel_id,))
        return bool(rows[0][0]) if rows else True

    def set_channel_auto(self, channel_id: str, enabled: bool) -> None:
        self._query(
            "INSERT INTO channel_prefs (channel_id, auto) VALUES (%s, %s) "
            "ON CONFLICT (channel_id) DO UPDATE SET auto = EXCLUDED.auto RETURNING 1",
            (channel_id, enabled),
        )

    # reply log ----------------------------------------------------------------------------------------
    @staticmethod
    def _reply(row: tuple[Any, ...]) -> ReplyRecord:
        return ReplyRecord(
            channel=row[1],
            message_ts=row[2],
            thread_ts=row[3],
            case_ids=tuple(row[4]),
            tier=row[5],
            created_at=row[6].astimezone(UTC),
            source=row[7],
            id=int(row[0]),
        )

    def log_reply(self, record: ReplyRecord) -> int:
        rows = self._query(
            "INSERT INTO replies (channel, message_ts, thread_ts, case_ids, best_case_id, tier, source,"
            " created_at) VALUES (%s, %s, %s, %s::text[], %s, %s, %s, %s) RETURNING id",
            (
                record.channel,
                record.message_ts,
                record.thread_ts,
                list(record.case_ids),
                record.case_ids[0] if record.case_ids else None,
                record.tier,
                record.source,
                record.created_at,
            ),
        )
        return int(rows[0][0])

    def get_reply(self, reply_id: int) -> ReplyRecord | None:
        rows = self._query(
            "SELECT id, channel, message_ts, thread_ts, case_ids, tier, created_at, source FROM replies WHERE id = %s",
            (reply_id,),
        )
        return self._reply(rows[0]) if rows else None

    def last_reply_for_case(self, channel: str, case_id: str) -> datetime | None:
        rows = self._query(
            "SELECT max(created_at) FROM replies WHERE channel = %s AND best_case_id = %s", (channel, case_id)
        )
        return _utc(rows[0][0])

    def replies_since(self, since: datetime) -> list[ReplyRecord]:
        rows = self._query(
            "SELECT id, channel, message_ts, thread_ts, case_ids, tier, created_at, source"
            " FROM replies WHERE created_at >= %s ORDER BY created_at, id",
            (since,),
        )
        return [self._reply(row) for row in rows]

    def reply_for_message(self, channel: str, message_ts: str) -> ReplyRecord | None:
        if not message_ts:  # ephemeral replies are logged with "": never a match for a click
            return None
        rows = self._query(
            "SELECT id, channel, message_ts, thread_ts, case_ids, tier, created_at, source"
            " FROM replies WHERE channel = %s AND message_ts = %s ORDER BY id DESC LIMIT 1",
            (channel, message_ts),
        )
        return self._reply(rows[0]) if rows else None

    # feedback -----------------------------------------------------------------------------------------
    def record_feedback(
        self, reply_id: int, user_id: str, case_id: str, vote: Vote, channel: str, tier: str, now: datetime
    ) -> None:
        self._query(
            """INSERT INTO feedback (reply_id, user_id, case_id, vote, channel, tier, updated_at)
               VALUES (%s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT (reply_id, user_id, case_id) DO UPDATE SET
               vote = EXCLUDED.vote, channel = EXCLUDED.channel, tier = EXCLUDED.tier,
               updated_at = EXCLUDED.updated_at RETURNING 1""",
            (reply_id, user_id, case_id, vote, channel, tier, now),
        )

    def feedback_counts(self) -> list[FeedbackCount]:
        rows = self._query(
            "SELECT case_id, count(*) FILTER (WHERE vote = 'helpful'),"
            " count(*) FILTER (WHERE vote = 'not_helpful') FROM feedback GROUP BY case_id ORDER BY case_id"
        )
        return [FeedbackCount(row[0], int(row[1]), int(row[2])) for row in rows]

    # digest ledger ------------------------------------------------------------------------------------
    @staticmethod
    def _entry(row: tuple[Any, ...]) -> DigestEntry:
        return DigestEntry(
            period_key=row[0],
            status=row[1],
            owner=row[2],
            attempt=int(row[3]),
            lease_until=row[4].astimezone(UTC),
            case_ids=tuple(row[5]),
            message_ts=tuple(row[6]),
            completed_at=_utc(row[7]),
        )

    def digested_case_ids(self) -> set[str]:
        return {row[0] for row in self._query("SELECT DISTINCT unnest(case_ids) FROM digests")}

    def claim_digest(self, period_key: str, owner: str, now: datetime, lease_seconds: int) -> DigestClaim | None:
        lease_until = now + timedelta(seconds=lease_seconds)
        rows = self._query(
            """INSERT INTO digests (period_key, status, owner, attempt, lease_until, claimed_at)
               VALUES (%s, 'claimed', %s, 1, %s, %s)
               ON CONFLICT (period_key) DO UPDATE SET owner = EXCLUDED.owner,
               attempt = digests.attempt + 1, lease_until = EXCLUDED.lease_until,
               claimed_at = EXCLUDED.claimed_at
               WHERE digests.status = 'claimed' AND digests.lease_until <= %s
               RETURNING attempt""",
            (period_key, owner, lease_until, now, now),
        )
        if not rows:
            return None
        return DigestClaim(period_key=period_key, owner=owner, attempt=int(rows[0][0]), lease_until=lease_until)

    def record_digest_cases(self, period_key: str, owner: str, case_ids: tuple[str, ...]) -> None:
        with self._lock:
            self._connection().execute(
                "UPDATE digests SET case_ids = %s::text[] WHERE period_key = %s AND owner = %s AND status = 'claimed'",
                (list(case_ids), period_key, owner),
            )

    def renew_digest(self, period_key: str, owner: str, now: datetime, lease_seconds: int) -> bool:
        with self._lock:
            cursor = self._connection().execute(
                "UPDATE digests SET lease_until = %s WHERE period_key = %s AND owner = %s AND status = 'claimed'",
                (now + timedelta(seconds=lease_seconds), period_key, owner),
            )
            return cursor.rowcount == 1

    def complete_digest(self, period_key: str, owner: str, message_ts: tuple[str, ...], now: datetime) -> bool:
        with self._lock:
            cursor = self._connection().execute(
                "UPDATE digests SET status = 'done', message_ts = %s::text[], completed_at = %s "
                "WHERE period_key = %s AND owner = %s AND status = 'claimed'",
                (list(message_ts), now, period_key, owner),
            )
            return cursor.rowcount == 1

    def get_digest(self, period_key: str) -> DigestEntry | None:
        rows = self._query(
            "SELECT period_key, status, owner, attempt, lease_until, case_ids, message_ts, completed_at"
            " FROM digests WHERE period_key = %s",
            (period_key,),
        )
        return self._entry(rows[0]) if rows else None

    def list_digests(self) -> list[DigestEntry]:
        rows = self._query(
            "SELECT period_key, status, owner, attempt, lease_until, case_ids, message_ts, completed_at"
            " FROM digests ORDER BY period_key DESC"
        )
        return [self._entry(row) for row in rows]
