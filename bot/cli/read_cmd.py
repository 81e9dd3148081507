"""``incident-bot search WORDS`` and ``incident-bot cases list``: what ``/incident search`` and ``/incident``
show in Slack, from the same service calls, as text or JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any

from bot.app.records import case_summary_record
from bot.app.service import IncidentService
from bot.cli.compose import build_reader, load_settings
from bot.cli.errors import UsageProblem
from bot.model.case import Case


def _print_cases(cases: list[Case], as_json: bool, empty: str) -> None:
    if as_json:
        print(json.dumps([case_summary_record(c) for c in cases], ensure_ascii=False))
        return
    if not cases:
        print(empty)
    for case in cases:
        title = case.title.get("en") or case.title.get("ko") or ""
        reviewed = f"reviewed {case.review.reviewed_at[:10]}" if case.review.reviewed_at else "not reviewed"
        print(f"{case.id:<10} {case.date or '':<10} {case.failure_class:<22} {reviewed:<19} {title}")


def _service(args: argparse.Namespace) -> IncidentService:
    overrides: dict[str, Any] = {"CASES_DIR": args.cases} if getattr(args, "cases", None) else {}
    return build_reader(load_settings(overrides))


def cmd_search(args: argparse.Namespace) -> int:
    words = " ".join(args.words).strip()
    if not words:
        raise UsageProblem("search needs words, e.g. incident-bot search nccl timeout")
    outcome = _service(args).search(words)
    if outcome.unknown is not None:
        raise UsageProblem(
            f"no topic {outcome.unknown[:60]!r} (closest: {outcome.closest or '-'}; incident-bot topics)"
        )
    _print_cases(outcome.found, args.json, f"No case matches {words[:80]!r}.")
    return 0 if outcome.found else 1


def cmd_cases_list(args: argparse.Namespace) -> int:
    service = _service(args)
    _print_cases(service.recent_cases(limit=len(service.library)), args.json, "The library holds no case.")
    return 0
