"""The time as the bot sees it: a :data:`Clock` is handed to everything that needs the date.

The wall clock itself is read in one place, the composition root (``bot.cli.compose.wall_clock``);
``tests/test_clock_seam.py`` fails when any other module of ``bot`` or ``handlers`` reads it. Monotonic
timers for deadlines are not the date and stay where they are used.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta

Clock = Callable[[], datetime]


def ticking_from(start: datetime, monotonic: Callable[[], float] = time.monotonic) -> Clock:
    """A clock that reads ``start`` (aware) at the moment it is made and then advances with ``monotonic``:
    a process started at a chosen instant (``INCIDENT_BOT_TEST_NOW``) keeps time like any other."""
    if start.tzinfo is None:
        raise ValueError("start must be timezone-aware")
    origin = monotonic()

    def now() -> datetime:
        return start + timedelta(seconds=monotonic() - origin)

    return now


def fixed(at: datetime) -> Clock:
    """A clock that always reads ``at`` (aware)."""
    if at.tzinfo is None:
        raise ValueError("at must be timezone-aware")
    return lambda: at
