"""Topics as use cases: ``/incident topics``, ``/incident topic nccl`` and search filters
(``/incident search hang component:nccl``). The vocabulary is ``bot.library.topics``'s."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.library.topics import KINDS, PREFIXES, Topic, Vocabulary
from bot.model.case import Case, Lang
from bot.model.results import Reply
from bot.model.summary import CaseSummary
from bot.replies.catalog import text
from bot.replies.messages import message
from bot.replies.more import with_note
from bot.replies.render import both, case_list_reply, say, sections_reply

PAGE = 10
_FILTER = re.compile(r"(?<!\S)(?:class|component|cause|symptom|topic):[^\s:]{1,80}(?!\S)", re.IGNORECASE)


@dataclass(frozen=True)
class TopicPage:
    """One page of a topic's cases, newest review first."""

    words: str
    topics: tuple[Topic, ...]
    case_ids: tuple[str, ...]  # this page's
    total: int
    page: int
    pages: int


def is_count(text: str) -> bool:
    """A page number or cursor: ASCII digits, at most six (``²`` and ``٣`` are digits to ``str.isdigit``)."""
    return text.isascii() and text.isdigit() and len(text) <= 6


def newest_first(
    case_ids: Sequence[str], summaries: Mapping[str, CaseSummary], reviewed: Mapping[str, datetime]
) -> list[str]:
    """Most recently reviewed first (the later of the file's date and a stored review), then by case date."""

    def key(case_id: str) -> tuple[str, str, str]:
        summary = summaries.get(case_id)
        stored = reviewed[case_id].isoformat() if case_id in reviewed else ""
        own = (summary.reviewed or "") if summary else ""
        return (max(own, stored), (summary.date or "") if summary else "", case_id)

    return sorted(case_ids, key=key, reverse=True)


