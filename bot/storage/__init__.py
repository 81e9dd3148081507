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
    StorageError,
    StorageMisconfigured,
    StorageUnavailable,
    Vote,
)

__all__ = [
    "DigestClaim",
    "DigestEntry",
    "FeedbackCount",
    "LangPref",
    "ReplyRecord",
    "Storage",
    "StorageError",
    "StorageMisconfigured",
    "StorageUnavailable",
    "Vote",
    "open_storage",
]


def open_storage(url: str) -> Storage:
    """Open (not migrate) the backend for ``url``. Raises :class:`StorageMisconfigured` for an unknown
    scheme or a SQLite file that cannot be created.

    Backends are imported lazily so a SQLite deployment never loads psycopg.
    """
    if url.startswith("sqlite:///"):
        from bot.storage.sqlite import SqliteStorage, sqlite_path

        path = sqlite_path(url)
        if path != ":memory:":
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageMisconfigured(
                    f"DATA_DIR / DATABASE_URL: cannot create {Path(path).parent}: {exc.strerror or exc}"
                ) from None
        return SqliteStorage(path)
    if url.startswith(("postgresql://", "postgres://")):
        from bot.storage.postgres import PostgresStorage

        return PostgresStorage(url)
    raise StorageMisconfigured("DATABASE_URL must start with sqlite:///, postgresql:// or postgres://")
