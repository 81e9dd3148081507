"""Pure digest logic: which cases are newly reviewed for a slot, slot arithmetic, and Block Kit rendering.

No I/O, no clock, no environment: the caller passes ``now``, the cron expression and the time zone.
A *slot* is one firing time of the digest cron; the digest for a slot covers cases reviewed at or before it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from bot.digest.slots import CronSlots
from bot.model.case import Case, Lang, Localized
from bot.replies.labels import label
from bot.replies.mrkdwn import escape_mrkdwn, link, truncate

MAX_BLOCKS = 50
MAX_SECTION_CHARS = 3000
MAX_HEADER_CHARS = 150
# Slack rejects payloads whose total block text passes an undocumented ~13k (slack-platform.md §5.1).
MAX_MESSAGE_CHARS = 11_000
# Per-field limits keep one case's section well under MAX_SECTION_CHARS.
_TITLE_CHARS = 300
_SHORT_CHARS = 100
_ROOT_CAUSE_CHARS = 400
_LESSON_CHARS = 700
_FALLBACK_LINE_CHARS = 150

_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+")


@dataclass(frozen=True, slots=True)
class DigestMessage:
    """One Slack message of a digest: plain ``text`` fallback, Block Kit ``blocks``, and its case ids."""

    text: str
    blocks: list[dict[str, Any]]
    case_ids: tuple[str, ...] = field(default_factory=tuple)


# ---------------------------------------------------------------------------------------------------
# Slots and periods


def latest_slot(cron: str, timezone: str, now: datetime) -> datetime:
    """The latest cron slot at or before ``now`` (aware, in ``timezone``; daylight-saving rule in
    ``bot.digest.slots``).

    Raises ValueError for a naive ``now``, a bad expression or zone, or a cron that never fired recently.
    """
    return CronSlots.parse(cron, timezone).latest_at_or_before(now)


def previous_slot(cron: str, timezone: str, slot: datetime) -> datetime:
    """The latest cron slot strictly before ``slot``. Raises like :func:`latest_slot`."""
    return CronSlots.parse(cron, timezone).before(slot)


def next_slot(cron: str, timezone: str, now: datetime) -> datetime:
    """The first cron slot strictly after ``now``. Raises like :func:`latest_slot`."""
    return CronSlots.parse(cron, timezone).next_after(now)


def period_key(slot: datetime) -> str:
    """The ledger key of a slot: its local date and time with offset, e.g. ``2026-11-30T09:00+09:00``."""
    if slot.tzinfo is None:
        raise ValueError("slot must be timezone-aware")
    return slot.isoformat(timespec="minutes")


class Reviewed(Protocol):
    """A whole case or its summary: what choosing the digest's cases needs."""

    @property
    def id(self) -> str: ...
    def reviewed_at(self) -> datetime | None: ...


R = TypeVar("R", bound=Reviewed)


def select_new_cases(
    cases: Iterable[R], digested_ids: set[str] | frozenset[str], slot: datetime, lookback_days: int
) -> list[R]:
    """Cases with a ``reviewed_at`` in ``[slot - lookback_days, slot]`` whose id is not in ``digested_ids``,
    ordered by ``reviewed_at`` then id. Duplicate ids keep their first occurrence."""
    start = slot - timedelta(days=lookback_days)
    picked: dict[str, tuple[datetime, R]] = {}
    for case in cases:
        reviewed = case.reviewed_at()
        if reviewed is None or case.id in digested_ids or case.id in picked:
            continue
        if start <= reviewed <= slot:
            picked[case.id] = (reviewed, case)
    return [case for _, case in sorted(picked.values(), key=lambda item: (item[0], item[1].id))]


# ---------------------------------------------------------------------------------------------------
# Rendering


