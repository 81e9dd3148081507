"""Pure: the buttons on match replies, their compact values, and the clicks that come back.

A button's ``value`` is compact JSON (``{"v":1,"r":12,"c":"IL-0427","l":"en",...}``) within Slack's
2,000 characters. It is user-controlled (anyone can forge a click), so :func:`parse_value` accepts only
the exact shape written here and returns None for anything else, and callers check the reply-log entry
it names before storing a vote. The language-switch value also carries what is needed to render the
match again (runner-ups, the first matched line, the suspects line), since the paste itself is gone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from bot.model.case import Case, Lang
from bot.model.results import Button, Evidence, Match, MatchResult, Reply, SuspectInfo, Tier
from bot.replies.blocks import ACTIONS_ELEMENTS, MESSAGE_BLOCKS, cut
from bot.replies.click import Click as Click  # re-exported: callers import clicks from here
from bot.replies.click import click_from_body as click_from_body
from bot.replies.labels import label
from bot.replies.mrkdwn import escape_mrkdwn, truncate, unescape_mrkdwn
from bot.replies.seal import SEAL_CHARS

ACTION_HELPFUL = "feedback_helpful"
ACTION_NOT_THIS = "feedback_not_this_case"
ACTION_OTHERS = "other_matches"
ACTION_LANG = "switch_language"
ACTION_DETAILS = "case_details"
ACTION_PICK = "pick_case"  # "It was this one" on a runner-up in Other matches: pick_case:0, pick_case:1, …
PICK_ACTIONS = re.compile(rf"^{ACTION_PICK}(?::\d{{1,2}})?$")  # what the handler listens to
ACTION_KEEP = "keep_example"  # "Save these lines as an example" after a Helpful vote in a DM
VOTE_ACTIONS: dict[str, Literal["helpful", "not_helpful"]] = {
    ACTION_HELPFUL: "helpful",
    ACTION_NOT_THIS: "not_helpful",
}

VALUE_LIMIT = 2000 - SEAL_CHARS  # Block Kit's 2,000 characters, with room for the seal (bot.replies.seal)
BUTTON_TEXT_LIMIT = 75
MAX_RUNNERS = 6
_VERSION = 1
_TIERS = frozenset(t.value for t in Tier)
_EVIDENCE_LINE = 300
_EVIDENCE_MATCHED = 150
_SUSPECTS = 300
_FILLS = 12
_FILL_CHARS = 80
_CASE_ID_CHARS = 64
LINES = 6  # lines a value carries for a confirmed example (bot.matching.examples)
LINE_CHARS = 300
_LINES_BUDGET = 1_100  # characters of lines in one value, so the rest of it always fits


def text(key: str, lang: Lang, **values: object) -> str:
    """A label of this module in ``lang``, formatted. Raises KeyError for an unknown key (a bug)."""
    template = label(key, lang)
    return template.format(**values) if values else template


def other_lang(langs: Sequence[Lang]) -> tuple[Lang, ...]:
    """What the language switch shows: the other language alone (one-language answer), else both reversed."""
    first: Lang = "ko" if langs[0] == "en" else "en"
    return (first,) if len(langs) == 1 else (first, langs[0])


# -- button values --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Runner:
    """A runner-up of a match: case id, tier and score."""

    case_id: str
    tier: str
    score: int


@dataclass(frozen=True)
class ButtonPayload:
    """What a button value says, validated. ``reply_id`` is None on posted messages (the click's
    ``channel`` and ``message_ts`` find the reply then); ``langs`` is the order the message shows."""

    case_id: str
    langs: tuple[Lang, ...]
    reply_id: int | None = None
    tier: str | None = None
    score: int | None = None
    runners: tuple[Runner, ...] = ()
    named: tuple[str, ...] = ()  # the other case ids the answer named next to the best one
    evidence: Evidence | None = None
    suspects: str | None = None
    fills: tuple[tuple[str, str], ...] = ()
    share: bool = False  # the message also offered "Share in channel" (kept when replaced in place)
    lines: tuple[str, ...] = ()  # the paste's lines a confirmation stores, redacted (bot.matching.examples)
    reported: bool = False  # the suspects only reported the failure (a stalled collective)


def _dump(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _inert(value: str, limit: int) -> str:
    """Pasted text as it travels in a value: mrkdwn-escaped (so no payload ever holds a live mention
    like ``<!channel>``), cut to ``limit`` without splitting an entity. :func:`_plain` undoes it."""
    return truncate(escape_mrkdwn(value), limit)


def _plain(value: str | None) -> str | None:
    return unescape_mrkdwn(value) if value is not None else None


def _core(result: MatchResult, langs: Sequence[Lang], reply_id: int | None) -> dict[str, Any] | None:
    best = result.best
    if best is None or len(best.case_id) > _CASE_ID_CHARS:
        return None
    core: dict[str, Any] = {"v": _VERSION, "c": best.case_id, "l": langs[0]}
    if len(langs) == 1:
        core["m"] = 1  # one language only (a saved en or ko)
    if reply_id is not None:
        core["r"] = reply_id
    return core


def lines_value(lines: Sequence[str], budget: int = _LINES_BUDGET) -> list[str]:
    """Lines as they travel in a value: inert, cut, and within ``budget`` characters in all."""
    kept: list[str] = []
    used = 0
    for line in lines[:LINES]:
        inert = _inert(line, LINE_CHARS)
        if used + len(inert) > budget:
            break
        kept.append(inert)
        used += len(inert)
    return kept


def pick_value(case_id: str, lang: Lang, reply_id: int, lines: Sequence[str]) -> str | None:
    """The value of an "It was this one" button (or "Save as an example"): the case, the reply and the
    lines."""
    if len(case_id) > _CASE_ID_CHARS:
        return None
    data: dict[str, Any] = {"v": _VERSION, "c": case_id, "l": lang, "r": reply_id}
    shown = lines_value(lines)
    if shown:
        data["x"] = shown
    return _fit(data, ["x"])


def _with_lines(core: dict[str, Any], lines: Sequence[str]) -> str | None:
    carried = lines_value(lines)
    return _fit({**core, "x": carried} if carried else core, ["x"])


def _fit(data: dict[str, Any], optional: Sequence[str]) -> str | None:
    """``data`` as a value, dropping ``optional`` keys in order until it fits; None if it never does."""
    data = dict(data)
    value = _dump(data)
    for key in optional:
        if len(value) <= VALUE_LIMIT:
            break
        data.pop(key, None)
        value = _dump(data)
    return value if len(value) <= VALUE_LIMIT else None


def match_buttons(
    result: MatchResult,
    langs: Sequence[Lang],
    *,
    reply_id: int | None = None,
    share: bool = False,
    lines: Sequence[str] = (),
    paste: Sequence[str] = (),
) -> list[Button]:
    """The buttons for a match reply: Details (the full case, privately), Helpful, Not this case, Other
    matches (when there are runner-ups) and the language switch. Empty when the result names no case.
    Helpful and Other matches carry ``lines`` (what a vote may keep), Not this case ``paste`` (a draft's)."""
    core = _core(result, langs, reply_id)
    best = result.best
    if core is None or best is None:
        return []
    lang = langs[0]
    shown = result.matches[1 : 1 + MAX_RUNNERS]
    runners = [[m.case_id, m.tier.value, m.score] for m in shown if len(m.case_id) <= _CASE_ID_CHARS]
    carried = lines_value(lines)
    voted = _with_lines(core, lines) or _dump(core)
    known = list(result.suspects.fills.items())[:_FILLS] if result.suspects is not None else []
    filled = {_inert(k, _FILL_CHARS): _inert(v, _FILL_CHARS) for k, v in known}
    details = _fit({**core, "f": filled} if filled else core, ["f"])
    buttons = [
        Button(
            action_id=ACTION_DETAILS,
            text=text("details", lang),
            value=details or voted,
        ),
        Button(action_id=ACTION_HELPFUL, text=text("helpful", lang), value=voted, style="primary"),
        Button(action_id=ACTION_NOT_THIS, text=text("not_this", lang), value=_with_lines(core, paste) or voted),
    ]
    if runners:
        with_lines = {**core, "o": runners, "x": carried} if carried else {**core, "o": runners}
        others = _fit(with_lines, ["x", "o"])
        if others is not None:
            buttons.append(Button(action_id=ACTION_OTHERS, text=text("others", lang), value=others))
    full: dict[str, Any] = {**core, "t": best.tier.value, "s": best.score}
    if runners:
        full["o"] = runners
    named = [cid for cid in result.reply_case_ids if cid != best.case_id and len(cid) <= _CASE_ID_CHARS][:3]
    if named:
        full["a"] = named
    if best.evidence:
        ev = best.evidence[0]
        # What it matched travels in words (the note), as the reply shows it: never the pattern.
        full["e"] = [_inert(ev.line, _EVIDENCE_LINE), ev.line_no, _inert(ev.note, _EVIDENCE_MATCHED), ev.count]
    suspects = result.suspects
    if suspects is not None and suspects.summary:
        full["u"] = _inert(suspects.summary, _SUSPECTS)
    if suspects is not None and suspects.fills:
        fills = list(suspects.fills.items())[:_FILLS]
        full["f"] = {_inert(k, _FILL_CHARS): _inert(v, _FILL_CHARS) for k, v in fills}
    if share:
        full["h"] = 1
    if suspects is not None and not suspects.failed:
        full["k"] = 1
    if carried:
        full["x"] = carried
    switch = _fit(full, ["x", "f", "u", "e", "a", "o"])
    if switch is not None:
        buttons.append(Button(action_id=ACTION_LANG, text=text("switch", lang), value=switch))
    return buttons


def _int(value: object, low: int, high: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return None
    return value


def _str(value: object, limit: int, *, empty: bool = False) -> str | None:
    if not isinstance(value, str) or len(value) > limit or (not empty and not value.strip()):
        return None
    return value


class _Invalid(Exception):
    """A value that is not exactly what :func:`match_buttons` writes."""


_T = TypeVar("_T")


def _need(value: _T | None) -> _T:
    if value is None:
        raise _Invalid
    return value


def _runners(raw: object) -> tuple[Runner, ...]:
    if not isinstance(raw, list) or len(raw) > MAX_RUNNERS:
        raise _Invalid
    out = []
    for item in raw:
        if not isinstance(item, list) or len(item) != 3 or item[1] not in _TIERS:
            raise _Invalid
        out.append(Runner(_need(_str(item[0], _CASE_ID_CHARS)), str(item[1]), _need(_int(item[2], 0, 100))))
    return tuple(out)


def _evidence(raw: object) -> Evidence:
    if not isinstance(raw, list) or len(raw) != 4:
        raise _Invalid
    line = _need(_plain(_str(raw[0], _EVIDENCE_LINE, empty=True)))
    note = _need(_plain(_str(raw[2], _EVIDENCE_MATCHED, empty=True)))
    line_no = _need(_int(raw[1], -(10**9), 10**9))
    count = _need(_int(raw[3], 1, 10**9))
    return Evidence(line=line, line_no=line_no, matched="", kind="signature", count=count, note=note)


def _flag(data: Mapping[str, Any], key: str) -> bool:
    value = data.get(key, 0)
    if value not in (0, 1) or isinstance(value, bool):
        raise _Invalid
    return bool(value == 1)


def _fills(raw: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, dict) or len(raw) > _FILLS:
        raise _Invalid
    pairs = []
    for key, value in raw.items():
        pairs.append((_need(_plain(_str(key, _FILL_CHARS))), _need(_plain(_str(value, _FILL_CHARS, empty=True)))))
    return tuple(pairs)


def _lines(raw: object) -> tuple[str, ...]:
    if not isinstance(raw, list) or len(raw) > LINES:
        raise _Invalid
    return tuple(_need(_plain(_str(line, LINE_CHARS))) for line in raw)


_KEYS = frozenset({"v", "c", "l", "m", "r", "t", "s", "o", "a", "e", "u", "f", "h", "x", "k"})


def parse_value(value: object) -> ButtonPayload | None:
    """The payload of a button value written by :func:`match_buttons`; None for anything else (wrong
    type, too long, not JSON, unknown version or keys, out-of-range numbers). Never raises."""
    if not isinstance(value, str) or not value or len(value) > VALUE_LIMIT:
        return None
    try:
        data = json.loads(value)
        if not isinstance(data, dict) or data.get("v") != _VERSION or not set(data) <= _KEYS:
            return None
        lang = data.get("l")
        if lang not in ("en", "ko"):
            return None
        first: Lang = "en" if lang == "en" else "ko"
        langs: tuple[Lang, ...] = (first,) if _flag(data, "m") else (first, "ko" if first == "en" else "en")
        reply_id = _need(_int(data["r"], 1, 2**62)) if "r" in data else None
        tier = data.get("t")
        if tier is not None and tier not in _TIERS:
            return None
        score = _need(_int(data["s"], 0, 100)) if "s" in data else None
        named = data.get("a", [])
        if not isinstance(named, list) or len(named) > 3:
            return None
        return ButtonPayload(
            case_id=_need(_str(data.get("c"), _CASE_ID_CHARS)),
            langs=langs,
            reply_id=reply_id,
            tier=str(tier) if tier is not None else None,
            score=score,
            runners=_runners(data["o"]) if "o" in data else (),
            named=tuple(_need(_str(cid, _CASE_ID_CHARS)) for cid in named),
            evidence=_evidence(data["e"]) if "e" in data else None,
            suspects=_need(_plain(_str(data["u"], _SUSPECTS))) if "u" in data else None,
            fills=_fills(data["f"]) if "f" in data else (),
            share=_flag(data, "h"),
            lines=_lines(data["x"]) if "x" in data else (),
            reported=_flag(data, "k"),
        )
    except (_Invalid, ValueError, TypeError, RecursionError):
        return None


def _count(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None


def rebuild_result(payload: ButtonPayload, cases: Mapping[str, Case]) -> MatchResult | None:
    """The match a language-switch value describes, with titles from the library; None when the best
    case is not in the library (any more) or the value carries no tier. Runner-ups that left the
    library are dropped."""
    best_case = cases.get(payload.case_id)
    if best_case is None or payload.tier is None:
        return None

    def match(case: Case, tier: str, score: int, evidence: list[Evidence]) -> Match:
        return Match(
            case_id=case.id,
            title=case.title,
            failure_class=case.failure_class,
            score=score,
            tier=Tier(tier),
            evidence=evidence,
        )

    best = match(best_case, payload.tier, payload.score or 0, [payload.evidence] if payload.evidence else [])
    runners = [match(cases[r.case_id], r.tier, r.score, []) for r in payload.runners if r.case_id in cases]
    suspects = None
    if payload.suspects or payload.fills:
        # The details the suspects line shows in either language, from the values the commands were filled
        # with (the summary alone is English).
        fills = dict(payload.fills)
        rank, gpu = (_count(fills.get(key, "")) for key in ("rank", "gpu"))
        suspects = SuspectInfo(
            failed=not payload.reported,
            summary=payload.suspects or "",
            fills=fills,
            hosts={host: 1 for host in fills.get("node", "").split(",") if host},
            ranks=[rank] if rank is not None else [],
            pci=[fills["pci"]] if "pci" in fills else [],
            gpus=[gpu] if gpu is not None else [],
            jobs=[fills["job"]] if "job" in fills else [],
            collective=payload.reported,
        )
    named = [cid for cid in payload.named if cid in cases]
    return MatchResult(matches=[best, *runners], reply=True, reply_case_ids=[best.case_id, *named], suspects=suspects)


# -- attaching buttons ----------------------------------------------------------------------------------


def button_element(button: Button) -> dict[str, Any]:
    """One Block Kit button within its limits (text 75, value 2,000)."""
    element: dict[str, Any] = {
        "type": "button",
        "action_id": button.action_id,
        "text": {"type": "plain_text", "text": cut(" ".join(button.text.split()) or "-", BUTTON_TEXT_LIMIT)},
        "value": button.value[:VALUE_LIMIT],
    }
    if button.style:
        element["style"] = button.style
    return element


def with_buttons(reply: Reply, buttons: Sequence[Button], *, first: bool = False) -> Reply:
    """``reply`` with ``buttons`` in its trailing actions block (added when it has none), before the
    buttons already there with ``first``. Stays within 50 blocks and 25 elements per actions block;
    returns ``reply`` itself when there is nothing to add."""
    if not buttons:
        return reply
    elements = [button_element(b) for b in buttons]
    blocks = list(reply.blocks)
    if blocks and blocks[-1].get("type") == "actions":
        existing = list(blocks[-1].get("elements") or [])
        merged = [*elements, *existing] if first else [*existing, *elements]
        blocks[-1] = {**blocks[-1], "elements": merged[:ACTIONS_ELEMENTS]}
    else:
        blocks = [*blocks[: MESSAGE_BLOCKS - 1], {"type": "actions", "elements": elements[:ACTIONS_ELEMENTS]}]
    return reply.model_copy(update={"blocks": blocks})
