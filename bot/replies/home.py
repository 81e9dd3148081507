"""Pure: the App Home view and the summary of helpful / not-helpful votes behind it and ``stats``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.model.case import Case, Lang
from bot.model.results import ReviewRecord
from bot.replies.blocks import HOME_BLOCKS, case_title, context, cut, header, section
from bot.replies.buttons import text
from bot.replies.mrkdwn import escape_mrkdwn, link
from bot.replies.nodes import words as node_words

HOME_LIST = 10  # cases per list on the Home tab


@dataclass(frozen=True)
class CaseVotes:
    case_id: str
    title: str  # "" when the case is no longer in the library
    helpful: int
    not_helpful: int

    @property
    def total(self) -> int:
        return self.helpful + self.not_helpful


@dataclass(frozen=True)
class FeedbackSummary:
    """Votes per case (sorted by case id) and their totals."""

    cases: tuple[CaseVotes, ...] = ()

    @property
    def helpful(self) -> int:
        return sum(c.helpful for c in self.cases)

    @property
    def not_helpful(self) -> int:
        return sum(c.not_helpful for c in self.cases)

    def most_rejected(self, limit: int = 10) -> list[CaseVotes]:
        """Cases with at least one "not this case", most such votes first, then the larger share of
        rejections, then case id."""
        rejected = [c for c in self.cases if c.not_helpful > 0]
        rejected.sort(key=lambda c: (-c.not_helpful, -c.not_helpful / c.total, c.case_id))
        return rejected[:limit]


def _home_line(case: Case, lang: Lang, suffix: str) -> str:
    title = escape_mrkdwn(cut(" ".join(case_title(case, lang).split()), 120))
    url = case.link()
    name = link(url, case.id) if url else f"*{escape_mrkdwn(case.id)}*"
    return f"• {name} — {title}{suffix}"


def _when(case: Case, reviewed: ReviewRecord | None, lang: Lang) -> str:
    """When (and by whom) the case was reviewed: the newest stored review, else the file's date."""
    if reviewed is not None and (case.review.reviewed_at or "") <= reviewed.reviewed_at.isoformat():
        said = text("reviewed", lang).format(who=reviewed.reviewer, when=f"{reviewed.reviewed_at:%Y-%m-%d}")
        return f" ({escape_mrkdwn(cut(said, 80))})"
    when = case.review.reviewed_at or case.date
    return f" ({escape_mrkdwn(cut(when, 40))})" if when else ""


def _list_section(lines: Sequence[str], total: int, lang: Lang) -> dict[str, Any]:
    if not lines:
        return section(escape_mrkdwn(text("home.empty", lang)))
    body = "\n".join(lines)
    if total > len(lines):
        body += "\n" + escape_mrkdwn(text("home.more", lang, n=total - len(lines)))
    return section(body)


def build_home_view(
    recent_cases: Sequence[Case],
    most_matched: Sequence[tuple[Case, int]],
    feedback_summary: FeedbackSummary,
    langs: Sequence[Lang],
    reviews: Mapping[str, ReviewRecord] | None = None,
    nodes: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """The Home tab (``views.publish``): recently reviewed cases, the cases matched most in the last 30
    days, and how often answers were judged helpful. At most :data:`HOME_LIST` cases per list, each
    line cut, every text escaped and within Block Kit's limits, and never more than 100 blocks, however
    long the inputs are."""
    lang = langs[0]
    blocks: list[dict[str, Any]] = [
        header(text("home.title", lang)),
        context(escape_mrkdwn(text("home.intro", lang))),
        header(text("home.recent", lang)),
    ]
    stored = reviews or {}
    recent = [_home_line(c, lang, _when(c, stored.get(c.id), lang)) for c in recent_cases[:HOME_LIST]]
    blocks.append(_list_section(recent, len(recent_cases), lang))
    blocks += [{"type": "divider"}, header(text("home.matched", lang))]
    matched = [
        _home_line(case, lang, " · " + escape_mrkdwn(text("home.times", lang, n=count)))
        for case, count in most_matched[:HOME_LIST]
    ]
    blocks.append(_list_section(matched, len(most_matched), lang))
    if nodes:
        blocks += [{"type": "divider"}, header(node_words("heading", lang))]
        blocks.append(section("\n".join(md for md, _ in nodes[:HOME_LIST])))
    blocks += [{"type": "divider"}, header(text("home.feedback", lang))]
    total = feedback_summary.helpful + feedback_summary.not_helpful
    if total:
        share = round(100 * feedback_summary.helpful / total)
        votes = text("home.votes", lang, helpful=feedback_summary.helpful, total=total, share=share)
        blocks.append(section(f"*{escape_mrkdwn(votes)}*"))
        rejected = feedback_summary.most_rejected(5)
        if rejected:
            lines = [
                f"• *{escape_mrkdwn(c.case_id)}* — {escape_mrkdwn(cut(c.title, 100) or '?')} "
                f"({c.not_helpful}/{c.total})"
                for c in rejected
            ]
            blocks.append(section(f"*{escape_mrkdwn(text('home.rejected', lang))}*\n" + "\n".join(lines)))
    else:
        blocks.append(section(escape_mrkdwn(text("home.no_votes", lang))))
    return {"type": "home", "blocks": blocks[:HOME_BLOCKS]}
