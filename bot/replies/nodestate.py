"""Pure: one line per named node, from the scheduler's answer, for the reply and ``/incident nodes``.

``gpu-a17: drained · reason: Xid 79 — IL-0415 (set by alice, at 2026-12-03 03:12 UTC) · no job running``.
Every part a person or the scheduler wrote (the node name, the reason, the user) is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.model.case import Lang
from bot.model.nodestate import Lookup, NodeState
from bot.replies.blocks import context
from bot.replies.catalog import text
from bot.replies.mrkdwn import escape_mrkdwn

_REASON_CHARS = 160


def _one_line(value: str, limit: int) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def state_text(state: NodeState, lang: Lang) -> str:
    parts = [text(f"sched.state.{state.state}", lang)]
    if state.not_responding:
        parts.append(text("sched.not_responding", lang))
    if state.reason:
        said = text("sched.reason", lang, reason=_one_line(state.reason, _REASON_CHARS))
        who = []
        if state.reason_by:
            who.append(text("sched.reason.by", lang, by=_one_line(state.reason_by, 40)))
        if state.reason_at:
            who.append(text("sched.reason.at", lang, at=f"{state.reason_at:%Y-%m-%d %H:%M} UTC"))
        parts.append(f"{said} ({', '.join(who)})" if who else said)
    if state.jobs:
        parts.append(text("sched.jobs", lang, n=state.jobs, users=len(state.users)))
    else:
        parts.append(text("sched.no_jobs", lang))
    if state.failed_24h:
        parts.append(text("sched.failed", lang, n=state.failed_24h))
    return " · ".join(parts)


def node_lines(hosts: Sequence[str], lookup: Lookup, lang: Lang) -> list[str]:
    """Plain text, one line per host, in the order given."""
    if lookup.error is not None:
        return [f"{host}: {text('sched.unreachable', lang)}" for host in hosts]
    lines = []
    for host in hosts:
        state = lookup.states.get(host)
        said = text("sched.unknown_node", lang) if state is None else state_text(state, lang)
        lines.append(f"{host}: {said}")
    return lines


def node_block(hosts: Sequence[str], lookup: Lookup, langs: Sequence[Lang]) -> tuple[dict[str, Any], str]:
    """A context block under the reply (mrkdwn, every part escaped) and its plain text."""
    lang = langs[0]
    heading = text("sched.heading", lang)
    lines = node_lines(hosts, lookup, lang)
    md = f"*{escape_mrkdwn(heading)}*\n" + "\n".join(escape_mrkdwn(line) for line in lines)
    plain = f"{heading}\n" + "\n".join(lines)
    return context(md), plain
