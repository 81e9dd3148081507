"""Slow-client benchmark: real requests while 1,000 slow clients hold connections.

    .venv/bin/python -m bench.slow_clients_bench [--slow 1000] [--seconds 20]

A listener runs in a child process whose file limit is 1,024 (``RLIMIT_NOFILE``), serving ``GET /healthz``:
the Slack listener behind the bot's guard (``bot.slack.guard.GuardedSite``, as ``incident-bot run``
listens) and as plain aiohttp (``web.TCPSite``, what the bot used before); the MCP listener as uvicorn with
the bot's protocol (``bot.mcp.connections``, as ``incident-bot mcp --http`` listens) and as uvicorn with
only its keep-alive and concurrency settings (before); all four in the same run. ``--slow`` clients connect and
send a request's first line and then one header byte a second, never finishing their headers (slowloris);
meanwhile a real client sends ``GET /healthz`` every 50 ms on a new connection and records how long each
takes (a failure to connect or an error counts as the timeout, 5 s). Reported: p50, p95, max and failures.
The issue's bar: p95 under 1 s behind the guard.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import asyncio, resource, sys
from aiohttp import web
from bot.slack.guard import GuardedSite
resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
async def healthz(request):
    return web.Response(text="ok")
async def main():
    app = web.Application()
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app, keepalive_timeout=15)
    await runner.setup()
    site = GuardedSite(runner, "127.0.0.1", 0) if sys.argv[1] == "guard" else web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(site._server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""
MCP_CHILD = r"""
import asyncio, resource, socket, sys
import uvicorn
from bot.mcp.connections import guarded_h11
from bot.mcp.run import MAX_CONNECTIONS
resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
async def healthz(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
print(sock.getsockname()[1], flush=True)
options = {"limit_concurrency": MAX_CONNECTIONS}
if sys.argv[1] == "guard":
    options = {"http": guarded_h11(MAX_CONNECTIONS)[0], "limit_concurrency": MAX_CONNECTIONS + 1}
config = uvicorn.Config(healthz, lifespan="off", log_level="error", timeout_keep_alive=5, **options)
asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
"""
TIMEOUT = 5.0
LISTENERS = {
    # name: (child script, its argument)
    "Slack, guarded (bot)": (CHILD, "guard"),
    "Slack, plain aiohttp": (CHILD, "plain"),
    "MCP, guarded (bot)": (MCP_CHILD, "guard"),
    "MCP, plain uvicorn": (MCP_CHILD, "plain"),
}


async def _slow(port: int, stop: asyncio.Event) -> None:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        await writer.drain()
        while not stop.is_set():
            await asyncio.sleep(1.0)
            writer.write(b"a")
            await writer.drain()
    except (OSError, ConnectionError):
        return


async def _real(port: int) -> float:
    started = time.perf_counter()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), TIMEOUT)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), TIMEOUT)
        writer.close()
        if not answer.startswith(b"HTTP/1.1 200"):
            return TIMEOUT
    except (OSError, ConnectionError, TimeoutError):
        return TIMEOUT
    return time.perf_counter() - started


async def _round(port: int, slow: int, seconds: float) -> list[float]:
    stop = asyncio.Event()
    holders = [asyncio.create_task(_slow(port, stop)) for _ in range(slow)]
    await asyncio.sleep(1.0)  # let them connect
    times: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        times.append(await _real(port))
        await asyncio.sleep(0.05)
    stop.set()
    for task in holders:
        task.cancel()
    await asyncio.gather(*holders, return_exceptions=True)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slow", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args(argv)
    print(f"{'listener':22} {'requests':>8} {'p50':>8} {'p95':>8} {'max':>8} {'failed':>7}")
    for name, (script, mode) in LISTENERS.items():
        child = subprocess.Popen(
            [sys.executable, "-c", script, mode], stdout=subprocess.PIPE, text=True, env={**os.environ}
        )
        try:
            assert child.stdout is not None
            port = int(child.stdout.readline())
            times = asyncio.run(_round(port, args.slow, args.seconds))
        finally:
            child.kill()
            child.wait()
        ordered = sorted(times)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        failed = sum(1 for t in times if t >= TIMEOUT)
        print(
            f"{name:22} {len(times):>8} {statistics.median(times):>7.3f}s {p95:>7.3f}s {max(times):>7.3f}s {failed:>7}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