def topic_page(
    vocabulary: Vocabulary,
    words: str,
    summaries: Mapping[str, CaseSummary],
    reviewed: Mapping[str, datetime],
    page: int = 1,
) -> TopicPage | None:
    """The cases of the topics ``words`` names, a page at a time; None when it names none."""
    topics = vocabulary.resolve(words)
    if not topics:
        return None
    ordered = newest_first(vocabulary.cases_of(topics), summaries, reviewed)
    pages = max(1, -(-len(ordered) // PAGE))
    page = min(max(1, page), pages)
    shown = ordered[(page - 1) * PAGE : page * PAGE]
    return TopicPage(words.strip(), tuple(topics), tuple(shown), len(ordered), page, pages)


def split_filters(words: str) -> tuple[str, list[str]]:
    """``hang component:nccl`` -> ("hang", ["component:nccl"]); ``topic:x`` filters by any kind."""
    filters = [found.group(0) for found in _FILTER.finditer(words)]
    rest = _FILTER.sub(" ", words)
    return " ".join(rest.split()), filters


def allowed_by(vocabulary: Vocabulary, filters: Sequence[str]) -> tuple[set[str] | None, list[str]]:
    """The case ids every filter allows (None without filters), and the filters that named nothing."""
    allowed: set[str] | None = None
    unknown: list[str] = []
    for raw in filters:
        text = raw.lower()
        words = text.split(":", 1)[1] if text.startswith("topic:") else text
        topics = vocabulary.resolve(words)
        if not topics:
            unknown.append(raw)
            continue
        ids = set(vocabulary.cases_of(topics))
        allowed = ids if allowed is None else allowed & ids
    return allowed, unknown


def vocabulary_lines(vocabulary: Vocabulary, lang: Lang, per_kind: int = 12) -> list[tuple[str, list[str]]]:
    """(heading, lines) per kind for ``/incident topics``: ``nccl (11) · hfreduce, accl``."""
    out = []
    for kind in KINDS:
        topics = vocabulary.by_kind(kind)
        lines = []
        for topic in topics[:per_kind]:
            also = f" · {', '.join(topic.aliases[:4])}" if topic.aliases else ""
            lines.append(f"{topic.name} ({len(topic.cases)}){also}")
        if len(topics) > per_kind:
            lines.append(f"… +{len(topics) - per_kind}")
        prefix = next(p for p, k in PREFIXES.items() if k == kind)
        out.append((f"{text('topics.' + kind, lang)} ({prefix})", lines))
    return out


def topics_reply(vocabulary: Vocabulary, langs: Sequence[Lang], rest: str = "") -> Reply:
    """``/incident topics``: every kind, its first topics; ``/incident topics class`` (or ``component``,
    ``cause``, ``symptom``): that kind in full, with every alias."""
    kind = rest.strip().lower().removesuffix(":")
    if kind in KINDS:
        lines = [
            f"{t.name} ({len(t.cases)})" + (f" · {', '.join(t.aliases)}" if t.aliases else "")
            for t in vocabulary.by_kind(kind)
        ]
        prefix = next(p for p, k in PREFIXES.items() if k == kind)
        title = f"{text('topics.' + kind, langs[0])} ({prefix})"
        sections = [(title, lines[start : start + 20]) for start in range(0, len(lines), 20)] or [(title, [])]
        return sections_reply(both("topics.heading", langs), sections, message("topics.hint", langs[0]))
    sections = vocabulary_lines(vocabulary, langs[0])
    hint = message("topics.hint", langs[0]) + " · " + message("topics.kind", langs[0])
    return sections_reply(both("topics.heading", langs), sections, hint)


def topic_reply(
    vocabulary: Vocabulary,
    rest: str,
    summaries: Mapping[str, CaseSummary],
    cases: Mapping[str, Case],
    reviewed: Mapping[str, datetime],
    langs: Sequence[Lang],
) -> Reply:
    """``/incident topic WORDS [page]``: a page of the topic's cases, or the closest topics."""
    words, _, last = rest.strip().rpartition(" ")
    numbered = is_count(last) and bool(words)
    page = int(last) if numbered else 1
    words = words if numbered else rest.strip()
    if not words:
        return say("topic.usage", langs)
    found = topic_page(vocabulary, words, summaries, reviewed, page)
    if found is None:
        closest = ", ".join(t.key for t in vocabulary.closest(words))
        return say("topic.unknown", langs, words=words[:60], closest=closest or "-")
    heading = message("topic.heading", langs[0], words=words[:60], n=str(found.total))
    reply = case_list_reply([cases[cid] for cid in found.case_ids], heading, langs, "")
    names = ", ".join(t.key for t in found.topics[:6])
    note = message("topic.page", langs[0], names=names, page=str(found.page), pages=str(found.pages))
    if found.page < found.pages:
        note += " · " + message("topic.next", langs[0], words=words[:60], page=str(found.page + 1))
    return with_note(reply, note)


def search_reply(words: str, outcome: SearchFound | None, langs: Sequence[Lang]) -> Reply:
    """``/incident search WORDS [kind:topic ...]``: what :func:`search_found` found for ``words`` (None: no
    words were given)."""
    if outcome is None:
        return say("search.usage", langs)
    if outcome.unknown is not None:
        return say("topic.unknown", langs, words=outcome.unknown[:60], closest=outcome.closest or "-")
    heading = message("search.heading", langs[0], words=words.strip()[:80])
    return case_list_reply(outcome.found, heading, langs, message("search.none", langs[0]))


@dataclass(frozen=True)
class SearchFound:
    """What a search found (at most :data:`SEARCH_SHOWN` cases), or the filter that names no topic."""

    found: list[Case]
    unknown: str | None = None
    closest: str = ""


SEARCH_SHOWN = 8


def search_found(
    vocabulary: Vocabulary,
    words: str,
    ranked: Callable[[str, int], list[Case]],
    summaries: Mapping[str, CaseSummary],
    cases: Mapping[str, Case],
    reviewed: Mapping[str, datetime],
) -> SearchFound:
    """The cases ``/incident search WORDS`` shows (``incident-bot search`` prints the same)."""
    text, filters = split_filters(words)
    allowed, unknown = allowed_by(vocabulary, filters)
    if unknown:
        return SearchFound([], unknown[0], ", ".join(t.key for t in vocabulary.closest(unknown[0])))
    if text:
        limit = SEARCH_SHOWN if allowed is None else 200
        found = [c for c in ranked(text, limit) if allowed is None or c.id in allowed]
    else:
        found = [cases[cid] for cid in newest_first(sorted(allowed or ()), summaries, reviewed)]
    return SearchFound(found[:SEARCH_SHOWN])
