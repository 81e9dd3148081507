"""Connection limits shared by the bot's two HTTP listeners (the Slack listener on aiohttp, the MCP server
on uvicorn): at most ``MAX_CONNECTIONS`` open, a request's headers due within ``HEADER_SECONDS`` and its
body within ``BODY_SECONDS``; past the cap the oldest connection still waiting for its headers is closed
to make room. One log line per condition per minute, never one per connection."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

HEADER_SECONDS = 10.0
BODY_SECONDS = 10.0
MAX_CONNECTIONS = 512
_LOG_EVERY = 60.0


class Droppable(Protocol):
    def drop(self) -> None: ...


class Limits:
    """A listener's open connections, those waiting for a request's headers (oldest first), and the last
    time each condition was logged."""

    def __init__(self, max_connections: int, header_seconds: float, log: logging.Logger) -> None:
        self.max_connections = max_connections
        self.header_seconds = header_seconds
        self.open = 0
        self.waiting: dict[Droppable, asyncio.BaseTransport] = {}
        self.dropped: dict[str, int] = {"too many connections": 0, "headers too slow": 0, "made room": 0}
        self._log = log
        self._logged: dict[str, float] = {}

    def admit(self) -> bool:
        """Whether one more connection may open, closing the oldest waiting one to make room if needed."""
        if self.open >= self.max_connections and self.waiting:
            oldest = next(iter(self.waiting))
            self.note("made room")
            oldest.drop()  # the slowest client makes room
        if self.open >= self.max_connections:
            self.note("too many connections")
            return False
        return True

    def note(self, condition: str) -> None:
        self.dropped[condition] += 1
        now = time.monotonic()
        if now - self._logged.get(condition, -_LOG_EVERY) >= _LOG_EVERY:
            self._logged[condition] = now
            self._log.warning("http: connection closed: %s (%d so far)", condition, self.dropped[condition])
