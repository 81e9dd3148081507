"""Running the MCP server: stdio (stdout carries only JSON-RPC; logs go to stderr) or Streamable HTTP on
``MCP_HOST``:``MCP_PORT``. Bound anywhere but loopback it needs ``MCP_TOKEN`` (a bearer token, compared in
constant time) and ``MCP_ALLOWED_HOSTS``; the SDK's DNS-rebinding protection checks Host and Origin."""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from bot.ops.connections import BODY_SECONDS
from bot.ops.settings import Settings

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


MIN_TOKEN_CHARS = 16  # a bearer token on a public bind: guessing it must be hopeless


class McpMisconfigured(Exception):
    """The MCP settings cannot be served safely; ``str(error)`` names the setting."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _listed(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def security(settings: Settings) -> TransportSecuritySettings:
    """Host and Origin checks: loopback names on loopback, else exactly ``MCP_ALLOWED_HOSTS`` and
    ``MCP_ALLOWED_ORIGINS``. Raises :class:`McpMisconfigured` for a public bind without a token or hosts."""
    host = settings.mcp_host
    if is_loopback(host):
        hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", *_listed(settings.mcp_allowed_hosts)]
        origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", *_listed(settings.mcp_allowed_origins)]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )
    if settings.mcp_token is None:
        raise McpMisconfigured(f"MCP_HOST={host} is not loopback: set MCP_TOKEN (clients send it as a bearer token)")
    if len(settings.mcp_token.get_secret_value()) < MIN_TOKEN_CHARS:
        raise McpMisconfigured(
            f"MCP_HOST={host} is not loopback: MCP_TOKEN is shorter than {MIN_TOKEN_CHARS} characters"
            " (openssl rand -hex 16 makes one)"
        )
    if not _listed(settings.mcp_allowed_hosts):
        raise McpMisconfigured(f"MCP_HOST={host} is not loopback: set MCP_ALLOWED_HOSTS (the Host names clients use)")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=_listed(settings.mcp_allowed_hosts),
        allowed_origins=_listed(settings.mcp_allowed_origins),
    )


def require_token(app: App, token: str) -> App:
    """``app`` behind ``Authorization: Bearer <token>`` (constant-time comparison); 401 otherwise."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if not hmac.compare_digest(given, expected):
            body = json.dumps({"error": "missing or wrong bearer token (MCP_TOKEN)"}).encode()
            headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return guarded


MAX_IN_FLIGHT = 16  # HTTP requests being read or answered at once (each may hold a 4 MiB body)
MAX_CONNECTIONS = 256  # open connections (bot.mcp.connections), and tasks before uvicorn answers 503


def limit_in_flight(app: App, limit: int) -> App:
    """``app`` answering 503 (JSON, ``Retry-After: 1``) to an HTTP request past ``limit`` in flight: bodies
    held in memory are bounded by ``limit`` x the body cap, whatever clients send."""
    in_flight = 0

    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        nonlocal in_flight
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        if in_flight >= limit:
            body = json.dumps({"error": "too many requests in flight: retry shortly"}).encode()
            headers = [(b"content-type", b"application/json"), (b"retry-after", b"1")]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        in_flight += 1
        try:
            await app(scope, receive, send)
        finally:
            in_flight -= 1

    return limited


def parse_first(app: App, max_bytes: int, body_seconds: float = BODY_SECONDS) -> App:
    """``app`` behind a JSON check of each POST body: a body the JSON parser refuses (a 5,000-digit number,
    nesting deeper than Python recurses, not JSON at all) gets a JSON-RPC parse error (HTTP 400, code
    -32700) instead of reaching the SDK, which answered 500 and logged a traceback; a body over
    ``max_bytes`` gets 413; a body not received whole within ``body_seconds`` gets 408. What passes is
    handed on as it came."""

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        loop = asyncio.get_running_loop()
        due = loop.time() + body_seconds
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(due - loop.time(), 0.0))
            except TimeoutError:
                await _answer(send, 408, {"error": f"request body not received within {body_seconds:g} s"})
                return
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > max_bytes:
                await _answer(send, 413, {"error": f"request body over {max_bytes} bytes"})
                return
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        try:
            json.loads(body)
        except (ValueError, RecursionError) as exc:
            error = {"code": -32700, "message": f"Parse error: {type(exc).__name__}"}
            await _answer(send, 400, {"jsonrpc": "2.0", "id": None, "error": error})
            return
        replayed = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return checked


async def _answer(send: Send, status: int, document: dict[str, Any]) -> None:
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(document).encode()})
