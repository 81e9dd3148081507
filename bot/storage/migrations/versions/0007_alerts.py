"""Alertmanager notifications, stored before they are acknowledged, and the message that answers each
alert group on each node (``bot.app.alerts``).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.storage.schema import UtcDateTime

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "alert_notifications",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("received_at", UtcDateTime, nullable=False),
        sa.Column("group_key", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("done", sa.Boolean, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("alert_notifications_pending", "alert_notifications", ["done", "received_at"])
    op.create_table(
        "alert_posts",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("group_key", sa.Text, nullable=False),
        sa.Column("node", sa.Text, nullable=False),
        sa.Column("channel", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("fingerprints", sa.Text, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("ts", sa.Text, nullable=False),
        sa.Column("case_id", sa.Text, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index("alert_posts_one", "alert_posts", ["group_key", "node"], unique=True)


def downgrade() -> None:
    raise NotImplementedError("migrations only move forward")
