"""``incident-bot sync``: bring the case directory up to date with the incident library's API.

Exit status: 0 when every listed case was added, updated or unchanged; 1 when a case was rejected or
could not be fetched, or the API failed; 2 for a usage problem (no API URL, a bad ``--since``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bot.library.client import LibraryClient
from bot.library.sync import STATE_FILE, sync_library, terminal_progress
from bot.model.case import parse_timestamp
from bot.ops.settings import Settings


def cmd_sync(args: argparse.Namespace) -> int:
    """Run one sync as the command line asked, print the summary; returns the exit status."""
    overrides: dict[str, Any] = {"CASES_DIR": args.cases} if getattr(args, "cases", None) else {}
    settings = Settings(**overrides)
    api_url = args.api_url or getattr(settings, "library_api_url", None)
    if not api_url:
        print("incident-bot: sync needs --api-url or the LIBRARY_API_URL setting", file=sys.stderr)
        return 2
    if args.since and parse_timestamp(args.since) is None:
        print(f"incident-bot: --since {args.since!r} is not an ISO date or datetime", file=sys.stderr)
        return 2
    try:
        client = LibraryClient(str(api_url), timeout=args.timeout, retries=args.retries)
    except ValueError as exc:
        print(f"incident-bot: {exc}", file=sys.stderr)
        return 2
    with client:
        report = sync_library(
            client,
            Path(settings.cases_dir),
            since=args.since,
            dry_run=args.dry_run,
            state_path=Path(settings.data_dir) / STATE_FILE,
            progress=terminal_progress(sys.stderr),
        )
    print(report.summary())
    return 0 if report.ok else 1
