"""Slow and idle clients on the Slack listener (the adversarial review's M7), over real sockets on loopback:
headers not sent in time close the connection, past the connection cap one more is closed at once, a body
not sent in time gets 408, and each condition is logged once a minute, not once per connection."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

import pytest
from aiohttp import web

from bot.slack.guard import GuardedSite, read_body


async def _echo(request: web.Request) -> web.Response:
    body = await read_body(request, seconds=0.5)
    if body is None:
        return web.Response(status=408)
    return web.Response(text=f"got {len(body)}")


@pytest.fixture
async def site() -> AsyncIterator[GuardedSite]:
    app = web.Application()
    app.router.add_post("/", _echo)
    runner = web.AppRunner(app)
    await runner.setup()
    guarded = GuardedSite(runner, "127.0.0.1", 0, max_connections=3, header_seconds=0.5)
    await guarded.start()
    try:
        yield guarded
    finally:
        await runner.cleanup()


async def _close(writer: asyncio.StreamWriter) -> None:
    """Close a client connection and wait until its socket is closed (else it is left to the collector)."""
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


async def _until(condition: Callable[[], bool], within: float = 5.0) -> None:
    """Wait for a server-side condition, polling, with a deadline (it has no event to wait on)."""
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Whether the server closes the connection (EOF) within ``seconds``."""
    try:
        return await asyncio.wait_for(reader.read(1024), seconds) == b""
    except (TimeoutError, ConnectionResetError):
        return False


async def _request(port: int, body: bytes = b"hello") -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
    writer.write(head + body)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 5)
    await _close(writer)
    return answer


async def test_a_request_in_time_is_served(site: GuardedSite) -> None:
    answer = await _request(site._bound_port)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"got 5")


async def test_a_client_that_never_finishes_its_headers_is_closed(
    site: GuardedSite, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="incident_bot.http")
    slow = [await asyncio.open_connection("127.0.0.1", site._bound_port) for _ in range(2)]
    for _, writer in slow:
        writer.write(b"POST / HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        await writer.drain()
    assert all([await _closed_within(reader, 5) for reader, _ in slow])
    assert site.limits.open == 0 and site.limits.dropped["headers too slow"] == 2
    lines = [r for r in caplog.records if r.name == "incident_bot.http"]
    assert len(lines) == 1 and "headers too slow" in lines[0].getMessage()  # one line, not one per client
    for _, writer in slow:
        await _close(writer)


async def test_past_the_cap_the_oldest_waiting_client_makes_room(site: GuardedSite) -> None:
    """Three slow clients fill the cap: a fourth connection closes the oldest of them, and a real request
    arriving then is served at once (slow clients cannot crowd real ones out)."""
    idle = [await asyncio.open_connection("127.0.0.1", site._bound_port) for _ in range(3)]
    assert (await _request(site._bound_port)).startswith(b"HTTP/1.1 200")
    assert await _closed_within(idle[0][0], 1.0)  # the oldest went to make room
    assert site.limits.dropped["made room"] >= 1
    for _, writer in idle:
        await _close(writer)


async def test_past_the_cap_with_nobody_waiting_a_new_connection_is_closed(site: GuardedSite) -> None:
    held = []
    for _ in range(3):  # three connections that sent their headers and now send their body slowly
        reader, writer = await asyncio.open_connection("127.0.0.1", site._bound_port)
        writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
        await writer.drain()
        held.append((reader, writer))
    await _until(lambda: not site.limits.waiting and site.limits.open == 3)  # the server read all three heads
    reader, writer = await asyncio.open_connection("127.0.0.1", site._bound_port)
    assert await _closed_within(reader, 1.0)
    assert site.limits.dropped["too many connections"] == 1
    for _, held_writer in [*held, (reader, writer)]:
        await _close(held_writer)


async def test_a_body_not_sent_in_time_gets_408(site: GuardedSite) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", site._bound_port)
    writer.write(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly part")
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(1024), 5)
    assert answer.startswith(b"HTTP/1.1 408")
    await _close(writer)
