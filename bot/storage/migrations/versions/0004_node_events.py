"""Hosts named by answers, for repeat failures.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.storage.schema import UtcDateTime

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "node_events",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("host", sa.Text, nullable=False),
        sa.Column("pci", sa.Text, nullable=False),
        sa.Column("gpu", sa.Text, nullable=False),
        sa.Column("case_id", sa.Text, nullable=False),
        sa.Column("failure_class", sa.Text, nullable=False),
        sa.Column("failed", sa.Boolean, nullable=False),
        sa.Column("channel", sa.Text, nullable=False),
        sa.Column("ts", sa.Text, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("node_events_host", "node_events", ["host", "created_at"])
    op.create_index("node_events_created", "node_events", ["created_at"])


def downgrade() -> None:
    raise NotImplementedError("migrations only move forward")
