"""The MCP server's guards in process (``tests/test_mcp.py`` runs the real server): which binds count as
loopback, the Host and Origin lists each bind gets, the refusals of a public bind without a token or hosts,
and the bearer-token wrapper called as the ASGI app it is."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from conftest import make_settings

from bot.mcp.run import McpMisconfigured, is_loopback, limit_in_flight, parse_first, require_token, security


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.10.0.3", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("10.0.0.7", False),
        ("::", False),
        ("mcp.example", False),
        ("localhost.example", False),
    ],
)
def test_which_binds_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_loopback_accepts_loopback_names_and_the_listed_extras() -> None:
    got = security(make_settings({"MCP_ALLOWED_HOSTS": "agent.lan:8765, ", "MCP_ALLOWED_ORIGINS": "http://ui.lan"}))
    assert got.enable_dns_rebinding_protection is True
    assert got.allowed_hosts == ["127.0.0.1:*", "localhost:*", "[::1]:*", "agent.lan:8765"]
    assert got.allowed_origins == ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", "http://ui.lan"]


def test_a_public_bind_accepts_exactly_what_is_listed() -> None:
    got = security(
        make_settings(
            {
                "MCP_HOST": "0.0.0.0",
                "MCP_TOKEN": "t0ken-value-0123456",
                "MCP_ALLOWED_HOSTS": "mcp.example:8765,10.0.0.7:8765",
                "MCP_ALLOWED_ORIGINS": "https://agent.example, ",
            }
        )
    )
    assert got.enable_dns_rebinding_protection is True
    assert got.allowed_hosts == ["mcp.example:8765", "10.0.0.7:8765"]
    assert got.allowed_origins == ["https://agent.example"]


def test_a_public_bind_with_a_short_token_is_refused() -> None:
    """The review's L12: a one-character bearer token on a public bind."""
    with pytest.raises(McpMisconfigured) as refused:
        security(make_settings({"MCP_HOST": "0.0.0.0", "MCP_TOKEN": "a", "MCP_ALLOWED_HOSTS": "mcp.example:8765"}))
    assert "shorter than 16 characters" in str(refused.value) and "'a'" not in str(refused.value)
    loopback = security(make_settings({"MCP_TOKEN": "a"}))  # on loopback the token is optional anyway
    assert loopback.allowed_hosts[0] == "127.0.0.1:*"


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"MCP_HOST": "0.0.0.0"}, "MCP_HOST=0.0.0.0 is not loopback: set MCP_TOKEN"),
        (
            {"MCP_HOST": "10.0.0.7", "MCP_TOKEN": "t0ken-value-0123456"},
            "MCP_HOST=10.0.0.7 is not loopback: set MCP_ALLOWED_HOSTS",
        ),
        (
            {"MCP_HOST": "10.0.0.7", "MCP_TOKEN": "t0ken-value-0123456", "MCP_ALLOWED_HOSTS": " , "},
            "set MCP_ALLOWED_HOSTS",
        ),
    ],
)
def test_a_public_bind_without_a_token_or_hosts_is_refused(values: dict[str, str], said: str) -> None:
    with pytest.raises(McpMisconfigured) as refused:
        security(make_settings(values))
    assert said in str(refused.value) and "t0ken-value-0123456" not in str(refused.value)


class Recorder:
    """An inner ASGI app that records the scope it was called with and what its ``receive`` returned."""

    def __init__(self) -> None:
        self.called: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.called.append(scope)
        self.received.append(await receive())
        await send({"type": "http.response.start", "status": 200, "headers": []})


async def call(app: Any, scope: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    await app(scope, receive, send)
    return sent


def http(authorization: bytes | None) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1:8765")]
    if authorization is not None:
        headers.append((b"authorization", authorization))
    return {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}


@pytest.mark.parametrize(
    "given",
    [
        None,
        b"",
        b"Bearer",
        b"Bearer t0ken-valu",
        b"Bearer t0ken-value-0123456 ",
        b"bearer t0ken-value-0123456",
        b"t0ken-value-0123456",
    ],
)
async def test_anything_but_the_exact_bearer_token_gets_401(given: bytes | None) -> None:
    inner = Recorder()
    sent = await call(require_token(inner, "t0ken-value-0123456"), http(given))
    assert inner.called == []
    assert sent == [
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
        },
        {"type": "http.response.body", "body": b'{"error": "missing or wrong bearer token (MCP_TOKEN)"}'},
    ]


async def test_the_exact_token_reaches_the_server_and_lifespan_is_not_guarded() -> None:
    inner = Recorder()
    guarded = require_token(inner, "t0ken-value-0123456")
    scope = http(b"Bearer t0ken-value-0123456")
    sent = await call(guarded, scope)
    assert sent == [{"type": "http.response.start", "status": 200, "headers": []}]
    assert inner.called == [scope] and inner.received == [{"type": "http.request", "body": b""}]
    await call(guarded, {"type": "lifespan"})
    assert inner.called[-1] == {"type": "lifespan"} and len(inner.received) == 2


class Holding:
    """An inner app that holds each request until ``release`` is set."""

    def __init__(self, expected: int) -> None:
        self.release = asyncio.Event()
        self.all_in = asyncio.Event()
        self.entered = 0
        self.expected = expected

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.entered += 1
        if self.entered >= self.expected:
            self.all_in.set()
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})


