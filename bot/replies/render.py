"""Pure rendering: cases and match results to Block Kit (with the ``text`` fallback) and to plain text.

Everything a user or a case file supplied is escaped for mrkdwn, and every message stays inside Block
Kit's limits (50 blocks, 3,000 characters a section, about 12,000 in all): long fields are cut at a
safe boundary with a pointer to the full case, so a case with very long fields still posts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.model.case import LANGS, Case, Lang, Localized
from bot.model.results import Button, Match, MatchResult, NodeEvent, Reply, ReviewRecord, SuspectInfo
from bot.replies.blocks import context
from bot.replies.catalog import text
from bot.replies.first import Line, evidence_words, fill_command, first_reply_lines, step_lines
from bot.replies.labels import label, lang_name, tier_text
from bot.replies.messages import message
from bot.replies.mrkdwn import escape_mrkdwn, fallback, link, truncate

SECTION_LIMIT = 3000
MESSAGE_BUDGET = 11_000
MAX_BLOCKS = 50
FALLBACK_LIMIT = 3000


@dataclass
class _Part:
    """One section of a message: ``mrkdwn`` for Slack and ``plain`` for the console."""

    mrkdwn: str
    plain: str
    kind: str = "section"  # section | header | context | divider


@dataclass
class _Doc:
    parts: list[_Part] = field(default_factory=list)
    full_link: str | None = None

    def add(self, mrkdwn: str, plain: str, kind: str = "section") -> None:
        if mrkdwn.strip() or kind == "divider":
            self.parts.append(_Part(mrkdwn, plain, kind))


def _text(loc: Localized, lang: Lang) -> tuple[str, str]:
    """(mrkdwn, plain) for one language side, saying so when the library lacks it."""
    value = loc.get(lang)
    if value is None:
        note = label("missing", lang)
        return f"_{escape_mrkdwn(note)}_", note
    return escape_mrkdwn(value), value


def _bilingual(doc: _Doc, heading: str, loc: Localized, langs: Sequence[Lang]) -> None:
    if not loc.langs():
        return
    for lang in langs:
        body_md, body_plain = _text(loc, lang)
        title = label(heading, lang)
        doc.add(f"*{escape_mrkdwn(title)}*\n{body_md}", f"{title}\n{_indent(body_plain)}")


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" if line else "" for line in text.splitlines())


def _title_line(case: Case, lang: Lang) -> tuple[str, str]:
    value = case.title.get(lang) or case.title.get("en") or case.title.get("ko") or case.id
    return escape_mrkdwn(value), value


def _case_header(case: Case) -> str:
    bits = [case.id, case.org or "", case.date or ""]
    return " · ".join(bit for bit in bits if bit)


def _runbook(doc: _Doc, case: Case, langs: Sequence[Lang], fills: dict[str, str]) -> None:
    """What to do next time, each step in both languages with its command and what it assumes."""
    if not case.runbook:
        return
    heading = " · ".join(label("runbook", lang) for lang in langs)
    md_lines, plain_lines = [f"*{escape_mrkdwn(heading)}*"], [heading]
    for number, step in enumerate(case.runbook, start=1):
        step_md, step_plain = step_lines(number, step, langs, fills, indent="  ")
        md_lines += [line.removeprefix("  ") for line in step_md]
        plain_lines += step_plain
        if step.assumes is not None and step.assumes.get(langs[0]):
            assumes = f"{label('assumes', langs[0])}: {step.assumes.get(langs[0])}"
            md_lines.append(f"    _{escape_mrkdwn(assumes)}_")
            plain_lines.append(f"      ({assumes})")
    doc.add("\n".join(md_lines), "\n".join(plain_lines))


def _remediation(
    doc: _Doc, case: Case, langs: Sequence[Lang], fills: dict[str, str] | None = None, heading: str = "remediation"
) -> None:
    if not case.remediation:
        return
    key = heading
    for lang in langs:
        heading = label(key, lang)
        md_lines, plain_lines = [], []
        for step in case.remediation:
            body_md, body_plain = _text(step.text, lang)
            md_lines.append(f"• {body_md}")
            plain_lines.append(f"  - {body_plain}")
            command = fill_command(step.template, fills or {}) if step.template else None
            if command:
                md_lines.append(f"    `{escape_mrkdwn(command)}`")
                plain_lines.append(f"      $ {command}")
        doc.add(f"*{escape_mrkdwn(heading)}*\n" + "\n".join(md_lines), heading + "\n" + "\n".join(plain_lines))


def fill_template(template: str, values: dict[str, str]) -> str:
    """Kept for callers of the old name: see :func:`bot.replies.first.fill_command`."""
    return fill_command(template, values)


def _sources(doc: _Doc, case: Case, langs: Sequence[Lang]) -> None:
    if not case.sources:
        return
    heading = " / ".join(label("sources", lang) for lang in langs)
    md = " · ".join(link(s.url, _short_url(s.url)) for s in case.sources[:6])
    plain = "\n".join(f"  {s.url}" for s in case.sources[:6])
    doc.add(f"*{escape_mrkdwn(heading)}*: {md}", f"{heading}\n{plain}", "context")


def _short_url(url: str) -> str:
    bare = url.split("://", 1)[-1]
    return bare if len(bare) <= 60 else bare[:57] + "…"


def case_reply(
    case: Case,
    langs: Sequence[Lang],
    buttons: Sequence[Button] = (),
    fills: dict[str, str] | None = None,
    reviewed: ReviewRecord | None = None,
) -> Reply:
    """The full case: header, title, summary, the runbook (commands filled from ``fills``), what was done
    then, lessons, components, sources."""
    doc = _Doc(full_link=case.link())
    doc.add(_case_header(case), _case_header(case), "header")
    titles_md = "\n".join(f"*{_title_line(case, lang)[0]}*" for lang in langs if case.title.get(lang))
    titles_plain = "\n".join(_title_line(case, lang)[1] for lang in langs if case.title.get(lang))
    doc.add(titles_md or f"*{escape_mrkdwn(case.id)}*", titles_plain or case.id)
    _bilingual(doc, "summary", case.summary, langs)
    _runbook(doc, case, langs, fills or {})
    _remediation(doc, case, langs, heading="remediation.then")
    _bilingual(doc, "lessons", case.lessons, langs)
    meta = _meta_line(case, langs)
    if meta:
        doc.add(escape_mrkdwn(meta), meta, "context")
    review = _review_line(case, reviewed, langs[0])
    if review:
        doc.add(escape_mrkdwn(review), review, "context")
    _sources(doc, case, langs)
    fallback = f"{case.id}: {_title_line(case, langs[0])[1]}"
    return _finish(doc, fallback, buttons, case_ids=[case.id], lang=langs[0])


def _review_line(case: Case, reviewed: ReviewRecord | None, lang: Lang) -> str:
    """Who reviewed the case and when: the newest stored review, else the file's own review fields."""
    if reviewed is not None:
        note = f" — {_one_line(reviewed.note, 200)}" if reviewed.note else ""
        when = f"{reviewed.reviewed_at:%Y-%m-%d}"
        return label("reviewed", lang).format(who=reviewed.reviewer, when=when) + note
    if case.review.reviewed_at:
        who = case.review.reviewed_by or "?"
        return label("reviewed", lang).format(who=who, when=case.review.reviewed_at[:10])
    return ""


