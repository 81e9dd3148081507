"""``incident-bot stats``: the feedback report from the bot's database."""

from __future__ import annotations

import argparse
from typing import Any

from bot.app.feedback import FeedbackService
from bot.cli.compose import build_service, load_settings
from bot.replies.stats import render_stats, stats_json


def add_stats_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``stats`` subcommand to ``subparsers`` (what ``add_subparsers()`` returned)."""
    stats = subparsers.add_parser(
        "stats",
        help="helpful / not-helpful votes per case and the cases most often rejected",
        description="Votes from the Helpful and Not this case buttons, per case, and the cases most often "
        "rejected, from the bot's database (DATABASE_URL, else the SQLite file in DATA_DIR).",
    )
    stats.add_argument("--top", type=int, default=10, help="how many most-rejected cases to list (default 10)")
    stats.add_argument("--json", action="store_true", help="print JSON instead of the table")
    stats.set_defaults(func=cmd_stats)
    return stats  # type: ignore[no-any-return]


def cmd_stats(args: argparse.Namespace) -> int:
    """Print the report; exit status 0."""
    overrides: dict[str, Any] = {"CASES_DIR": args.cases} if getattr(args, "cases", None) else {}
    service = build_service(load_settings(overrides))
    try:
        summary = FeedbackService(service).stats()
    finally:
        service.storage.close()
    print(stats_json(summary, args.top) if args.json else render_stats(summary, args.top))
    return 0