async def test_requests_past_the_in_flight_cap_get_503_at_once() -> None:
    """The review's M6: however many bodies clients send, at most ``limit`` are being handled."""
    inner = Holding(expected=2)
    limited = limit_in_flight(inner, 2)
    held = [asyncio.create_task(call(limited, http(None))) for _ in range(2)]
    await asyncio.wait_for(inner.all_in.wait(), timeout=5)
    refused = await asyncio.wait_for(call(limited, http(None)), timeout=5)
    assert refused == [
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [(b"content-type", b"application/json"), (b"retry-after", b"1")],
        },
        {"type": "http.response.body", "body": b'{"error": "too many requests in flight: retry shortly"}'},
    ]
    inner.release.set()
    assert [sent[0]["status"] for sent in await asyncio.gather(*held)] == [200, 200]
    assert inner.entered == 2  # the refused one never reached the app
    # The cap frees as requests finish, and what passes reaches the app whole (scope, receive, send).
    recorder = Recorder()
    passing = limit_in_flight(recorder, 1)
    scope = http(None)
    for _ in range(3):
        assert await call(passing, scope) == [{"type": "http.response.start", "status": 200, "headers": []}]
    assert recorder.called == [scope] * 3 and recorder.received == [{"type": "http.request", "body": b""}] * 3
    await call(passing, {"type": "lifespan"})  # lifespan passes, and is not counted
    assert recorder.called[-1] == {"type": "lifespan"} and len(recorder.received) == 4


async def test_match_log_answers_busy_when_the_matching_queue_is_full(library: Any) -> None:
    """The review's M2: match_log runs on the worker pools (never the event loop); past MATCH_QUEUE it says
    so at once instead of queueing without bound."""
    from conftest import NOW
    from mcp.server.fastmcp.exceptions import ToolError

    from bot.app.service import IncidentService
    from bot.app.workers import WorkerPools
    from bot.mcp.server import build_server
    from bot.ops.clock import fixed
    from bot.storage.memory import MemoryStorage

    pools = WorkerPools(match_workers=1, match_queue=0)
    server = build_server(IncidentService(library, MemoryStorage(), now=fixed(NOW)), pools=pools)
    assert server.settings.stateless_http  # no session is kept per client
    pools.in_flight = pools.limit  # every worker busy
    with pytest.raises(ToolError, match="busy"):
        await server._tool_manager.call_tool("match_log", {"text": "NVRM: Xid (PCI:0000:3b:00): 79"})
    pools.in_flight = 0
    answer = await server._tool_manager.call_tool(
        "match_log", {"text": "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."}
    )
    assert answer["matches"] and pools.in_flight == 0
    pools.shutdown()


def _post(body: bytes, chunks: int = 1) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    size = max(1, len(body) // chunks + 1)
    parts = [body[i : i + size] for i in range(0, len(body), size)] or [b""]
    messages = [{"type": "http.request", "body": p, "more_body": n < len(parts) - 1} for n, p in enumerate(parts)]
    return {"type": "http", "method": "POST", "path": "/mcp", "headers": []}, messages


async def _through(app: Any, scope: dict[str, Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    await app(scope, receive, send)
    return sent


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"tools/list"}', "ValueError"),
        (b"[" * 100_000 + b"]" * 100_000, "RecursionError"),
        (b"not json at all", "JSONDecodeError"),
    ],
    ids=["5000-digit-id", "deep-nesting", "not-json"],
)
async def test_a_body_the_parser_refuses_gets_a_json_rpc_parse_error(body: bytes, kind: str) -> None:
    """The review's L7: these reached the SDK, which answered 500 and logged a traceback each time."""
    inner = Recorder()
    scope, messages = _post(body, chunks=3)
    sent = await _through(parse_first(inner, 1 << 20), scope, messages)
    assert inner.called == [] and sent[0]["status"] == 400
    answer = json.loads(sent[1]["body"])
    assert answer == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": f"Parse error: {kind}"}}


async def test_a_good_body_reaches_the_server_whole_and_an_oversized_one_gets_413() -> None:
    inner = Recorder()
    body = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
    scope, messages = _post(body, chunks=4)
    sent = await _through(parse_first(inner, 1 << 20), scope, messages)
    assert sent[0]["status"] == 200 and inner.received == [{"type": "http.request", "body": body, "more_body": False}]
    big, parts = _post(b"x" * 2000, chunks=2)
    refused = await _through(parse_first(Recorder(), 1000), big, parts)
    assert refused[0]["status"] == 413
    get = {"type": "http", "method": "GET", "path": "/mcp", "headers": []}
    assert (await _through(parse_first(inner, 10), get, []))[0]["status"] == 200  # only POST bodies are parsed


async def test_a_lone_surrogate_in_a_tool_argument_is_text_not_an_error(library: Any) -> None:
    """The review's L7: `search_incidents` with "\\ud800" answered with the encoder's error."""
    from conftest import NOW

    from bot.app.service import IncidentService
    from bot.mcp.server import build_server
    from bot.ops.clock import fixed
    from bot.storage.memory import MemoryStorage

    server = build_server(IncidentService(library, MemoryStorage(), now=fixed(NOW)))
    found = await server.call_tool("search_incidents", {"query": "\x00\ud800x ecc"})
    assert "surrogates" not in json.dumps(found, default=str) and "IL-0414" in json.dumps(found, default=str)