def _meta_line(case: Case, langs: Sequence[Lang]) -> str:
    bits = []
    if case.components:
        bits.append(f"{label('components', langs[0])}: {', '.join(case.components)}")
    if case.root_cause:
        bits.append(f"{label('root_cause', langs[0])}: {case.root_cause}")
    if case.failure_class:
        bits.append(f"class: {case.failure_class}")
    return " · ".join(bits)


def _evidence_part(match: Match, lang: Lang, case: Case | None = None) -> tuple[str, str]:
    heading = label("evidence", lang)
    md_lines, plain_lines = [], []
    for ev in match.evidence[:2]:
        times = f" (×{ev.count})" if ev.count > 1 else ""
        md_lines.append(f"> {escape_mrkdwn(ev.line)}")
        about = _one_line(evidence_words(ev, lang, case), 150)  # in words, never a pattern
        md_lines.append(f"_{line_label(ev.line_no, lang)}{times} · {escape_mrkdwn(about)}_")
        plain_lines.append(f"  > {ev.line}")
        plain_lines.append(f"    {line_label(ev.line_no, lang)}{times} · {about}")
    return f"*{heading}*\n" + "\n".join(md_lines), f"{heading}\n" + "\n".join(plain_lines)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _tier_text(match: Match, lang: Lang) -> str:
    return f"{tier_text(match.tier.value, lang)}, {match.score}/100"


