"""``incident-bot db upgrade`` / ``db current``: the schema migrations, run on demand (``run`` and the
other commands also upgrade at start)."""

from __future__ import annotations

import argparse
from typing import Any

from bot.cli.compose import load_settings
from bot.storage import open_storage


def cmd_db(args: argparse.Namespace) -> int:
    # Here, not at the top: SQLAlchemy and Alembic are not imported by commands that need no database.
    from bot.storage.dialects import where_of
    from bot.storage.migrate import head_revision

    settings = load_settings({"CASES_DIR": args.cases} if getattr(args, "cases", None) else {})
    url = settings.effective_database_url
    storage: Any = open_storage(url)
    try:
        before = storage.schema_version()
        if args.db_command == "upgrade":
            storage.migrate()
            after = storage.schema_version()
            change = "already current" if before == after else f"upgraded from {before or 'none'}"
            print(f"database {where_of(url)}: revision {after} ({change})")
        else:
            state = "current" if before == head_revision() else "behind: run `incident-bot db upgrade`"
            print(f"database {where_of(url)}: revision {before or 'none'}, newest {head_revision()} ({state})")
    finally:
        storage.close()
    return 0
