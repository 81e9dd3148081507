"""``incident-bot mcp [--http]``: the library and the matcher as an MCP server (``bot.mcp``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any, cast

from bot.cli.compose import build_reader, load_settings


def cmd_mcp(args: argparse.Namespace) -> int:
    # Here, not at the top: the MCP SDK and uvicorn load only for this command.
    from bot.mcp.connections import guarded_h11
    from bot.mcp.run import (
        MAX_CONNECTIONS,
        MAX_IN_FLIGHT,
        McpMisconfigured,
        limit_in_flight,
        parse_first,
        require_token,
        security,
    )
    from bot.mcp.server import MAX_REQUEST_BYTES, build_server

    overrides: dict[str, Any] = {"CASES_DIR": args.cases} if getattr(args, "cases", None) else {}
    settings = load_settings(overrides)
    try:
        checks = security(settings) if args.http else None
    except McpMisconfigured as exc:
        print(f"incident-bot: {exc}", file=sys.stderr)
        return 2
    # Read-only: storage is opened for stored reviews, never migrated or written.
    service = build_reader(settings)
    from bot.app.workers import WorkerPools

    pools = WorkerPools(match_workers=settings.match_workers, match_queue=settings.match_queue)
    server = build_server(service, checks, pools)
    if not args.http:
        server.run("stdio")
        return 0
    import uvicorn

    app: Any = limit_in_flight(parse_first(server.streamable_http_app(), MAX_REQUEST_BYTES), MAX_IN_FLIGHT)
    if settings.mcp_token is not None:
        app = require_token(app, settings.mcp_token.get_secret_value())
    print(f"incident-bot MCP server on http://{settings.mcp_host}:{settings.mcp_port}/mcp", file=sys.stderr, flush=True)
    # Slow clients: headers are due within 10 s and bodies within 10 s, idle keep-alive connections close
    # after 5 s, at most MAX_CONNECTIONS are open (bot.mcp.connections); past as many tasks uvicorn
    # answers 503.
    protocol, _ = guarded_h11(MAX_CONNECTIONS)
    uvicorn.run(
        app,
        host=settings.mcp_host,
        port=settings.mcp_port,
        log_level="warning",
        http=cast(Any, protocol),
        timeout_keep_alive=5,
        limit_concurrency=MAX_CONNECTIONS + 1,  # the guard caps connections; this bounds tasks
    )
    return 0
