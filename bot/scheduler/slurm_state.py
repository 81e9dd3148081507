"""Slurm's words for a node's state, mapped onto the reply's (``bot.model.nodestate.State``). Pure.

sinfo prints a long state with suffixes (``idle*``: not responding, ``drained``, ``draining``,
``mixed-``, ``down*``); slurmrestd a base state and flags (``idle`` with ``["DRAIN"]``); scontrol
``IDLE+DRAIN+NOT_RESPONDING``. A drained node with jobs on it is draining; ``drained`` only once none is
left, which is what a GPU reset may wait for.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from bot.model.nodestate import State

_BASE: dict[str, State] = {
    "idle": "idle",
    "allocated": "allocated",
    "alloc": "allocated",
    "mixed": "mixed",
    "mix": "mixed",
    "completing": "allocated",
    "comp": "allocated",
    "drained": "drained",
    "drain": "drained",
    "draining": "draining",
    "drng": "draining",
    "down": "down",
    "fail": "down",
    "failing": "draining",
    "future": "unknown",
    "unknown": "unknown",
    "planned": "idle",
    "reserved": "idle",
    "resv": "idle",
    "maint": "idle",
    "inval": "down",
    "invalid": "down",
    "power_down": "down",
    "powered_down": "down",
    "powering_down": "down",
    "powering_up": "unknown",
    "reboot_issued": "down",
    "reboot_requested": "allocated",
}
_SUFFIXES = "*~#!%$@^-+"


def from_words(base: str, flags: Iterable[str] = (), jobs: int = 0) -> tuple[State, bool]:
    """(state, not responding) from a base state and flags, in any of Slurm's spellings."""
    words = [w.strip().lower() for w in base.replace("+", " ").split()]
    not_responding = any(w.endswith("*") for w in words)
    words = [w.rstrip(_SUFFIXES) for w in words]
    flag_words = {f.strip().lower() for f in flags} | set(words[1:])
    not_responding = not_responding or "not_responding" in flag_words
    state: State = _BASE.get(words[0], "unknown") if words else "unknown"
    if state == "down" or "down" in flag_words:
        return "down", not_responding
    if "drain" in flag_words or state in ("drained", "draining"):
        busy = jobs > 0 or state in ("allocated", "mixed", "draining") or "completing" in flag_words
        return ("draining" if busy else "drained"), not_responding
    return state, not_responding


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def from_epoch(seconds: int) -> datetime | None:
    """A time Slurm printed as seconds since the epoch (0 or less: none)."""
    return _EPOCH + timedelta(seconds=seconds) if seconds > 0 else None
