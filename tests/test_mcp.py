"""The MCP server, started as a subprocess (``python -m bot.cli mcp``) and driven with the official SDK's
client over stdio and over Streamable HTTP: every tool, the case resource template, a bad id, an oversized
log, the token on a non-loopback bind, DNS-rebinding protection; ``match_log`` agrees with the CLI."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

from bot.ops.version import bot_version

ROOT = Path(__file__).resolve().parent.parent
PASTES = sorted((ROOT / "tests" / "fixtures" / "pastes").glob("*.txt"))
TOOLS = {
    "search_incidents",
    "get_incident",
    "list_incidents",
    "get_topic",
    "vocab",
    "match_log",
    "similar_incidents",
}
START_DEADLINE = 60.0


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "MCP_", "DATABASE_URL"))}
    env.update({"DATA_DIR": str(tmp_path / "data"), "CASES_DIR": str(ROOT / "cases"), **extra})
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _payload(result: Any) -> Any:
    """A tool result's structured content (the SDK wraps non-object results in {"result": ...})."""
    data = result.structuredContent
    if isinstance(data, dict) and set(data) == {"result"}:
        return data["result"]
    return data


async def exercise(session: ClientSession) -> None:
    """Every tool and the resource template, and the errors agents will make."""
    hello = await session.initialize()
    assert hello.serverInfo.name == "incident-bot" and hello.serverInfo.version == bot_version() != "1.30.0"
    listed = await session.list_tools()
    assert {tool.name for tool in listed.tools} == TOOLS
    assert all(tool.annotations is not None and tool.annotations.readOnlyHint for tool in listed.tools)
    found = _payload(await session.call_tool("search_incidents", {"query": "hang", "filters": {"component": "nccl"}}))
    assert found and all(isinstance(item["id"], str) for item in found)
    case = _payload(await session.call_tool("get_incident", {"id": "il-427", "lang": "ko"}))
    assert case["id"] == "IL-0427" and "tr1-13B" in case["title"] and "review_notes" not in case
    page = _payload(await session.call_tool("list_incidents", {"filters": {"topic": "nccl"}, "limit": 5}))
    assert len(page["items"]) == 5 and page["next_cursor"] == "5" and page["total"] > 5
    for cursor, said in (("²", "cursor is the next_cursor"), ("9" * 5000, "cursor is longer than 1000")):
        odd = await session.call_tool("list_incidents", {"cursor": cursor})
        assert odd.isError and said in odd.content[0].text  # type: ignore[union-attr]
    more = _payload(await session.call_tool("list_incidents", {"filters": {"topic": "nccl"}, "cursor": "5"}))
    assert not {i["id"] for i in more["items"]} & {i["id"] for i in page["items"]}
    # Paged to the end: every case once, and the last page points nowhere.
    seen, cursor, pages = [], None, 0
    while pages < 50:
        args: dict[str, Any] = {"filters": {"topic": "nccl"}, "limit": 5, **({"cursor": cursor} if cursor else {})}
        step = _payload(await session.call_tool("list_incidents", args))
        seen += [i["id"] for i in step["items"]]
        cursor, pages = step["next_cursor"], pages + 1
        if cursor is None:
            break
    assert cursor is None and len(seen) == len(set(seen)) == page["total"]
    topic = _payload(await session.call_tool("get_topic", {"name": "ecc"}))
    assert {"IL-0414", "IL-0427"} <= {c["id"] for c in topic["cases"]}
    vocabulary = _payload(await session.call_tool("vocab", {}))
    assert any(t["name"] == "gpu-memory" and "hbm3" in t["aliases"] for t in vocabulary["component"])
    ecc = (ROOT / "tests" / "fixtures" / "pastes" / "hw-ecc-pytorch-three-lines.txt").read_text()
    matched = _payload(await session.call_tool("match_log", {"text": ecc}))
    assert matched["matches"][0]["case_id"] in {"IL-0427", "IL-0414"} and matched["runbook"]
    for evidence in (e for m in matched["matches"] for e in m["evidence"]):  # in words, never a pattern
        assert "matched" not in evidence and evidence["why"] and "\\" not in evidence["why"], evidence
    similar = _payload(await session.call_tool("similar_incidents", {"id": "IL-0427"}))
    assert similar and all(item["id"] != "IL-0427" for item in similar)
    markdown = await session.read_resource("case://IL-0427.md")  # type: ignore[arg-type]
    assert markdown.contents[0].text.startswith("# IL-0427")  # type: ignore[union-attr]
    assert markdown.contents[0].mimeType == "text/markdown"
    as_json = await session.read_resource("case://IL-0427")  # type: ignore[arg-type]
    assert json.loads(as_json.contents[0].text)["id"] == "IL-0427"  # type: ignore[union-attr]
    assert as_json.contents[0].mimeType == "application/json"
    with pytest.raises(McpError) as missing:
        await session.read_resource("case://IL-9999")  # type: ignore[arg-type]
    assert missing.value.error.message == "no case 'IL-9999' in the library"
    # Mistakes: a clear tool error, never a traceback.
    bad = await session.call_tool("get_incident", {"id": "IL-9999"})
    assert bad.isError and "no case 'IL-9999'" in bad.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in bad.content[0].text  # type: ignore[union-attr]
    wrong = await session.call_tool("search_incidents", {"query": "x", "filters": {"colour": "red"}})
    assert wrong.isError and "filter keys are" in wrong.content[0].text  # type: ignore[union-attr]
    for tool, args, said in (
        ("search_incidents", {"query": "x", "limit": "abc"}, "search_incidents: limit: Input should be a valid"),
        ("get_incident", {"id": "IL-0427", "lang": "fr"}, "get_incident: lang: Input should be 'en', 'ko'"),
    ):
        typed = await session.call_tool(tool, args)
        text = typed.content[0].text  # type: ignore[union-attr]
        assert typed.isError and text.startswith(said) and "\n" not in text and "pydantic" not in text, text
    # An oversized log is read by its head and tail, and the result says so.
    big = "INFO step ok\n" * 300_000 + ecc
    cut = _payload(await session.call_tool("match_log", {"text": big}))
    assert cut["truncated"] and cut["skipped_bytes"] > 0 and cut["matches"][0]["case_id"] in {"IL-0427", "IL-0414"}