def first_lesson(text: str) -> str:
    """The first lesson of a lessons text: its first paragraph, first list item, or (when long) first
    sentence."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    if not paragraphs:
        return ""
    lines = [line for line in paragraphs[0].splitlines() if line.strip()]
    head = lines[0] if len(lines) > 1 and _BULLET.match(lines[0]) else " ".join(line.strip() for line in lines)
    head = _BULLET.sub("", head).strip()
    if len(head) > _LESSON_CHARS // 2:
        head = _SENTENCE_END.split(head, maxsplit=1)[0]
    return head


def _side(value: Localized, lang: Lang, limit: int, transform: Callable[[str], str] | None = None) -> str:
    text = value.get(lang)
    if text is None:
        return f"_{escape_mrkdwn(label('missing', lang))}_"
    if transform is not None:
        text = transform(text)
    return truncate(escape_mrkdwn(text.strip()), limit)


def _case_section(case: Case, langs: Sequence[Lang]) -> str:
    head = link(case.link() or "", case.id)
    meta = [f"*{head}*"]
    if case.org:
        meta.append(f"{label('org', langs[0])}: {truncate(escape_mrkdwn(case.org), _SHORT_CHARS)}")
    if case.date:
        meta.append(f"{label('date', langs[0])}: {truncate(escape_mrkdwn(case.date), _SHORT_CHARS)}")
    lines = ["  ·  ".join(meta)]
    lines += [f"*{_side(case.title, lang, _TITLE_CHARS)}*" for lang in langs]
    if case.root_cause:
        names = " · ".join(label("root_cause", lang) for lang in langs)
        lines.append(f"*{names}:* {truncate(escape_mrkdwn(case.root_cause), _ROOT_CAUSE_CHARS)}")
    for lang in langs:
        lines.append(f"*{label('first_lesson', lang)}:* {_side(case.lessons, lang, _LESSON_CHARS, first_lesson)}")
    return truncate("\n".join(lines), MAX_SECTION_CHARS)


def _fallback_line(case: Case, langs: Sequence[Lang]) -> str:
    title = next((t for t in (case.title.get(lang) for lang in langs) if t), "")
    return truncate(escape_mrkdwn(f"• {case.id} — {title}".rstrip(" —")), _FALLBACK_LINE_CHARS)


def _period_text(period_start: datetime | None, period_end: datetime) -> str:
    end = f"{period_end:%Y-%m-%d %H:%M %Z}".strip()
    if period_start is None:
        return end
    start = period_start.astimezone(period_end.tzinfo)
    return f"{start:%Y-%m-%d %H:%M} – {end}"


def _frame(langs: Sequence[Lang], period: str, count: int, part: int, parts: int) -> tuple[str, str]:
    title = " · ".join(label("digest.title", lang) for lang in langs)
    if parts > 1:
        title = f"{title} ({part}/{parts})"
    counts = " · ".join(label("digest.count", lang).format(n=count) for lang in langs)
    return truncate(title, MAX_HEADER_CHARS), escape_mrkdwn(f"{period}  ·  {counts}")


def _message(
    sections: list[tuple[Case, str]], langs: Sequence[Lang], period: str, count: int, part: int, parts: int
) -> DigestMessage:
    title, context = _frame(langs, period, count, part, parts)
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": title, "emoji": False}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": context}]},
    ]
    for index, (_, text) in enumerate(sections):
        if index:
            blocks.append({"type": "divider"})
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text}})
    lines = [escape_mrkdwn(title), context] + [_fallback_line(case, langs) for case, _ in sections]
    return DigestMessage("\n".join(lines), blocks, tuple(case.id for case, _ in sections))


def build_digest_messages(
    cases: Sequence[Case],
    period_start: datetime | None,
    period_end: datetime,
    lang_order: Sequence[Lang] = ("en", "ko"),
    post_empty: bool = False,
) -> list[DigestMessage]:
    """Render a digest as one or more Slack messages, cases in the given order.

    Each message has a header (title, part n/m when split), a context line (period and total count) and
    one section per case; messages stay within 50 blocks and about ``MAX_MESSAGE_CHARS`` of block text.
    No cases gives ``[]``, or one "no new cases" note when ``post_empty``. All case text is escaped.
    """
    langs = tuple(lang_order) or ("en", "ko")
    period = _period_text(period_start, period_end)
    if not cases:
        if not post_empty:
            return []
        title, context = _frame(langs, period, 0, 1, 1)
        note = "\n".join(
            escape_mrkdwn(label("digest.empty", lang)) + " " + label("digest.how_reviewed", lang) for lang in langs
        )
        blocks: list[dict[str, Any]] = [
            {"type": "header", "text": {"type": "plain_text", "text": title, "emoji": False}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": context}]},
            {"type": "section", "text": {"type": "mrkdwn", "text": note}},
        ]
        return [DigestMessage("\n".join([escape_mrkdwn(title), context, note]), blocks)]

    frame_chars = sum(len(part) for part in _frame(langs, period, len(cases), 99, 99))
    groups: list[list[tuple[Case, str]]] = [[]]
    used_blocks, used_chars = 2, frame_chars
    for case in cases:
        text = _case_section(case, langs)
        extra_blocks = 2 if groups[-1] else 1  # divider + section
        if groups[-1] and (used_blocks + extra_blocks > MAX_BLOCKS or used_chars + len(text) > MAX_MESSAGE_CHARS):
            groups.append([])
            used_blocks, used_chars, extra_blocks = 2, frame_chars, 1
        groups[-1].append((case, text))
        used_blocks += extra_blocks
        used_chars += len(text)
    parts = len(groups)
    return [_message(group, langs, period, len(cases), i + 1, parts) for i, group in enumerate(groups)]


def nodes_message(lines: Sequence[tuple[str, str]], langs: Sequence[Lang], period: str) -> DigestMessage:
    """The digest's last part: the hosts that failed more than once in its period (``lines`` as
    ``bot.replies.nodes.host_lines`` makes them)."""
    heading = " / ".join(label("digest.nodes", lang) for lang in langs)
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": heading[:150], "emoji": False}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": escape_mrkdwn(period)}]},
        {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(md for md, _ in lines[:15])[:2900]}},
    ]
    text = "\n".join([escape_mrkdwn(heading), *(escape_mrkdwn(plain) for _, plain in lines[:15])])
    return DigestMessage(text, blocks)
