"""Slow clients on the MCP server's HTTP listener. uvicorn closes an idle keep-alive connection but has no
deadline for a request's headers (a client that sends a byte a minute, or nothing, holds a file descriptor
for ever) and no cap on open connections. Its h11 protocol is subclassed here: every request's headers are
due within ``HEADER_SECONDS`` of the connection opening or of the previous response; at most
``max_connections`` are open, the oldest one still waiting for headers making room for a new one. The
body's deadline is kept by :func:`bot.mcp.run.parse_first`. Limits and log lines are the Slack listener's
(:mod:`bot.ops.connections`)."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from bot.ops.connections import HEADER_SECONDS, Limits

log = logging.getLogger("incident_bot.mcp")


class _GuardedH11(H11Protocol):
    def __init__(self, *args: Any, limits: Limits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._limits = limits
        self._timer: asyncio.TimerHandle | None = None
        self._awaited: object = None  # the cycle current when the timer was armed
        self._counted = False
        self._started = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if not self._limits.admit():
            transport.close()
            return
        self._limits.open += 1
        self._counted = self._started = True
        super().connection_made(transport)
        self._arm()

    def _arm(self) -> None:
        self._limits.waiting[self] = self.transport
        self._awaited = self.cycle
        self._timer = self.loop.call_later(self._limits.header_seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._limits.waiting.pop(self, None)

    def _too_slow(self) -> None:
        self._timer = None
        self._limits.note("headers too slow")
        self.drop()

    def drop(self) -> None:
        """Close this connection now and stop counting it (its ``connection_lost`` comes later)."""
        self._disarm()
        if self._counted:
            self._limits.open -= 1
            self._counted = False
        self.transport.abort()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._timer is not None and self.cycle is not self._awaited:  # a request's headers were read
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        waiting = self.cycle is None or self.cycle.response_complete  # no pipelined request started
        if self._started and self._timer is None and waiting and not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._counted:
            self._limits.open -= 1
            self._counted = False
        if self._started:
            self._started = False
            super().connection_lost(exc)


def guarded_h11(
    max_connections: int, header_seconds: float = HEADER_SECONDS
) -> tuple[Callable[..., asyncio.Protocol], Limits]:
    """The protocol factory to give uvicorn as ``http=``, and the limits it keeps (tests read them)."""
    limits = Limits(max_connections, header_seconds, log)
    return functools.partial(_GuardedH11, limits=limits), limits
