"""incident-bot's own version: the installed distribution's, as ``pyproject.toml`` gives it."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def bot_version() -> str:
    """``0.1.0``; ``unknown`` when run from a tree that was never installed."""
    try:
        return version("incident-bot")
    except PackageNotFoundError:  # pragma: no cover - the Makefile always installs it
        return "unknown"