def match_reply(
    result: MatchResult,
    cases: Mapping[str, Case],
    langs: Sequence[Lang],
    *,
    explicit: bool,
    suspects: str | None = None,
    fills: dict[str, str] | None = None,
    buttons: Sequence[Button] = (),
    history: Mapping[str, Sequence[NodeEvent]] | None = None,
) -> Reply:
    """The answer to a paste: one screen (``bot.replies.first``): the verdict, the matched line, the
    suspects, what to do first with filled commands, and why. Runner-ups and the full case are behind
    buttons.

    With ``explicit`` (a command, mention, DM or the console) a paste with no good match gets a clear
    "no known case fits" with the closest weak candidates; unprompted pastes are gated by the caller.
    ``suspects`` is kept for callers that only have the summary line.
    """
    lang = langs[0]
    best = result.best
    if best is None or (explicit and not result.reply and best.tier.value == "weak"):
        return _no_match_reply(result, langs, cases)
    case = cases[best.case_id]
    doc = _Doc(full_link=case.link())
    info = result.suspects
    if info is None and suspects:
        info = SuspectInfo(failed=True, summary=suspects, fills=fills or {})
    shown = result.model_copy(update={"suspects": info})
    # The job's own error leads; the case below only explains the reports it caused (a watchdog).
    lead = [Line(*_job_error(result.job_error, lang))] if result.job_error and not result.reply else []
    for line in first_reply_lines(shown, case, langs, _notes_text(result, lang), fills or {}, history, lead):
        doc.add(line.text, line.plain, line.kind)
    named = [best.case_id, *[cid for cid in result.reply_case_ids if cid != best.case_id]]
    fallback = f"{best.case_id} ({tier_text(best.tier.value, lang)}): {_title_line(case, lang)[1]}"
    return _finish(doc, fallback, buttons, case_ids=named, tier=best.tier.value, lang=lang)


def _job_error(line: str, lang: Lang) -> tuple[str, str]:
    said, job = text("nomatch.job_error", lang), _one_line(line, 200)
    return f"*{escape_mrkdwn(said)}*\n> {escape_mrkdwn(job)}", f"{said}\n> {job}"


def _pointer_md(match: Match, lang: Lang) -> str:
    title = match.title.get(lang) or match.title.get("en") or match.title.get("ko") or ""
    return f"• *{match.case_id}* — {escape_mrkdwn(_one_line(title, 120))} ({_tier_text(match, lang)})"


def _pointer_plain(match: Match, lang: Lang) -> str:
    title = match.title.get(lang) or match.title.get("en") or match.title.get("ko") or ""
    return f"  - {match.case_id} — {_one_line(title, 120)} ({_tier_text(match, lang)})"


def line_label(number: int, lang: Lang = "en") -> str:
    """``line 12``, or ``line 3 from the end`` when the lines before the skipped middle were not counted."""
    if number > 0:
        return label("line", lang).format(n=f"{number:,}")
    return label("line.end", lang).format(n=f"{-number:,}")


def _notes_text(result: MatchResult, lang: Lang) -> str:
    """What was skipped or cut, in one line ("" when nothing was)."""
    notes = []
    if result.truncated:
        lines = label("notes.skipped.lines", lang).format(n=f"{result.skipped_lines:,}") if result.skipped_lines else ""
        notes.append(label("notes.skipped", lang).format(size=f"{result.skipped_bytes:,}", lines=lines))
    if result.unread_bytes:
        notes.append(label("notes.unread", lang).format(n=f"{result.unread_bytes:,}"))
    if result.long_lines:
        notes.append(label("notes.long", lang).format(n=f"{result.long_lines:,}"))
    if result.timed_out:
        notes.append(label("notes.deadline", lang))
    if result.transient:
        notes.append(label("notes.transient", lang))
    return " ".join(notes)


def _notes(doc: _Doc, result: MatchResult, lang: Lang) -> None:
    text = _notes_text(result, lang)
    if text:
        doc.add(f"_{escape_mrkdwn(text)}_", text, "context")


def _no_match_reply(result: MatchResult, langs: Sequence[Lang], cases: Mapping[str, Case]) -> Reply:
    lang = langs[0]
    doc = _Doc()
    headline = {lg: text("nomatch.headline", lg) for lg in LANGS}
    doc.add(" / ".join(headline[lg] for lg in langs), " / ".join(headline[lg] for lg in langs))
    shown = result.matches[:3]
    if result.job_error is not None:
        doc.add(*_job_error(result.job_error, lang))
        # Beside the job's own error, only candidates that matched a line of their own are worth a look.
        shown = [m for m in shown if any(e.kind == "signature" for e in m.evidence)]
    if shown:
        heading = text("nomatch.closest", lang)
        md = "\n".join(_pointer_md(m, lang) for m in shown)
        plain = "\n".join(_pointer_plain(m, lang) for m in shown)
        doc.add(f"*{heading}*\n{md}", f"{heading}\n{plain}")
        for match in shown[:1]:
            if match.evidence:
                ev_md, ev_plain = _evidence_part(match, lang, cases.get(match.case_id))
                doc.add(ev_md, ev_plain)
    _notes(doc, result, lang)
    return _finish(doc, headline[lang], (), case_ids=[m.case_id for m in shown], lang=lang)


