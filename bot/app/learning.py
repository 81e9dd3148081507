"""Learning off the acknowledgement path: a vote stores its lines and asks for the example index to be
brought up to date; one background thread does it, however many votes ask at once.

Asks that come while a refresh runs fold into one more run after it (the refresh reads whatever is stored
then), so four votes cost at most two refreshes, and no thread of the I/O pool that acknowledges Slack's
events ever waits for one. The thread exits when there is nothing to do.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("incident_bot.learning")


class Refresher:
    """Runs ``work`` on a daemon thread named ``name`` whenever :meth:`request` is called."""

    def __init__(self, work: Callable[[], object], name: str = "examples-refresh") -> None:
        self._work = work
        self._name = name
        self._changed = threading.Condition()
        self._pending = False
        self._running = False

    def request(self) -> None:
        """Ask for a run; returns at once."""
        with self._changed:
            self._pending = True
            if self._running:
                return
            self._running = True
        threading.Thread(target=self._loop, name=self._name, daemon=True).start()

    def _loop(self) -> None:
        while True:
            with self._changed:
                if not self._pending:
                    self._running = False
                    self._changed.notify_all()
                    return
                self._pending = False
            try:
                self._work()
            except Exception:  # the next request tries again; serving goes on with the index it has
                log.exception("example refresh failed")

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no run is pending or running (the console after a vote, tests); False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._pending and not self._running, timeout)
