"""Who said "Not this case" against a confirmed example: different people's rejections demote it, then
drop it; one reviewer's drops it (``bot.matching.examples.example_lines``). And drafts remember the form
they came from (a replayed submission stores nothing more) and the case they were exported as.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from bot.storage.schema import UtcDateTime

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "example_rejections",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("case_id", sa.Text, nullable=False),
        sa.Column("line", sa.Text, nullable=False),
        sa.Column("line_key", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, nullable=False),
        sa.Column("reviewer", sa.Boolean, nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("example_rejections_one", "example_rejections", ["case_id", "line_key", "user_id"], unique=True)
    op.create_index("example_rejections_created", "example_rejections", ["created_at"])
    op.add_column("drafts", sa.Column("form_nonce", sa.Text, nullable=True))
    op.add_column("drafts", sa.Column("exported_as", sa.Text, nullable=True))
    op.create_index("drafts_form", "drafts", ["form_nonce"], unique=True)


def downgrade() -> None:
    raise NotImplementedError("migrations only move forward")
