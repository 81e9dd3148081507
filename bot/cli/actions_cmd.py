"""``incident-bot actions [--days N] [--json]``: what operators did to nodes from Slack (drains, resumes,
requests waiting for a second operator), newest first: the audit trail of ``bot.app.drains``."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from bot.cli.compose import build_service, load_settings


def cmd_actions(args: argparse.Namespace) -> int:
    overrides: dict[str, Any] = {"CASES_DIR": args.cases} if getattr(args, "cases", None) else {}
    service = build_service(load_settings(overrides), examples_now=False)
    try:
        found = service.storage.list_actions(service.now() - timedelta(days=args.days or 90))
    finally:
        service.storage.close()
    if args.json:
        rows = []
        for action in found:
            row = asdict(action)
            row["created_at"] = action.created_at.isoformat()
            row["decided_at"] = action.decided_at.isoformat() if action.decided_at else None
            rows.append(row)
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    if not found:
        print("No action on a node was taken from Slack in that time.")
    for action in found:
        who = action.user_id + (f" (approved by {action.approved_by})" if action.approved_by else "")
        print(f"{action.created_at:%Y-%m-%d %H:%M} UTC  {action.kind} {action.node}  {action.status}  by {who}")
        print(f"    reason: {action.reason}  ran: {action.command}  scheduler: {action.answer}")
    return 0
