"""One schema for both backends; adopts a database made before Alembic.

A new database gets the tables. A database made by the hand-rolled migrations (table ``schema_version``
at version 1; SQLite with integer-microsecond times and JSON text, PostgreSQL with ``text[]`` lists) is
converted in place: its rows are read, the old tables dropped, the new ones created and the rows written
back, reply ids kept (feedback and buttons refer to them). It all happens in the upgrade's one transaction.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from alembic import op

from bot.storage.schema import IdList, UtcDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")
# Per legacy table: its time columns and its list columns.
_LEGACY: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "events": (("expires_at",), ()),
    "user_prefs": ((), ()),
    "channel_prefs": ((), ()),
    "replies": (("created_at",), ("case_ids",)),
    "feedback": (("updated_at",), ()),
    "digests": (("lease_until", "claimed_at", "completed_at"), ("case_ids", "message_ts")),
}


def _tables() -> dict[str, sa.Table]:
    """The tables as this revision defines them (frozen here: later revisions change them, not this)."""
    meta = sa.MetaData()
    return {
        "events": sa.Table(
            "events",
            meta,
            sa.Column("key", sa.Text, primary_key=True),
            sa.Column("expires_at", UtcDateTime, nullable=False),
            sa.Index("events_expires", "expires_at"),
        ),
        "user_prefs": sa.Table(
            "user_prefs",
            meta,
            sa.Column("user_id", sa.Text, primary_key=True),
            sa.Column("lang", sa.Text, nullable=False),
        ),
        "channel_prefs": sa.Table(
            "channel_prefs",
            meta,
            sa.Column("channel_id", sa.Text, primary_key=True),
            sa.Column("auto", sa.Boolean, nullable=False),
        ),
        "replies": sa.Table(
            "replies",
            meta,
            sa.Column("id", _ID, primary_key=True, autoincrement=True),
            sa.Column("channel", sa.Text, nullable=False),
            sa.Column("message_ts", sa.Text, nullable=False),
            sa.Column("thread_ts", sa.Text, nullable=False),
            sa.Column("case_ids", IdList, nullable=False),
            sa.Column("best_case_id", sa.Text),
            sa.Column("tier", sa.Text, nullable=False),
            sa.Column("source", sa.Text, nullable=False),
            sa.Column("created_at", UtcDateTime, nullable=False),
            sa.Index("replies_best", "channel", "best_case_id", "created_at"),
            sa.Index("replies_created", "created_at"),
            sqlite_autoincrement=True,
        ),
        "feedback": sa.Table(
            "feedback",
            meta,
            sa.Column("reply_id", _ID, primary_key=True, autoincrement=False),
            sa.Column("user_id", sa.Text, primary_key=True),
            sa.Column("case_id", sa.Text, primary_key=True),
            sa.Column("vote", sa.Text, nullable=False),
            sa.Column("channel", sa.Text, nullable=False),
            sa.Column("tier", sa.Text, nullable=False),
            sa.Column("updated_at", UtcDateTime, nullable=False),
        ),
        "digests": sa.Table(
            "digests",
            meta,
            sa.Column("period_key", sa.Text, primary_key=True),
            sa.Column("status", sa.Text, nullable=False),
            sa.Column("owner", sa.Text, nullable=False),
            sa.Column("attempt", sa.Integer, nullable=False),
            sa.Column("lease_until", UtcDateTime, nullable=False),
            sa.Column("case_ids", IdList, nullable=False),
            sa.Column("message_ts", IdList, nullable=False),
            sa.Column("claimed_at", UtcDateTime, nullable=False),
            sa.Column("completed_at", UtcDateTime),
        ),
    }


def _time(value: Any) -> datetime | None:
    """A legacy time: integer microseconds since the epoch (SQLite) or an aware datetime (PostgreSQL)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    return _EPOCH + timedelta(microseconds=int(value))


def _list(value: Any) -> list[str]:
    """A legacy list: JSON text (SQLite) or an array (PostgreSQL)."""
    if isinstance(value, str):
        return [str(item) for item in json.loads(value)]
    return [str(item) for item in value or []]


def _legacy_rows(bind: sa.Connection, name: str) -> list[dict[str, Any]]:
    times, lists = _LEGACY[name]
    rows = [dict(row._mapping) for row in bind.execute(sa.text(f"SELECT * FROM {name}"))]  # noqa: S608 - fixed names
    for row in rows:
        for column in times:
            row[column] = _time(row[column])
        for column in lists:
            row[column] = _list(row[column])
        if name == "channel_prefs":
            row["auto"] = bool(row["auto"])
    return rows


def upgrade() -> None:
    bind = op.get_bind()
    tables = _tables()
    existing = set(sa.inspect(bind).get_table_names())
    if "schema_version" not in existing:
        for table in tables.values():
            table.create(bind)
        return
    # Adopt the pre-Alembic schema: read every row, drop the old tables, create the new, write back.
    kept = {name: _legacy_rows(bind, name) for name in _LEGACY if name in existing}
    for name in [*_LEGACY, "schema_version"]:
        if name in existing:
            op.drop_table(name)
    for name, table in tables.items():
        table.create(bind)
        if kept.get(name):
            bind.execute(table.insert(), kept[name])
    if bind.dialect.name == "postgresql" and kept.get("replies"):
        # Explicit ids were written: the id sequence continues after the largest.
        bind.execute(sa.text("SELECT setval(pg_get_serial_sequence('replies', 'id'), (SELECT max(id) FROM replies))"))


def downgrade() -> None:
    raise NotImplementedError("migrations only move forward")