async def test_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "bot.cli", "mcp"], env=_env(tmp_path))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await exercise(session)


def test_stdio_ends_cleanly_when_the_client_hangs_up(tmp_path: Path) -> None:
    """The client closes stdin: the server exits 0, with no traceback on stderr."""
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "mcp"],
        input="".join(json.dumps(m) + "\n" for m in (hello, ready)),
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    [answer] = [json.loads(line) for line in done.stdout.splitlines()]
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "incident-bot"


def test_match_log_agrees_with_the_cli(tmp_path: Path) -> None:
    import asyncio

    async def over_mcp() -> list[dict[str, Any]]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "bot.cli", "mcp"], env=_env(tmp_path))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            out = []
            for paste in PASTES:
                text = paste.read_text(encoding="utf-8", errors="replace")
                out.append(_payload(await session.call_tool("match_log", {"text": text})))
            return out

    records = asyncio.run(over_mcp())
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "match", "--json", *map(str, PASTES)],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
        check=True,
    )
    cli = [json.loads(line) for line in done.stdout.splitlines()]
    for record, line in zip(records, cli, strict=True):
        line.pop("file")
        line.pop("elapsed_ms")
        assert record == line


def _start(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``incident-bot mcp --http`` in the background, its output in ``log``."""
    with log.open("wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "mcp", "--http"], env=env, stdout=sink, stderr=subprocess.STDOUT
        )


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = _free_port()
    log = tmp_path / "mcp.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "mcp", "--http"],
            env=_env(tmp_path, MCP_PORT=str(port)),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_listening(port, proc, log)
        yield f"http://127.0.0.1:{port}/mcp", log
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_DEADLINE
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"the MCP server did not listen within {START_DEADLINE} s: {log.read_text()}")


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    async with (
        httpx.AsyncClient(headers=headers or {}, timeout=httpx.Timeout(30, read=300)) as client,
        streamable_http_client(url, http_client=client) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        yield session


async def test_streamable_http_on_loopback(http_server: tuple[str, Path]) -> None:
    url, _ = http_server
    async with http_session(url) as session:
        await exercise(session)
    # DNS rebinding: a page on another name that resolves here is refused by Host (421) and by Origin (403),
    # with the headers a real client sends (without them the SDK answers 406 whatever the check says).
    async with httpx.AsyncClient() as client:
        host, origin = await _forged(client, url, {})
    assert (host.status_code, origin.status_code) == (421, 403)


async def _forged(
    client: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> tuple[httpx.Response, httpx.Response]:
    """An initialize request under a forged Host, and one with a forged Origin."""
    sent = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", **headers}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }
    host = await client.post(url, headers={**sent, "Host": "evil.example"}, json=body)
    origin = await client.post(url, headers={**sent, "Origin": "http://evil.example"}, json=body)
    return host, origin


def test_a_public_bind_needs_a_token_and_hosts(tmp_path: Path) -> None:
    for extra, said in [
        ({"MCP_HOST": "0.0.0.0"}, "set MCP_TOKEN"),
        ({"MCP_HOST": "0.0.0.0", "MCP_TOKEN": "s3cret-token-0123456"}, "set MCP_ALLOWED_HOSTS"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "bot.cli", "mcp", "--http"],
            capture_output=True,
            text=True,
            env=_env(tmp_path, **extra),
            timeout=60,
            check=False,
        )
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr
        assert "s3cret-token-0123456" not in done.stderr


async def test_the_token_is_required_on_a_public_bind(tmp_path: Path) -> None:
    port = _free_port()
    env = _env(
        tmp_path,
        MCP_HOST="0.0.0.0",
        MCP_PORT=str(port),
        MCP_TOKEN="s3cret-token-0123456",
        MCP_ALLOWED_HOSTS=f"127.0.0.1:{port}",
    )
    log = tmp_path / "mcp.log"
    proc = _start(env, log)
    try:
        _wait_listening(port, proc, log)
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx.AsyncClient() as client:
            missing = await client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            wrong = await client.post(url, json={}, headers={"Authorization": "Bearer s3cret-tokem"})
        assert missing.status_code == 401 and wrong.status_code == 401
        # The token is not enough: a public bind checks Host and Origin as well.
        async with httpx.AsyncClient() as client:
            host, origin = await _forged(client, url, {"Authorization": "Bearer s3cret-token-0123456"})
        assert (host.status_code, origin.status_code) == (421, 403)
        async with http_session(url, {"Authorization": "Bearer s3cret-token-0123456"}) as session:
            await session.initialize()
            tools = await session.list_tools()
            assert {tool.name for tool in tools.tools} == TOOLS
        assert "s3cret-token-0123456" not in log.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=15)
