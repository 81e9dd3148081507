"""``incident-bot mcp [--http]``: the library and the matcher as an MCP server (``bot.mcp``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.cli.compose import build_reader, load_settings


def cmd_mcp(args: argparse.Namespace) -> int:
    # Here, not at the top: the MCP SDK and uvicorn load only for this command.
    from bot.mcp.run import McpMisconfigured, require_token, security
    from bot.mcp.server import build_server

    overrides: dict[str, Any] = {"CASES_DIR": args.cases} if getattr(args, "cases", None) else {}
    settings = load_settings(overrides)
    try:
        checks = security(settings) if args.http else None
    except McpMisconfigured as exc:
        print(f"incident-bot: {exc}", file=sys.stderr)
        return 2
    # Read-only: storage is opened for stored reviews, never migrated or written.
    service = build_reader(settings)
    server = build_server(service, checks)
    if not args.http:
        server.run("stdio")
        return 0
    import uvicorn

    app: Any = server.streamable_http_app()
    if settings.mcp_token is not None:
        app = require_token(app, settings.mcp_token.get_secret_value())
    print(f"incident-bot MCP server on http://{settings.mcp_host}:{settings.mcp_port}/mcp", file=sys.stderr, flush=True)
    uvicorn.run(app, host=settings.mcp_host, port=settings.mcp_port, log_level="warning")
    return 0
