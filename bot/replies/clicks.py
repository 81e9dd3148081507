"""Pure: the replies a click on a match reply's buttons asks for (a vote's acknowledgement, the other
matches, a "no longer valid" note)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.model.case import Case, Lang, Localized
from bot.model.results import Button, Reply
from bot.replies.blocks import MESSAGE_BLOCKS, case_title, context, cut, header, section
from bot.replies.buttons import ACTION_KEEP, ACTION_PICK, ButtonPayload, pick_value, text, with_buttons
from bot.replies.labels import is_tier, tier_text
from bot.replies.mrkdwn import escape_mrkdwn, fallback, link


@dataclass(frozen=True)
class ClickAnswer:
    """What a click produced: the reply to show, whether the click was valid, and for a valid one the
    reply id and whether the clicked message also offered "Share in channel"."""

    reply: Reply
    ok: bool
    reply_id: int | None = None
    share: bool = False


def note_reply(message: str) -> Reply:
    """A short ephemeral note (escaped, one section)."""
    return Reply(text=fallback(message), blocks=[section(escape_mrkdwn(message))], plain=message)


def vote_reply(
    case_id: str,
    vote: Literal["helpful", "not_helpful", "picked"],
    lang: Lang,
    notes: Sequence[str] = (),
    keep: str | None = None,
) -> Reply:
    """The acknowledgement a voter sees (only they do): what was recorded, ``notes`` on the confirmed
    example (saved, withdrawn, not kept from a DM), and with ``keep`` (a button value) a "Save as an
    example" button."""
    said = text("picked" if vote == "picked" else f"voted.{vote}", lang, case=case_id)
    hint = text("voted.change", lang)
    blocks = [section(escape_mrkdwn(said)), *(context(escape_mrkdwn(note)) for note in notes)]
    blocks.append(context(escape_mrkdwn(hint)))
    reply = Reply(text=fallback(said), blocks=blocks, plain="\n".join([said, *notes, hint]), case_ids=[case_id])
    if keep is None:
        return reply
    return with_buttons(reply, [Button(action_id=ACTION_KEEP, text=text("keep", lang), value=keep)])


def invalid_reply(lang: Lang = "en") -> Reply:
    return note_reply(text("invalid", lang))


def _tier_words(tier: str, score: int, lang: Lang) -> str:
    return f"{tier_text(tier, lang)}, {score}/100" if is_tier(tier) else f"{score}/100"


def _first_sentence(loc: Localized, lang: Lang, limit: int) -> str:
    value = loc.get(lang) or loc.get("en") or loc.get("ko") or ""
    flat = " ".join(value.split())
    end = flat.find(". ")
    return cut(flat[: end + 1] if 0 < end < limit else flat, limit)


def other_matches_reply(payload: ButtonPayload, cases: Mapping[str, Case], reply_id: int | None = None) -> Reply:
    """The runner-ups of a match, in the message's language order: id, tier, title, first sentence of
    the summary, and a link to each case. Runner-ups no longer in the library are left out. With the
    reply's id, an "It was …" button per runner-up confirms it instead of the best case."""
    lang = payload.langs[0]
    heading = text("others.heading", lang, case=payload.case_id)
    found = [(r, cases[r.case_id]) for r in payload.runners if r.case_id in cases]
    blocks: list[dict[str, Any]] = [header(heading)]
    plain = [heading]
    if not found:
        none = text("others.none", lang)
        return Reply(text=fallback(none), blocks=[*blocks, section(escape_mrkdwn(none))], plain=f"{heading}\n{none}")
    for runner, case in found:
        title = cut(" ".join(case_title(case, lang).split()), 150)
        summary = _first_sentence(case.summary, lang, 280)
        tier = _tier_words(runner.tier, runner.score, lang)
        url = case.link()
        name = link(url, case.id) if url else f"*{escape_mrkdwn(case.id)}*"
        md = f"{name} — *{escape_mrkdwn(title)}* ({escape_mrkdwn(tier)})"
        if summary:
            md += f"\n{escape_mrkdwn(summary)}"
        blocks.append(section(md))
        plain.append(f"  {case.id} — {title} ({tier})" + (f"\n    {summary}" if summary else ""))
    picks: list[Button] = []
    for _, case in found if reply_id is not None else []:
        value = pick_value(case.id, lang, reply_id, payload.lines) if reply_id is not None else None
        if value is not None:
            # One actions block: Slack wants a different action_id on each element (pick_case:0, :1, …).
            action_id = f"{ACTION_PICK}:{len(picks)}"
            picks.append(Button(action_id=action_id, text=cut(text("pick", lang, case=case.id), 75), value=value))
    blocks.append(context(escape_mrkdwn(text("others.hint", lang))))
    summary_line = f"{heading}: " + ", ".join(case.id for _, case in found)
    reply = Reply(
        text=fallback(summary_line),
        blocks=blocks[: MESSAGE_BLOCKS - 1],
        plain="\n".join(plain),
        case_ids=[case.id for _, case in found],
    )
    return with_buttons(reply, picks)
