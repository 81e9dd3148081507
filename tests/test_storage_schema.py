"""The migrations and the model agree: an empty database migrated to head, on SQLite and PostgreSQL, has
exactly the tables, columns, types, nullability, indexes and unique constraints of ``bot/storage/schema.py``
(Alembic's ``compare_metadata``), so a migration and the model can never drift apart."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Column, Index, MetaData, Text

from bot.storage import open_storage
from bot.storage.schema import metadata


def differences(url: str, model: MetaData) -> list[Any]:
    store = open_storage(url)
    try:
        store.migrate()
        with store.engine.connect() as conn:  # type: ignore[attr-defined]
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            return list(compare_metadata(context, model))
    finally:
        store.close()


def test_the_migrated_schema_is_the_model(storage_url: str) -> None:
    assert differences(storage_url, metadata) == []


def test_a_drift_is_seen(storage_url: str) -> None:
    """The comparison itself can fail: a model with one more column and one more index differs."""
    drifted = MetaData()
    for table in metadata.sorted_tables:
        table.to_metadata(drifted)
    events = drifted.tables["node_events"]
    events.append_column(Column("planted", Text, nullable=True))
    Index("node_events_planted", events.c.planted)
    found = differences(storage_url, drifted)
    kinds = {diff[0] for diff in found if isinstance(diff, tuple)}
    assert {"add_column", "add_index"} <= kinds, found
