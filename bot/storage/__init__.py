"""Storage: the interface (``base``) and :func:`open_storage`, which picks a backend from a URL.

``sqlite:///path`` (default, one file; parent directories are created) or ``postgresql://…`` /
``postgres://…`` (shared by several processes). Callers run :meth:`Storage.migrate` at start-up.
"""

from __future__ import annotations

from pathlib import Path

from bot.storage.base import (
    DigestClaim,
    DigestEntry,
    FeedbackCount,
    LangPref,
    ReplyRecord,
    Storage,
    Vote,
)

__all__ = [
    "DigestClaim",
    "DigestEntry",
    "FeedbackCount",
    "LangPref",
    "ReplyRecord",
    "Storage",
    "Vote",
    "open_storage",
]


def open_storage(url: str) -> Storage:
    """Open (not migrate) the backend for ``url``. Raises ValueError for an unknown scheme.

    Backends are imported lazily so a SQLite deployment never loads psycopg.
    """
    if url.startswith("sqlite:///"):
        from bot.storage.sqlite import SqliteStorage, sqlite_path

        path = sqlite_path(url)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        return SqliteStorage(path)
    if url.startswith(("postgresql://", "postgres://")):
        from bot.storage.postgres import PostgresStorage

        return PostgresStorage(url)
    raise ValueError("storage URL must start with sqlite:/// or postgresql:// (or postgres://)")
