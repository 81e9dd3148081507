"""``incident-bot stats``: the feedback report from the bot's database."""

from __future__ import annotations

import argparse
from typing import Any

from bot.app.feedback import FeedbackService
from bot.cli.compose import build_service, load_settings
from bot.replies.stats import render_examples, render_stats, stats_json


def cmd_stats(args: argparse.Namespace) -> int:
    """Print the report; exit status 0."""
    overrides: dict[str, Any] = {"CASES_DIR": args.cases} if getattr(args, "cases", None) else {}
    service = build_service(load_settings(overrides))
    try:
        summary = FeedbackService(service).stats()
        examples = service.examples.stored()
    finally:
        service.storage.close()
    if args.json:
        print(stats_json(summary, args.top, examples))
    else:
        print(render_stats(summary, args.top) + "\n\n" + render_examples(examples, args.top))
    return 0
