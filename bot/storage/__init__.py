"""Storage: the interface (``base``) and :func:`open_storage`, which picks a backend from a URL.

``sqlite:///path`` (default, one file; parent directories are created) or ``postgresql://…`` /
``postgres://…`` (shared by several processes), both through one SQLAlchemy Core implementation
(``bot.storage.sql``). Callers run :meth:`Storage.migrate` (Alembic, ``bot.storage.migrate``) at start-up.
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
    """Open (not migrate) the database for ``url``. Raises :class:`StorageMisconfigured` for an unknown
    scheme or a SQLite file whose directory cannot be created. SQLAlchemy and the driver load lazily."""
    if url.startswith("sqlite:///"):
        path = url.removeprefix("sqlite:///")
        if path and path != ":memory:":
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageMisconfigured(
                    f"DATA_DIR / DATABASE_URL: cannot create {Path(path).parent}: {exc.strerror or exc}"
                ) from None
    elif not url.startswith(("postgresql://", "postgres://")):
        raise StorageMisconfigured("DATABASE_URL must start with sqlite:///, postgresql:// or postgres://")
    from bot.storage.sql import SqlStorage

    return SqlStorage(url)
