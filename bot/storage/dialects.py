"""Everything that differs between SQLite and PostgreSQL, in one place. The rest of ``bot.storage`` is
written once.

- URLs: ``sqlite:///path``; ``postgresql://`` and ``postgres://`` use the psycopg 3 driver (SQLAlchemy would
  pick psycopg2, which is not installed).
- SQLite: WAL mode, a busy timeout, and ``BEGIN IMMEDIATE`` for every write transaction (pysqlite's default
  deferred transactions let two claimers both read "free" before either writes).
- ``INSERT ... ON CONFLICT``: each dialect's own ``insert`` (their ``on_conflict_do_update`` agree).
- The migration lock: a PostgreSQL advisory lock per schema; on SQLite the write lock of the transaction.
- Errors: which driver messages mean "fix the settings" and which mean "try again".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, Table, create_engine, event, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from bot.storage.base import StorageError, StorageMisconfigured, StorageUnavailable

# libpq's words for settings that cannot work; anything else (refused, timed out, a name that does not
# resolve yet) is worth retrying.
_PG_MISCONFIGURED = (
    "does not exist",
    "authentication failed",
    "no password supplied",
    "invalid connection option",
    "invalid dsn",
    'missing "="',
    "invalid URI",
    "invalid integer value",
)
IMMEDIATE = "incident_bot_immediate"


def engine_url(url: str) -> str:
    """The SQLAlchemy URL for a ``DATABASE_URL``."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url.removeprefix(prefix)
    return url


def make_engine(url: str, busy_timeout: float = 10.0, connect_timeout: int = 10) -> Engine:
    target = engine_url(url)
    try:
        parsed = make_url(target)
        parsed.port  # noqa: B018 - a port that is not a number raises here, not at the first connection
    except (ArgumentError, ValueError):
        raise StorageMisconfigured("DATABASE_URL is not a valid database URL") from None
    if parsed.get_backend_name() == "sqlite":
        memory = parsed.database in (None, "", ":memory:")
        engine = create_engine(
            target,
            connect_args={"timeout": busy_timeout, "check_same_thread": False},
            # One connection for an in-memory database (each would be a database of its own).
            poolclass=StaticPool if memory else None,
        )
        _sqlite_setup(engine, busy_timeout, wal=not memory)
        _first_open(engine, parsed.database or ":memory:", busy_timeout)
        return engine
    return create_engine(
        target, pool_pre_ping=True, pool_size=4, max_overflow=4, connect_args={"connect_timeout": connect_timeout}
    )


def _first_open(engine: Engine, path: str, busy_timeout: float) -> None:
    """Open the file now, so that a bad path fails at start with one line.

    Switching a new file to WAL needs the exclusive lock. When another process holds the write lock of the
    file at that moment (it is switching the same new file, or migrating it), SQLite answers "database is
    locked" at once instead of waiting (waiting could deadlock), so the busy timeout does not help: try
    again until the busy timeout has passed.
    """
    deadline = time.monotonic() + busy_timeout
    pause = 0.02
    while True:
        try:
            with engine.connect():
                return
        except SQLAlchemyError as exc:
            first = first_line(exc)
            if "locked" not in first or time.monotonic() + pause > deadline:
                raise StorageMisconfigured(
                    f"DATA_DIR / DATABASE_URL: cannot open the SQLite file {path}: {first}"
                ) from None
        engine.dispose()
        time.sleep(pause)
        pause = min(pause * 2, 0.5)


def _sqlite_setup(engine: Engine, busy_timeout: float, wal: bool) -> None:
    @event.listens_for(engine, "connect")
    def connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves (below)
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        if wal and cursor.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def begin(connection: Connection) -> None:
        immediate = connection.info.pop(IMMEDIATE, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def insert_for(engine: Engine) -> Callable[[Table], Any]:
    """The dialect's ``insert`` (with ``on_conflict_do_update`` / ``on_conflict_do_nothing``)."""
    return postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert


def lock_for_migration(connection: Connection) -> None:
    """Serialize migrations: two replicas starting together migrate once."""
    if connection.dialect.name == "postgresql":
        connection.execute(
            text("SELECT pg_advisory_xact_lock(hashtext('incident-bot:migrate:' || coalesce(current_schema(), '')))")
        )
    # SQLite: the transaction began with BEGIN IMMEDIATE, which holds the write lock until it ends.


def first_line(exc: BaseException) -> str:
    """The first line of the driver's message (of ``exc`` itself when it is not a driver error)."""
    original = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    lines = str(original).strip().splitlines()
    return lines[0] if lines else type(original).__name__


def storage_error(exc: SQLAlchemyError, url: str) -> StorageError:
    """One line naming the setting and the cause, never a password."""
    where = where_of(url)
    original = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    first = first_line(exc)
    if url.startswith("sqlite"):
        if "readonly" in first or "unable to open" in first:
            return StorageMisconfigured(f"DATA_DIR / DATABASE_URL: the SQLite file {where} is not writable: {first}")
        return StorageUnavailable(f"DATABASE_URL: SQLite {where}: {first}")
    if any(word in first for word in _PG_MISCONFIGURED) or type(original).__name__ == "ProgrammingError":
        return StorageMisconfigured(f"DATABASE_URL ({where}): {first}")
    return StorageUnavailable(f"DATABASE_URL: cannot reach PostgreSQL at {where}: {first}")


def where_of(url: str) -> str:
    """host:port/database (or the SQLite path) of ``url``, for messages: never the password."""
    try:
        parsed = make_url(engine_url(url))
        port = parsed.port
    except (ArgumentError, ValueError):
        return "the DATABASE_URL"
    if parsed.get_backend_name() == "sqlite":
        return parsed.database or ":memory:"
    return f"{parsed.host or 'localhost'}:{port or 5432}/{parsed.database or ''}"
