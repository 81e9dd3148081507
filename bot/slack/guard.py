"""Slow and idle clients on the Slack listener: a connection must send its request's headers within
``HEADER_SECONDS`` and its body within ``BODY_SECONDS``; at most ``MAX_CONNECTIONS`` are open at once:
past it the oldest connection still waiting for its headers is closed to make room (slow clients cannot
crowd out real ones), and when none is waiting the new one is closed; an idle keep-alive connection closes
after ``KEEPALIVE_SECONDS``. aiohttp has
no header or body timeout of its own (a client that sends one byte a minute holds a file descriptor
forever), so each connection's protocol is wrapped here. One log line per condition per minute, never one
per connection (a flood of them would be a flood of lines).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web

from bot.ops.connections import BODY_SECONDS, HEADER_SECONDS, MAX_CONNECTIONS, Limits

log = logging.getLogger("incident_bot.http")

KEEPALIVE_SECONDS = 15.0
_HEADERS_END = b"\r\n\r\n"
_HEADERS_SEEN = 16 << 10  # bytes of a first request's head looked through for its end


class _Guarded(asyncio.Protocol):
    """aiohttp's request handler behind a connection cap and a deadline for the first request's headers."""

    def __init__(self, inner: Any, limits: Limits) -> None:
        self._inner = inner
        self._limits = limits
        self._head = b""
        self._headed = False
        self._counted = False  # in the listener's count of open connections
        self._started = False  # aiohttp's handler was given the connection
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        limits = self._limits
        if not limits.admit():
            transport.close()
            return
        limits.open += 1
        limits.waiting[self] = transport
        self._counted = True
        self._started = True
        self._timer = asyncio.get_running_loop().call_later(self._limits.header_seconds, self._too_slow, transport)
        self._inner.connection_made(transport)

    def _too_slow(self, transport: asyncio.BaseTransport) -> None:
        if not self._headed:
            self._limits.note("headers too slow")
            self.drop()

    def drop(self) -> None:
        """Close this connection now and stop counting it (its ``connection_lost`` comes later)."""
        transport = self._limits.waiting.pop(self, None)
        if self._counted:
            self._limits.open -= 1
            self._counted = False
        if self._timer is not None:
            self._timer.cancel()
        if transport is not None:
            transport.abort()  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        if not self._headed:
            self._head = (self._head + data)[-_HEADERS_SEEN:]
            if _HEADERS_END in self._head:
                self._headed = True
                self._head = b""
                self._limits.waiting.pop(self, None)
                if self._timer is not None:
                    self._timer.cancel()
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        result: bool | None = self._inner.eof_received()
        return result

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._limits.waiting.pop(self, None)
        if self._counted:
            self._limits.open -= 1
            self._counted = False
        if self._started:
            self._started = False
            self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


class GuardedSite(web.TCPSite):
    """``web.TCPSite`` whose connections are :class:`_Guarded`."""

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str | None = None,
        port: int | None = None,
        *,
        max_connections: int = MAX_CONNECTIONS,
        header_seconds: float = HEADER_SECONDS,
    ) -> None:
        super().__init__(runner, host, port)
        self.limits = Limits(max_connections, header_seconds, log)

    async def start(self) -> None:
        await web.BaseSite.start(self)
        loop = asyncio.get_running_loop()
        server = self._runner.server
        assert server is not None
        limits = self.limits
        self._server = await loop.create_server(lambda: _Guarded(server(), limits), self._host, self._port)
        sockets = self._server.sockets
        self._bound_port = sockets[0].getsockname()[1] if sockets else self._port


async def read_body(request: web.Request, seconds: float = BODY_SECONDS) -> bytes | None:
    """The request's body, or None when the client did not send it within ``seconds``."""
    try:
        return await asyncio.wait_for(request.read(), seconds)
    except TimeoutError:
        return None
