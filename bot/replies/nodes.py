"""Pure: what the reply, ``/incident nodes``, App Home and the digest say about hosts that failed again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from bot.model.case import Lang
from bot.model.nodestate import ActionRecord, Lookup
from bot.model.results import NodeEvent, Reply
from bot.replies.blocks import header, section
from bot.replies.catalog import text
from bot.replies.drain import action_lines
from bot.replies.mrkdwn import escape_mrkdwn, fallback, link
from bot.replies.nodestate import node_block


def words(key: str, lang: Lang, **values: object) -> str:
    return text(f"nodes.{key}", lang, **values)


def thread_link(event: NodeEvent) -> str | None:
    """The answered message in its channel (not a DM, not a private answer)."""
    if not event.ts or not event.channel or event.channel.startswith("D"):
        return None
    return f"https://slack.com/archives/{event.channel}/p{event.ts.replace('.', '')}"


def repeat_text(
    host: str, earlier: Sequence[NodeEvent], lang: Lang, now_class: str = "", *, counted: bool = True
) -> tuple[str, str]:
    """``gpu-b07 failed 3 times since Mon 30 Nov (gpu-memory-ecc ×2, …)`` (with ``counted``, this failure,
    of class ``now_class``, counted too: not when the host only reported it) and links to the earlier
    threads, as (mrkdwn, plain)."""
    since = min(e.created_at for e in earlier)
    classes = [e.failure_class or e.case_id for e in earlier] + ([now_class] if now_class and counted else [])
    kinds = ", ".join(f"{name} ×{count}" for name, count in Counter(classes).most_common(3))
    day = f"{since.month}월 {since.day}일" if lang == "ko" else f"{since:%a %d %b}"
    times = len(earlier) + (1 if counted else 0)
    key = "repeat" if times > 1 else "repeat.once"
    said = words(key, lang, host=host, n=times, since=day, kinds=kinds)
    links = [(str(number), url) for number, e in enumerate(earlier[:3], start=1) if (url := thread_link(e))]
    md = escape_mrkdwn(said)
    plain = said
    if links:
        md += f" · {escape_mrkdwn(words('earlier', lang))}: " + " ".join(link(url, label) for label, url in links)
        plain += f" · {words('earlier', lang)}: " + " ".join(url for _, url in links)
    return md, plain


def host_lines(
    repeated: Sequence[tuple[str, Sequence[NodeEvent]]],
    lang: Lang,
    limit: int = 10,
    linked: Callable[[NodeEvent], bool] = lambda _event: True,
) -> list[tuple[str, str]]:
    """One (mrkdwn, plain) line per host: the count, the cases, the newest threads of those events
    ``linked`` allows (a channel's readers get links into that channel only; the digest and App Home none)."""
    out = []
    for host, events in repeated[:limit]:
        cases = ", ".join(dict.fromkeys(e.case_id for e in events))
        newest = f"{events[0].created_at:%Y-%m-%d %H:%M}"
        links = [url for e in events[:3] if linked(e) and (url := thread_link(e))]
        plain = f"{host} ×{len(events)} · {cases} · {newest}" + (f" · {' '.join(links)}" if links else "")
        md = f"• *{escape_mrkdwn(host)}* ×{len(events)} · {escape_mrkdwn(cases)} · {escape_mrkdwn(newest)}"
        if links:
            md += " · " + " ".join(link(url, str(n)) for n, url in enumerate(links, start=1))
        out.append((md, plain))
    return out


def nodes_reply(
    repeated: Sequence[tuple[str, Sequence[NodeEvent]]],
    days: int,
    langs: Sequence[Lang],
    channel: str | None = None,
    now: Lookup | None = None,
    actions: Sequence[ActionRecord] = (),
) -> Reply:
    """``/incident nodes``: hosts that failed more than once in the window, newest first, with their cases
    and the threads of ``channel`` (where it was asked; another channel's threads are counted, not linked),
    and with a scheduler, each host's state ``now``."""
    lang = langs[0]
    heading = " / ".join(words("heading", lg) for lg in langs)
    lines = host_lines(repeated, lang, linked=lambda event: event.channel == channel)
    blocks = [header(heading)]
    plain = [heading]
    if not lines:
        none = words("none", lang, days=days)
        blocks.append(section(escape_mrkdwn(none)))
        plain.append(none)
    for start in range(0, len(lines), 10):
        part = lines[start : start + 10]
        blocks.append(section("\n".join(md for md, _ in part)))
        plain += [f"  {text}" for _, text in part]
    if now is not None and repeated:
        block, said = node_block([host for host, _ in repeated], now, langs)
        blocks.append(block)
        plain.append(said)
    if taken := action_lines(list(actions)):
        blocks.append(section("*Actions from Slack*\n" + "\n".join(md for md, _ in taken)))
        plain += ["Actions from Slack", *(f"  {text}" for _, text in taken)]
    return Reply(text=fallback(heading), blocks=blocks, plain="\n".join(plain))
