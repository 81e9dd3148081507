"""Results as plain JSON-able records: what ``incident-bot match --json`` prints and the MCP server
returns (one function, so they agree)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.model.case import Case
from bot.model.results import MatchResult
from bot.replies.first import fill_command


def runbook_record(case: Case, fills: Mapping[str, str]) -> list[dict[str, Any]]:
    """The case's runbook with its commands filled from ``fills`` (safe characters only, shell-quoted)."""
    steps = []
    for step in case.runbook:
        entry: dict[str, Any] = {"stage": step.stage, "text": step.text.model_dump(mode="json")}
        if step.command:
            entry["command"] = fill_command(step.command, dict(fills))
        if step.assumes is not None:
            entry["assumes"] = step.assumes.model_dump(mode="json")
        steps.append(entry)
    return steps


def match_record(result: MatchResult, cases: Mapping[str, Case]) -> dict[str, Any]:
    """Ranked cases with tiers and evidence (in words), the suspects, the best case's runbook filled, and
    what was cut from the paste. No timings: the same input gives the same record."""
    fills = result.suspects.fills if result.suspects is not None else {}
    best = result.best
    case = cases.get(best.case_id) if best is not None else None
    return {
        "reply": result.reply,
        "reply_case_ids": result.reply_case_ids,
        "matches": [m.model_dump(mode="json", exclude={"title"}) for m in result.matches],
        "suspects": result.suspects.model_dump(mode="json") if result.suspects else None,
        "runbook": runbook_record(case, fills) if case is not None else [],
        "truncated": result.truncated,
        "skipped_bytes": result.skipped_bytes,
        "skipped_lines": result.skipped_lines,
        "long_lines": result.long_lines,
        "timed_out": result.timed_out,
    }
