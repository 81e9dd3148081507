"""``incident-bot nodes [--days N] [--json]``: hosts that failed more than once, newest first."""

from __future__ import annotations

import argparse
import json
from typing import Any

from bot.cli.compose import build_service, load_settings
from bot.replies.nodes import host_lines, thread_link


def cmd_nodes(args: argparse.Namespace) -> int:
    overrides: dict[str, Any] = {"CASES_DIR": args.cases} if getattr(args, "cases", None) else {}
    service = build_service(load_settings(overrides))
    try:
        repeated = service.nodes.repeated(args.days)
    finally:
        service.storage.close()
    if args.json:
        hosts = [
            {
                "host": host,
                "failures": len(events),
                "cases": list(dict.fromkeys(e.case_id for e in events)),
                "events": [
                    {
                        "case_id": e.case_id,
                        "failure_class": e.failure_class,
                        "at": e.created_at.isoformat(),
                        "channel": e.channel,
                        "link": thread_link(e),
                        "pci": e.pci or None,
                        "gpu": e.gpu or None,
                    }
                    for e in events
                ],
            }
            for host, events in repeated
        ]
        print(json.dumps(hosts, ensure_ascii=False))
        return 0
    days = args.days or service.nodes.window.days
    if not repeated:
        print(f"No node failed more than once in the last {days} days.")
    for _, plain in host_lines(repeated, "en", limit=100):
        print(plain)
    return 0
