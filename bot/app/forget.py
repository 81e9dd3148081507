"""``/incident forget [ID]``: a reviewer lists the confirmed examples (most rejected first) or deletes one.
A deletion takes the line away for its case, whoever confirmed it; the example index is brought up to
date in the background here, and on every other replica at its next check (the stored version changed)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.app.examples import ExampleBook
from bot.model.case import Lang
from bot.model.results import Reply
from bot.replies.messages import message
from bot.replies.render import bilingual_reply, say

LISTED = 10  # examples a listing shows
LINE_SHOWN = 120


def forget_reply(
    examples: ExampleBook, rest: str, allowed: bool, langs: Sequence[Lang], changed: Callable[[], None]
) -> Reply:
    if not allowed:
        return say("forget.not_allowed", langs)
    raw = rest.strip().lstrip("#")
    if not raw:
        return _listing(examples, langs)
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        return say("forget.usage", langs)
    example_id = int(raw)
    found = next((e for e in examples.stored() if e.id == example_id), None)
    gone = examples.delete(example_id) if found is not None else 0
    if found is None or not gone:
        return say("forget.unknown", langs, id=str(example_id))
    changed()
    return say("forget.done", langs, id=str(example_id), case=found.case_id, n=str(gone))


def _listing(examples: ExampleBook, langs: Sequence[Lang]) -> Reply:
    stored = examples.stored()
    if not stored:
        return say("forget.none", langs)
    first: dict[tuple[str, str], int] = {}
    rejected: dict[tuple[str, str], int] = {}
    people: dict[tuple[str, str], set[str]] = {}
    for e in stored:
        key = (e.case_id, e.line)
        first.setdefault(key, e.id or 0)
        rejected[key] = max(rejected.get(key, 0), e.rejections)
        people.setdefault(key, set()).add(e.user_id)
    ranked = sorted(first, key=lambda key: (-rejected[key], -first[key]))[:LISTED]
    rows = []
    for key in ranked:
        case_id, line = key
        shown = line if len(line) <= LINE_SHOWN else line[: LINE_SHOWN - 1] + "…"
        no = f", rejected by {rejected[key]}" if rejected[key] else ""
        rows.append(f"#{first[key]} {case_id} (confirmed by {len(people[key])}{no}): {shown}")
    # The rows once, under the heading in the reader's language (bilingual_reply escapes every line).
    return bilingual_reply({langs[0]: "\n".join([message("forget.heading", langs[0]), *rows])}, langs[:1])
