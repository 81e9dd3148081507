"""A database made before Alembic (the hand-rolled ``schema_version`` 1 of either backend) is adopted and
upgraded in place: the same dedupe claims, replies, votes, preferences and ledger entries read back."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from conftest import BACKENDS, postgres_schema

from bot.storage import ReplyRecord, Storage, open_storage
from bot.storage.migrate import head_revision

T0 = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)

# The DDL the first version shipped (bot/storage/sqlite.py and postgres.py, schema version 1).
SQLITE_V1 = [
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
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
]
POSTGRES_V1 = [
    "CREATE TABLE schema_version (version integer NOT NULL)",
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
]


def _us(moment: datetime) -> int:
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


def _sqlite_v1(path: str) -> None:
    """Today's SQLite schema and data, written the way the first version wrote them."""
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in SQLITE_V1:
        conn.execute(statement)
    conn.execute("INSERT INTO schema_version VALUES (1)")
    conn.execute("INSERT INTO events VALUES ('live', ?), ('stale', ?)", (_us(T0 + timedelta(hours=1)), _us(T0)))
    conn.execute("INSERT INTO user_prefs VALUES ('U1', 'ko'), ('U2', 'both')")
    conn.execute("INSERT INTO channel_prefs VALUES ('C1', 0), ('C2', 1)")
    for reply_id, ts, ids, minutes in ((1, "1.1", ["IL-0427", "IL-0414"], 0), (7, "1.7", ["PUB-0003"], 5)):
        conn.execute(
            "INSERT INTO replies VALUES (?, 'C1', ?, '0.1', ?, ?, 'strong', 'auto', ?)",
            (reply_id, ts, json.dumps(ids), ids[0], _us(T0 + timedelta(minutes=minutes))),
        )
    conn.execute("INSERT INTO feedback VALUES (1, 'U1', 'IL-0427', 'helpful', 'C1', 'strong', ?)", (_us(T0),))
    conn.execute("INSERT INTO feedback VALUES (7, 'U2', 'PUB-0003', 'not_helpful', 'C1', 'exact', ?)", (_us(T0),))
    conn.execute(
        "INSERT INTO digests VALUES ('2026-11-23T09:00+09:00', 'done', 'A', 1, ?, '[\"IL-0427\"]', '[\"9.1\"]', ?, ?)",
        (_us(T0 - timedelta(days=7)), _us(T0 - timedelta(days=7)), _us(T0 - timedelta(days=7, seconds=-3))),
    )
    conn.execute(
        "INSERT INTO digests VALUES ('2026-11-30T09:00+09:00', 'claimed', 'B', 2, ?, '[\"PUB-0003\"]', '[]', ?, NULL)",
        (_us(T0 + timedelta(minutes=10)), _us(T0)),
    )
    conn.close()


