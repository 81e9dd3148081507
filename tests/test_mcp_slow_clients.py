"""Slow and idle clients on the MCP server's listener (the adversarial review's M7, the uvicorn side), over
real sockets on loopback through a real uvicorn server with the bot's protocol: a request's headers not
sent in time close the connection (on a new connection and after a keep-alive response, where uvicorn
alone keeps waiting), past the connection cap the oldest waiting client makes room, a body not sent in
time gets 408, and each condition is logged once a minute, not once per connection."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import pytest
import uvicorn

from bot.mcp.connections import guarded_h11
from bot.mcp.run import parse_first
from bot.ops.connections import Limits


async def _echo(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    size = 0
    while True:
        message = await receive()
        size += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": f"got {size}".encode()})


class Listener:
    def __init__(self, port: int, limits: Limits) -> None:
        self.port = port
        self.limits = limits


@pytest.fixture
async def listener() -> AsyncIterator[Listener]:
    protocol, limits = guarded_h11(3, header_seconds=0.5)
    config = uvicorn.Config(
        parse_first(_echo, 1 << 20, body_seconds=0.5),
        http=protocol,  # type: ignore[arg-type]
        lifespan="off",
        log_level="warning",
        timeout_keep_alive=30,  # longer than the header deadline: what closes a slow client is the guard
    )
    server = uvicorn.Server(config)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    deadline = asyncio.get_running_loop().time() + 10
    while not server.started:
        assert asyncio.get_running_loop().time() < deadline, "uvicorn did not start"
        await asyncio.sleep(0.01)
    try:
        yield Listener(sock.getsockname()[1], limits)
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
        sock.close()


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Whether the server closes the connection (EOF or reset) within ``seconds``, reading what it sends."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    try:
        while loop.time() < deadline:
            if await asyncio.wait_for(reader.read(4096), max(deadline - loop.time(), 0.01)) == b"":
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return False


def _post(body: bytes = b'{"x": 1}', close: bool = True) -> bytes:
    connection = "Connection: close\r\n" if close else ""
    return f"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n{connection}\r\n".encode() + body


async def _request(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_post())
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 5)
    await _close(writer)
    return answer


async def test_a_request_in_time_is_served(listener: Listener) -> None:
    answer = await _request(listener.port)
    assert answer.startswith(b"HTTP/1.1 200") and b"got 8" in answer


async def test_clients_that_never_finish_their_headers_are_closed_with_one_log_line(
    listener: Listener, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="incident_bot.mcp")
    slow = [await asyncio.open_connection("127.0.0.1", listener.port) for _ in range(2)]
    slow[0][1].write(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
    await slow[0][1].drain()  # the other sends nothing at all
    assert all([await _closed_within(reader, 5) for reader, _ in slow])
    assert listener.limits.open == 0 and listener.limits.dropped["headers too slow"] == 2
    lines = [r for r in caplog.records if r.name == "incident_bot.mcp"]
    assert len(lines) == 1 and "headers too slow" in lines[0].getMessage()
    for _, writer in slow:
        await _close(writer)


async def test_after_a_keep_alive_response_the_next_headers_are_due_in_time(listener: Listener) -> None:
    """uvicorn cancels its keep-alive timer on the first byte of the next request and then waits for ever;
    the guard gives that request's headers the same deadline as the first's."""
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(_post(close=False))
    await writer.drain()
    first = await asyncio.wait_for(reader.readuntil(b"got 8"), 5)
    assert first.startswith(b"HTTP/1.1 200")
    writer.write(b"POST /mcp HTTP/1.1\r\nHo")
    await writer.drain()
    assert await _closed_within(reader, 5)
    assert listener.limits.dropped["headers too slow"] == 1
    await _close(writer)


async def test_past_the_cap_the_oldest_waiting_client_makes_room(listener: Listener) -> None:
    idle = [await asyncio.open_connection("127.0.0.1", listener.port) for _ in range(3)]
    answer = await _request(listener.port)
    assert answer.startswith(b"HTTP/1.1 200")  # served, not 503: the guard counts, uvicorn does not refuse
    assert await _closed_within(idle[0][0], 1.0)
    assert listener.limits.dropped["made room"] >= 1
    for _, writer in idle:
        await _close(writer)


async def test_a_body_not_sent_in_time_gets_408(listener: Listener) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly part")
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(1024), 5)
    assert answer.startswith(b"HTTP/1.1 408") and b"not received within 0.5 s" in answer
    await _close(writer)
