"""The database schema, once for both backends (SQLAlchemy Core tables; Alembic migrations create them).

One representation everywhere: times are UTC (``timestamptz`` on PostgreSQL, fixed-width ISO text that
sorts like time on SQLite; aware UTC ``datetime`` in Python), lists of ids are JSON, flags are booleans.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Index,
    Integer,
    MetaData,
    Table,
)
from sqlalchemy import Text as _Text
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in and out; naive ones are refused (a time without a zone is a bug)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("storage times must be timezone-aware")
        moment = value.astimezone(UTC)
        # SQLite keeps the text of a naive time (fixed width, so it sorts like time); PostgreSQL keeps
        # the instant.
        return moment.replace(tzinfo=None) if dialect.name == "sqlite" else moment

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _no_nul(value: Any) -> Any:
    """``value`` without NUL characters, in strings and in the lists and dicts a JSON column holds:
    PostgreSQL's text and jsonb cannot hold them, and SQLite should hold what PostgreSQL would."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_no_nul(item) for item in value]
    if isinstance(value, dict):
        return {_no_nul(key): _no_nul(item) for key, item in value.items()}
    return value


class Text(TypeDecorator[str]):
    """Text without NUL characters (a NUL byte a user typed is dropped, not reported as an outage)."""

    impl = _Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return value.replace("\x00", "") if value is not None else None


class _CleanJson(TypeDecorator[Any]):
    impl = JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> Any:
        return dialect.type_descriptor(postgresql.JSONB() if dialect.name == "postgresql" else JSON())

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        return _no_nul(value)


# A JSON list: jsonb on PostgreSQL (indexable, inspectable), JSON text on SQLite.
IdList: Any = _CleanJson()

metadata = MetaData()

events = Table(
    "events",
    metadata,
    Column("key", Text, primary_key=True),
    Column("expires_at", UtcDateTime, nullable=False),
    Index("events_expires", "expires_at"),
)

user_prefs = Table(
    "user_prefs",
    metadata,
    Column("user_id", Text, primary_key=True),
    Column("lang", Text, nullable=False),
)

channel_prefs = Table(
    "channel_prefs",
    metadata,
    Column("channel_id", Text, primary_key=True),
    Column("auto", Boolean, nullable=False),
)

replies = Table(
    "replies",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("channel", Text, nullable=False),
    Column("message_ts", Text, nullable=False),
    Column("thread_ts", Text, nullable=False),
    Column("case_ids", IdList, nullable=False),
    Column("best_case_id", Text),
    Column("tier", Text, nullable=False),
    Column("source", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Index("replies_best", "channel", "best_case_id", "created_at"),
    Index("replies_created", "created_at"),
    sqlite_autoincrement=True,
)

feedback = Table(
    "feedback",
    metadata,
    Column("reply_id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=False),
    Column("user_id", Text, primary_key=True),
    Column("case_id", Text, primary_key=True),
    Column("vote", Text, nullable=False),
    Column("channel", Text, nullable=False),
    Column("tier", Text, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)

digests = Table(
    "digests",
    metadata,
    Column("period_key", Text, primary_key=True),
    Column("status", Text, nullable=False),
    Column("owner", Text, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("lease_until", UtcDateTime, nullable=False),
    Column("case_ids", IdList, nullable=False),
    Column("message_ts", IdList, nullable=False),
    Column("claimed_at", UtcDateTime, nullable=False),
    Column("completed_at", UtcDateTime),
)

# Confirmed examples: lines of a paste a user confirmed as a case (``bot.app.examples``), redacted.
examples = Table(
    "examples",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("case_id", Text, nullable=False),
    Column("line", Text, nullable=False),
    Column("line_key", Text, nullable=False),  # sha256 of the line, for the unique index
    Column("user_id", Text, nullable=False),
    Column("channel", Text, nullable=False),
    Column("reply_id", BigInteger, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("rejections", Integer, nullable=False, default=0),
    Index("examples_one", "case_id", "user_id", "line_key", unique=True),
    Index("examples_created", "created_at"),
    sqlite_autoincrement=True,
)

# "Not this case" against a confirmed example, one row per case, line and person (``bot.app.examples``).
example_rejections = Table(
    "example_rejections",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("case_id", Text, nullable=False),
    Column("line", Text, nullable=False),
    Column("line_key", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    Column("reviewer", Boolean, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Index("example_rejections_one", "case_id", "line_key", "user_id", unique=True),
    Index("example_rejections_created", "created_at"),
    sqlite_autoincrement=True,
)

# Case drafts started in Slack or the console (``bot.app.drafts``).
drafts = Table(
    "drafts",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("author", Text, nullable=False),
    Column("channel", Text, nullable=False),
    Column("permalink", Text, nullable=False),
    Column("fields", IdList, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("form_nonce", Text),  # the form it was submitted from: a replayed submission stores nothing
    Column("exported_as", Text),  # the case id `cases draft export` wrote it as
    Index("drafts_form", "form_nonce", unique=True),
    sqlite_autoincrement=True,
)

# Reviews of cases (``incident-bot cases review``, ``/incident review``): the digest's "newly reviewed".
reviews = Table(
    "reviews",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("case_id", Text, nullable=False),
    Column("reviewer", Text, nullable=False),
    Column("reviewed_at", UtcDateTime, nullable=False),
    Column("note", Text, nullable=False),
    Index("reviews_case", "case_id", "reviewed_at"),
    sqlite_autoincrement=True,
)

# Hosts named by answers (``bot.app.nodes``): what failed where, for repeat failures.
node_events = Table(
    "node_events",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("host", Text, nullable=False),
    Column("pci", Text, nullable=False),
    Column("gpu", Text, nullable=False),
    Column("case_id", Text, nullable=False),
    Column("failure_class", Text, nullable=False),
    Column("failed", Boolean, nullable=False),
    Column("channel", Text, nullable=False),
    Column("ts", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Index("node_events_host", "host", "created_at"),
    Index("node_events_created", "created_at"),
    sqlite_autoincrement=True,
)

# What operators did to nodes from Slack (``bot.app.drains``): drains, resumes, approvals; the audit trail.
actions = Table(
    "actions",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("kind", Text, nullable=False),
    Column("node", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    Column("channel", Text, nullable=False),
    Column("thread_ts", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("answer", Text, nullable=False),
    Column("approved_by", Text, nullable=False),
    Column("decided_at", UtcDateTime, nullable=True),
    Column("command", Text, nullable=False),
    Index("actions_created", "created_at"),
    Index("actions_node", "node", "created_at"),
    sqlite_autoincrement=True,
)

# Alertmanager notifications, stored before the 200 that tells Alertmanager it need not retry, and the
# messages that answer them, one per alert group and node (``bot.app.alerts``).
alert_notifications = Table(
    "alert_notifications",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("received_at", UtcDateTime, nullable=False),
    Column("group_key", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("done", Boolean, nullable=False),
    Index("alert_notifications_pending", "done", "received_at"),
    sqlite_autoincrement=True,
)

alert_posts = Table(
    "alert_posts",
    metadata,
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("group_key", Text, nullable=False),
    Column("node", Text, nullable=False),
    Column("channel", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("fingerprints", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("ts", Text, nullable=False),
    Column("case_id", Text, nullable=False),
    Column("updated_at", UtcDateTime, nullable=True),
    Index("alert_posts_one", "group_key", "node", unique=True),
    sqlite_autoincrement=True,
)