def _postgres_v1(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in POSTGRES_V1:
            conn.execute(statement)  # type: ignore[arg-type]
        conn.execute("INSERT INTO schema_version VALUES (1)")
        conn.execute("INSERT INTO events VALUES ('live', %s), ('stale', %s)", (T0 + timedelta(hours=1), T0))
        conn.execute("INSERT INTO user_prefs VALUES ('U1', 'ko'), ('U2', 'both')")
        conn.execute("INSERT INTO channel_prefs VALUES ('C1', false), ('C2', true)")
        for reply_id, ts, ids, minutes in ((1, "1.1", ["IL-0427", "IL-0414"], 0), (7, "1.7", ["PUB-0003"], 5)):
            conn.execute(
                "INSERT INTO replies OVERRIDING SYSTEM VALUE"
                " VALUES (%s, 'C1', %s, '0.1', %s, %s, 'strong', 'auto', %s)",
                (reply_id, ts, ids, ids[0], T0 + timedelta(minutes=minutes)),
            )
        conn.execute("INSERT INTO feedback VALUES (1, 'U1', 'IL-0427', 'helpful', 'C1', 'strong', %s)", (T0,))
        conn.execute("INSERT INTO feedback VALUES (7, 'U2', 'PUB-0003', 'not_helpful', 'C1', 'exact', %s)", (T0,))
        week = T0 - timedelta(days=7)
        conn.execute(
            "INSERT INTO digests VALUES ('2026-11-23T09:00+09:00', 'done', 'A', 1, %s, %s, %s, %s, %s)",
            (week, ["IL-0427"], ["9.1"], week, week + timedelta(seconds=3)),
        )
        conn.execute(
            "INSERT INTO digests VALUES ('2026-11-30T09:00+09:00', 'claimed', 'B', 2, %s, %s, '{}', %s, NULL)",
            (T0 + timedelta(minutes=10), ["PUB-0003"], T0),
        )


@pytest.fixture(params=BACKENDS)
def legacy_url(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[str]:
    """A database with the first version's schema (version 1) and data in it."""
    if request.param == "sqlite":
        path = tmp_path / "bot.sqlite3"
        _sqlite_v1(str(path))
        yield f"sqlite:///{path}"
        return
    with postgres_schema() as url:
        _postgres_v1(url)
        yield url


def _check_everything_reads_back(store: Storage) -> None:
    assert not store.claim_event("live", T0 + timedelta(minutes=1), 60)  # still claimed
    assert store.claim_event("stale", T0 + timedelta(minutes=1), 60)  # expired: claimable
    assert (store.get_user_lang("U1"), store.get_user_lang("U2"), store.get_user_lang("U3")) == ("ko", "both", None)
    assert (store.get_channel_auto("C1"), store.get_channel_auto("C2"), store.get_channel_auto("C3")) == (
        False,
        True,
        True,
    )
    first = store.get_reply(1)
    assert first == ReplyRecord("C1", "1.1", "0.1", ("IL-0427", "IL-0414"), "strong", T0, "auto", 1)
    assert store.reply_for_message("C1", "1.7") == ReplyRecord(
        "C1", "1.7", "0.1", ("PUB-0003",), "strong", T0 + timedelta(minutes=5), "auto", 7
    )
    assert store.last_reply_for_case("C1", "IL-0427") == T0
    assert [r.id for r in store.replies_since(T0)] == [1, 7]
    assert [(c.case_id, c.helpful, c.not_helpful) for c in store.feedback_counts()] == [
        ("IL-0427", 1, 0),
        ("PUB-0003", 0, 1),
    ]
    done = store.get_digest("2026-11-23T09:00+09:00")
    assert done is not None
    assert (done.status, done.owner, done.attempt, done.case_ids, done.message_ts) == (
        "done",
        "A",
        1,
        ("IL-0427",),
        ("9.1",),
    )
    assert done.lease_until == T0 - timedelta(days=7) and done.completed_at == T0 - timedelta(days=7, seconds=-3)
    held = store.get_digest("2026-11-30T09:00+09:00")
    assert held is not None and (held.status, held.owner, held.attempt) == ("claimed", "B", 2)
    assert held.lease_until == T0 + timedelta(minutes=10) and held.completed_at is None
    assert store.digested_case_ids() == {"IL-0427", "PUB-0003"}
    # The ledger keeps working: the held lease is respected, then taken over.
    assert store.claim_digest("2026-11-30T09:00+09:00", "C", T0 + timedelta(minutes=5), 60) is None
    takeover = store.claim_digest("2026-11-30T09:00+09:00", "C", T0 + timedelta(minutes=10), 60)
    assert takeover is not None and takeover.attempt == 3
    # New replies continue after the largest adopted id; votes on adopted replies still change.
    new_id = store.log_reply(ReplyRecord("C1", "2.0", "0.2", ("IL-0415",), "exact", T0, "auto"))
    assert new_id > 7
    store.record_feedback(1, "U1", "IL-0427", "not_helpful", "C1", "strong", T0)
    counts = {c.case_id: (c.helpful, c.not_helpful) for c in store.feedback_counts()}
    assert counts["IL-0427"] == (0, 1)


def test_a_first_version_database_is_upgraded_in_place(legacy_url: str) -> None:
    store = open_storage(legacy_url)
    assert store.schema_version() is None  # type: ignore[attr-defined]  # not under Alembic yet
    store.migrate()
    assert store.schema_version() == head_revision()  # type: ignore[attr-defined]
    _check_everything_reads_back(store)
    store.migrate()  # a second start changes nothing
    assert store.get_reply(1) is not None
    store.close()


def test_replicas_upgrading_a_first_version_database_together_migrate_once(legacy_url: str) -> None:
    stores = [open_storage(legacy_url) for _ in range(4)]
    barrier = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def start(store: Storage) -> None:
        try:
            barrier.wait(timeout=10)
            store.migrate()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=start, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    _check_everything_reads_back(stores[0])
    for store in stores:
        store.close()


def test_db_upgrade_command_adopts_a_first_version_sqlite_file(tmp_path: Any) -> None:
    import os
    import subprocess
    import sys

    data = tmp_path / "data"
    data.mkdir()
    _sqlite_v1(str(data / "incident-bot.sqlite3"))
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CASES_DIR"}}
    env["DATA_DIR"] = str(data)

    def db(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "bot.cli", "db", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "revision none" in db("current") and "behind" in db("current")
    assert f"revision {head_revision()} (upgraded from none)" in db("upgrade")
    assert "(already current)" in db("upgrade")
    store = open_storage(f"sqlite:///{data / 'incident-bot.sqlite3'}")
    _check_everything_reads_back(store)
    store.close()


def test_opening_a_new_sqlite_file_while_another_process_holds_its_write_lock_waits(tmp_path: Any) -> None:
    """Two replicas starting on one new file: the second switches it to WAL while the first holds the write
    lock. SQLite refuses that at once ("database is locked", no busy wait), so the open must try again."""
    path = tmp_path / "bot.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE first_writer (x INTEGER)")
    holder.execute("BEGIN IMMEDIATE")  # the write lock of a file still in rollback-journal mode

    def commit_soon() -> None:
        time.sleep(0.3)  # not threading.Timer: its timed wait never ends under faketime (see the README)
        holder.execute("COMMIT")

    release = threading.Thread(target=commit_soon)
    release.start()
    try:
        store = open_storage(f"sqlite:///{path}")
        store.migrate()
        assert store.schema_version() == head_revision()  # type: ignore[attr-defined]
        store.close()
    finally:
        release.join(timeout=10)
        holder.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_sqlite_file_locked_past_the_busy_timeout_is_one_line_naming_the_setting(tmp_path: Any) -> None:
    from bot.storage.base import StorageMisconfigured
    from bot.storage.dialects import make_engine

    path = tmp_path / "bot.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE first_writer (x INTEGER)")
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StorageMisconfigured) as raised:
            make_engine(f"sqlite:///{path}", busy_timeout=0.3)
    finally:
        holder.close()
    assert str(raised.value) == f"DATA_DIR / DATABASE_URL: cannot open the SQLite file {path}: database is locked"


def test_a_first_version_database_that_does_not_convert_is_left_as_it_was(tmp_path: Any) -> None:
    """A row the upgrade cannot convert: one line saying the upgrade was rolled back (not "cannot reach"),
    never a traceback, and the first version's tables and rows are untouched."""
    from bot.storage.base import StorageMisconfigured

    path = tmp_path / "bot.sqlite3"
    _sqlite_v1(str(path))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE replies SET case_ids = 'not json' WHERE id = 7")
    store = open_storage(f"sqlite:///{path}")
    with pytest.raises(StorageMisconfigured) as raised:
        store.migrate()
    store.close()
    message = str(raised.value)
    assert "the schema upgrade failed and was rolled back" in message and "\n" not in message
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
        assert conn.execute("SELECT case_ids FROM replies WHERE id = 7").fetchone() == ("not json",)
