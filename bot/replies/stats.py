"""The ``incident-bot stats`` report: helpful and not-helpful votes per case, and the cases most often
rejected ("Not this case"), so case authors know which signatures to fix. Pure: a summary in, text out."""

from __future__ import annotations

import json

from bot.replies.home import CaseVotes, FeedbackSummary

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
