"""Confirmed examples: the lines a user confirmed as a case (a Helpful vote, a pick in Other matches).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.storage.schema import UtcDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "examples",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("case_id", sa.Text, nullable=False),
        sa.Column("line", sa.Text, nullable=False),
        sa.Column("line_key", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, nullable=False),
        sa.Column("channel", sa.Text, nullable=False),
        sa.Column("reply_id", sa.BigInteger, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("rejections", sa.Integer, nullable=False, server_default="0"),
        sqlite_autoincrement=True,
    )
    op.create_index("examples_one", "examples", ["case_id", "user_id", "line_key"], unique=True)
    op.create_index("examples_created", "examples", ["created_at"])


def downgrade() -> None:
    raise NotImplementedError("migrations only move forward")
