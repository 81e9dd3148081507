"""The ordinary text that no signature may hit, shipped with the package (``bot/library/ordinary/``):
everyday team chat and healthy training-log lines (no signature may hit them), and the lines of the
hard-negative fixture pastes (no decisive signature may hit them)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources


def _read(name: str) -> str:
    text = resources.files("bot.library").joinpath("ordinary", name).read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if line.strip() and not line.startswith("# "))


@lru_cache(maxsize=1)
def ordinary_text() -> tuple[str, str]:
    """(chat and healthy training lines, hard-negative lines), one line per line."""
    return _read("chat.txt") + "\n" + _read("training.txt"), _read("negatives.txt")