def case_list_reply(cases: Iterable[Case], heading: str, langs: Sequence[Lang], empty: str) -> Reply:
    """A short list of cases: one line each with id, date and title."""
    lang = langs[0]
    doc = _Doc()
    doc.add(heading, heading, "header")
    lines_md, lines_plain = [], []
    for case in cases:
        title = _title_line(case, lang)
        when = f" ({case.date})" if case.date else ""
        lines_md.append(f"• *{escape_mrkdwn(case.id)}*{escape_mrkdwn(when)} — {_one_md(title[0])}")
        lines_plain.append(f"  {case.id}{when} — {_one_line(title[1], 140)}")
    if not lines_md:
        doc.add(escape_mrkdwn(empty), empty)
    for start in range(0, len(lines_md), 15):
        doc.add("\n".join(lines_md[start : start + 15]), "\n".join(lines_plain[start : start + 15]))
    return _finish(doc, heading, (), lang=lang)


def sections_reply(heading: str, sections: Sequence[tuple[str, Sequence[str]]], hint: str = "") -> Reply:
    """A header and one section per (title, lines), escaped; ``hint`` as a context line at the end."""
    doc = _Doc()
    doc.add(heading, heading, "header")
    for title, lines in sections:
        body = "\n".join(f"• {escape_mrkdwn(line)}" for line in lines) or "-"
        doc.add(f"*{escape_mrkdwn(title)}*\n{body}", f"{title}\n" + "\n".join(f"  {line}" for line in lines))
    if hint:
        doc.add(f"_{escape_mrkdwn(hint)}_", hint, "context")
    return _finish(doc, heading, ())


def _one_md(escaped: str) -> str:
    return truncate(" ".join(escaped.split()), 160)


def message_reply(text: str) -> Reply:
    """A short plain message (help, confirmations, errors): escaped, one section."""
    return Reply(text=fallback(text, FALLBACK_LIMIT), blocks=[_section(escape_mrkdwn(text))], plain=text)


def say(key: str, langs: Sequence[Lang], **values: str) -> Reply:
    """The fixed message ``key`` (``bot.replies.messages``) in the reader's language, the other under it."""
    return bilingual_reply({lang: message(key, lang, **values) for lang in ("en", "ko")}, langs)


def both(key: str, langs: Sequence[Lang]) -> str:
    """The fixed message ``key`` in both languages on one line (headings)."""
    return " / ".join(message(key, lang) for lang in langs)


def bilingual_reply(texts: dict[Lang, str], langs: Sequence[Lang]) -> Reply:
    """A fixed message in the reader's language, the other language under it in smaller type."""
    first = texts[langs[0]]
    blocks = [_section(escape_mrkdwn(first))]
    plain = [first]
    for lang in langs[1:]:
        if texts.get(lang) and texts[lang] != first:
            blocks.append(context(escape_mrkdwn(texts[lang])))
            plain.append(texts[lang])
    return Reply(text=fallback(first, FALLBACK_LIMIT), blocks=blocks, plain="\n\n".join(plain))


# -- Block Kit assembly ---------------------------------------------------------------------------------


def _section(mrkdwn: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}


def _block(part: _Part, text: str) -> dict[str, Any]:
    if part.kind == "header":
        return {"type": "header", "text": {"type": "plain_text", "text": _one_line(part.plain, 150)}}
    if part.kind == "context":
        return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}
    if part.kind == "divider":
        return {"type": "divider"}
    return _section(text)


def _finish(
    doc: _Doc,
    summary: str,
    buttons: Sequence[Button],
    *,
    case_ids: list[str] | None = None,
    tier: str | None = None,
    lang: Lang = "en",
) -> Reply:
    blocks: list[dict[str, Any]] = []
    used = 0
    room = MAX_BLOCKS - (2 if buttons else 1)
    cut = False
    for part in doc.parts:
        if len(blocks) >= room or used >= MESSAGE_BUDGET:
            cut = True
            break
        limit = min(SECTION_LIMIT if part.kind != "context" else 2000, MESSAGE_BUDGET - used)
        text = truncate(part.mrkdwn, limit) if part.kind != "header" else part.mrkdwn
        cut = cut or text != part.mrkdwn
        blocks.append(_block(part, text))
        used += len(text)
    if cut:
        more = label("cut", lang)
        if doc.full_link:
            more += " " + link(doc.full_link, label("full_case", lang))
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": more}]})
    if buttons:
        blocks.append({"type": "actions", "elements": [_button(b) for b in buttons[:25]]})
    plain = "\n\n".join(part.plain for part in doc.parts if part.kind != "divider")
    return Reply(
        text=fallback(summary, FALLBACK_LIMIT),
        blocks=blocks,
        plain=plain,
        case_ids=case_ids or [],
        tier=tier,
    )


def _button(button: Button) -> dict[str, Any]:
    element: dict[str, Any] = {
        "type": "button",
        "action_id": button.action_id,
        "text": {"type": "plain_text", "text": _one_line(button.text, 75)},
        "value": button.value[:2000],
    }
    if button.style:
        element["style"] = button.style
    return element


def lang_names(langs: Sequence[Lang]) -> str:
    return " + ".join(lang_name(lang, lang) for lang in langs)
