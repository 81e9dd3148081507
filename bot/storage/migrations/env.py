"""Alembic's entry point: always run on the connection ``bot.storage.migrate`` passes in (already in a
locked transaction), never from a URL of its own."""

from __future__ import annotations

from alembic import context

from bot.storage.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations with `incident-bot db upgrade` (bot.storage.migrate), not alembic directly")
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
