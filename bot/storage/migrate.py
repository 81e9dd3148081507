"""Schema migrations: Alembic revisions shipped inside the package (``bot/storage/migrations``), run by
``incident-bot db upgrade`` and at every start.

Policy: revisions only move forward, one transaction per upgrade, under a lock (a PostgreSQL advisory lock
per schema; SQLite's write lock), so replicas starting together migrate once and a failed upgrade leaves the
database as it was. A database created before Alembic (the hand-rolled ``schema_version`` 1 of either
backend) is adopted by the first revision and converted in place, its data kept.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine

from bot.storage.dialects import IMMEDIATE, lock_for_migration

MIGRATIONS = Path(__file__).parent / "migrations"


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Upgrade to ``revision`` in one locked transaction."""
    with engine.connect() as connection:
        connection.info[IMMEDIATE] = True
        with connection.begin():
            lock_for_migration(connection)
            command.upgrade(_config(connection), revision)


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(_config()).get_current_head()
