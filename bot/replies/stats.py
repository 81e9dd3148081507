"""``incident-bot stats``: helpful and not-helpful votes per case, and the cases most often rejected
("Not this case"), so case authors know which signatures to fix.

``render_stats`` is pure (a summary in, text out); ``cmd_stats`` reads the votes through the service.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from bot.replies.buttons import CaseVotes, FeedbackSummary

_TITLE_CHARS = 60


def _title(votes: CaseVotes) -> str:
    title = " ".join(votes.title.split()) or "(not in the library)"
    return title if len(title) <= _TITLE_CHARS else title[: _TITLE_CHARS - 1] + "…"


def _share(part: int, total: int) -> str:
    return f"{round(100 * part / total)}%" if total else "-"


def render_stats(summary: FeedbackSummary, top: int = 10) -> str:
    """A plain-text report: totals, a table of every voted case (most votes first, then id), and the
    ``top`` cases most often rejected."""
    total = summary.helpful + summary.not_helpful
    if not total:
        return "No feedback yet: nobody has clicked Helpful or Not this case."
    lines = [
        f"Feedback: {total} votes, {summary.helpful} helpful, {summary.not_helpful} not helpful "
        f"({_share(summary.helpful, total)} helpful)",
        "",
        f"{'case':<12} {'helpful':>7} {'not':>5} {'helpful%':>8}  title",
    ]
    for votes in sorted(summary.cases, key=lambda v: (-v.total, v.case_id)):
        lines.append(
            f"{votes.case_id:<12} {votes.helpful:>7} {votes.not_helpful:>5} "
            f"{_share(votes.helpful, votes.total):>8}  {_title(votes)}"
        )
    rejected = summary.most_rejected(top)
    lines += ["", "Most often rejected (Not this case): check these signatures"]
    if not rejected:
        lines.append("  (none)")
    for rank, votes in enumerate(rejected, 1):
        lines.append(
            f"{rank:>3}. {votes.case_id:<12} {votes.not_helpful} of {votes.total} votes "
            f"({_share(votes.not_helpful, votes.total)}) rejected  {_title(votes)}"
        )
    return "\n".join(lines)


def stats_json(summary: FeedbackSummary, top: int = 10) -> str:
    """The same as JSON: ``cases`` (by case id) and ``most_rejected`` (case ids, worst first)."""
    return json.dumps(
        {
            "helpful": summary.helpful,
            "not_helpful": summary.not_helpful,
            "cases": [
                {"case_id": v.case_id, "title": v.title, "helpful": v.helpful, "not_helpful": v.not_helpful}
                for v in summary.cases
            ],
            "most_rejected": [v.case_id for v in summary.most_rejected(top)],
        },
        ensure_ascii=False,
    )


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
    from bot.cli.main import build_service, load_settings  # the composition root builds storage and library

    overrides: dict[str, Any] = {"CASES_DIR": args.cases} if getattr(args, "cases", None) else {}
    service = build_service(load_settings(overrides))
    try:
        summary = service.stats()
    finally:
        service.storage.close()
    print(stats_json(summary, args.top) if args.json else render_stats(summary, args.top))
    return 0
