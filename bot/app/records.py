"""Results as plain JSON-able records: what ``incident-bot match --json`` prints and the MCP server
returns (one function, so they agree)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from bot.model.case import Case, Lang
from bot.model.results import Evidence, Match, MatchResult
from bot.replies.first import fill_command


def case_summary_record(case: Case, lang: Lang | Literal["both"] = "both") -> dict[str, Any]:
    """One case as a search or list shows it (``incident-bot search --json``, the MCP server)."""
    title = case.title.model_dump(mode="json") if lang == "both" else (case.title.get(lang) or "")
    return {
        "id": case.id,
        "title": title,
        "failure_class": case.failure_class,
        "date": case.date,
        "reviewed_at": case.review.reviewed_at,
        "components": list(case.components),
    }


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


_IN_WORDS = {
    "signature": "one of the case's known error messages",
    "text": "words of the case's write-up",
    "example": "a line people confirmed for this case",
}


def evidence_record(evidence: Evidence) -> dict[str, Any]:
    """A matched line and what it matched, in words: never the pattern (a regular expression reads as noise
    and would teach a caller to paste around it)."""
    record = evidence.model_dump(mode="json", exclude={"matched", "note"})
    record["why"] = evidence.note or _IN_WORDS[evidence.kind]
    return record


def _match(match: Match) -> dict[str, Any]:
    record = match.model_dump(mode="json", exclude={"title", "evidence"})
    record["evidence"] = [evidence_record(e) for e in match.evidence]
    return record


def match_record(result: MatchResult, cases: Mapping[str, Case]) -> dict[str, Any]:
    """Ranked cases with tiers and evidence (in words), the suspects, the best case's runbook filled, and
    what was cut from the paste. No timings: the same input gives the same record."""
    fills = result.suspects.fills if result.suspects is not None else {}
    best = result.best
    case = cases.get(best.case_id) if best is not None else None
    return {
        "reply": result.reply,
        "reply_case_ids": result.reply_case_ids,
        "matches": [_match(m) for m in result.matches],
        "suspects": result.suspects.model_dump(mode="json") if result.suspects else None,
        "runbook": runbook_record(case, fills) if case is not None else [],
        "truncated": result.truncated,
        "skipped_bytes": result.skipped_bytes,
        "skipped_lines": result.skipped_lines,
        "long_lines": result.long_lines,
        "timed_out": result.timed_out,
    }
