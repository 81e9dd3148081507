"""The ``incident-bot stats`` report: helpful and not-helpful votes per case, and the cases most often
rejected ("Not this case"), so case authors know which signatures to fix. Pure: a summary in, text out."""

from __future__ import annotations

import json
from collections.abc import Sequence

from bot.model.results import ExampleRecord
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


def _rejected(examples: Sequence[ExampleRecord], top: int) -> list[ExampleRecord]:
    """The rejected lines, each once (a line is stored once per person who confirmed it)."""
    once = {(e.case_id, e.line): e for e in examples if e.rejections}
    return sorted(once.values(), key=lambda e: (-e.rejections, e.case_id, e.line))[:top]


def render_examples(examples: Sequence[ExampleRecord], top: int = 10) -> str:
    """Confirmed examples per case (lines and people), and the ``top`` example lines that keep getting
    "Not this case" (they may teach the matcher the wrong thing: delete or dispute them)."""
    if not examples:
        return "Confirmed examples: none yet."
    per_case: dict[str, tuple[int, set[str]]] = {}
    for e in examples:
        count, people = per_case.get(e.case_id, (0, set()))
        per_case[e.case_id] = (count + 1, people | {e.user_id})
    lines = [f"Confirmed examples: {len(examples)} line(s) for {len(per_case)} case(s)", ""]
    lines += [f"{'case':<12} {'lines':>5} {'people':>6}"]
    for case_id, (count, people) in sorted(per_case.items()):
        lines.append(f"{case_id:<12} {count:>5} {len(people):>6}")
    rejected = _rejected(examples, top)
    lines += ["", "Examples that keep getting Not this case (incident-bot examples delete ID removes one)"]
    lines += [f"  #{e.id} {e.case_id:<12} ×{e.rejections}  {e.line[:100]}" for e in rejected] or ["  (none)"]
    return "\n".join(lines)


def stats_json(summary: FeedbackSummary, top: int = 10, examples: Sequence[ExampleRecord] = ()) -> str:
    """The same as JSON: ``cases`` (by case id), ``most_rejected`` (case ids, worst first), and the example
    lines most often rejected."""
    return json.dumps(
        {
            "helpful": summary.helpful,
            "not_helpful": summary.not_helpful,
            "cases": [
                {"case_id": v.case_id, "title": v.title, "helpful": v.helpful, "not_helpful": v.not_helpful}
                for v in summary.cases
            ],
            "most_rejected": [v.case_id for v in summary.most_rejected(top)],
            "examples": len(examples),
            "rejected_examples": [
                {"case_id": e.case_id, "line": e.line, "rejections": e.rejections} for e in _rejected(examples, top)
            ],
        },
        ensure_ascii=False,
    )
