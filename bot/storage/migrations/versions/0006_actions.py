"""What operators did to nodes from Slack: drains and resumes with who, when, why, the command and the
scheduler's answer, and requests waiting for a second operator (``bot.app.drains``).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.storage.schema import UtcDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "actions",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("node", sa.Text, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, nullable=False),
        sa.Column("channel", sa.Text, nullable=False),
        sa.Column("thread_ts", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("answer", sa.Text, nullable=False),
        sa.Column("approved_by", sa.Text, nullable=False),
        sa.Column("decided_at", UtcDateTime, nullable=True),
        sa.Column("command", sa.Text, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("actions_created", "actions", ["created_at"])
    op.create_index("actions_node", "actions", ["node", "created_at"])


def downgrade() -> None:
    raise NotImplementedError("migrations only move forward")
