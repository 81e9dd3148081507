"""Case drafts and reviews.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.storage.schema import IdList, UtcDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "drafts",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("author", sa.Text, nullable=False),
        sa.Column("channel", sa.Text, nullable=False),
        sa.Column("permalink", sa.Text, nullable=False),
        sa.Column("fields", IdList, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "reviews",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("case_id", sa.Text, nullable=False),
        sa.Column("reviewer", sa.Text, nullable=False),
        sa.Column("reviewed_at", UtcDateTime, nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("reviews_case", "reviews", ["case_id", "reviewed_at"])


def downgrade() -> None:
    raise NotImplementedError("migrations only move forward")
