"""The first reply to a recognised paste: one screen, action first. Pure.

From the top: the verdict (case, title, how sure, in words), the matched line once with its line number and
what it matched in words, the suspects, the runbook's first steps with their commands filled, and a
one-line "why". Each line is in the reader's language with the other right under it in smaller type (a
context block), so both languages are there without doubling the length. At most ``MAX_LINES`` non-empty
lines of text and ``MAX_CHARS`` characters: what does not fit is dropped from the bottom of the list of
optional parts (the other language's "why", the other language's note on the matched line, the reader's
"why", the other language's steps, the third step, ...). The story, lessons and full
remediation are one click away ("Details").
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.model.case import Case, Lang, Localized, RunbookStep
from bot.model.results import Evidence, Match, MatchResult, NodeEvent, SuspectInfo
from bot.replies.labels import label, tier_text
from bot.replies.mrkdwn import escape_mrkdwn
from bot.replies.nodes import repeat_text

MAX_LINES = 15
MAX_CHARS = 2000
STEPS_SHOWN = 3
_SAFE_VALUE = re.compile(r"^[A-Za-z0-9._:,@%+=/-]{1,200}$")
_PLACEHOLDER = re.compile(r"\{(node|pci|gpu|rank|job)\}")
# Where several failing hosts fill {node} as a list: keeping them all out (a drain, an exclude) and
# checking that their jobs have left (squeue -w). Every other step acts on one node, the first.
_EXCLUDE = re.compile(r"(?:--exclude[= ]|\s-x ?)$")


def _keeps_list(template: str, at: int) -> bool:
    before = template[:at]
    if _EXCLUDE.search(before):
        return True
    if before.endswith("nodename=") and "state=drain" in template:
        return True
    return template.lstrip().startswith("squeue") and before.endswith(("-w ", "-w"))


_TIER_MARK = {"exact": "🔴", "strong": "🟠", "weak": "⚪"}
_FAILURE_CHARS = 140  # line 1: what failed
# An unfilled placeholder, as the reader sees it: what to write there.
UNFILLED = {"node": "NODE", "pci": "PCI", "gpu": "GPU", "rank": "RANK", "job": "JOBID"}
_TITLE_CHARS = 150  # the case's title under it
_DRAIN = re.compile(r"state=drain|kubectl (?:drain|cordon)\b")  # Slurm, Kubernetes
_SENTENCE = re.compile(r"(?<=[.!?。다])\s+")


@dataclass
class Line:
    """One block of the reply: ``kind`` section or context; ``text`` mrkdwn; ``plain`` for the console."""

    text: str
    plain: str
    kind: str = "section"

    @property
    def lines(self) -> int:
        return sum(1 for line in self.text.split("\n") if line.strip())


def fill_command(template: str, values: dict[str, str]) -> str:
    """``template`` with each known placeholder filled from ``values`` when the value is made of safe
    characters, shell-quoted; any other is shown as what to write there (``NODE``, ``PCI``, ``JOBID``).
    Several failing hosts fill ``{node}``
    as a comma list only where all of them belong (a drain, an exclude, ``squeue -w``); a step that acts on
    one node (ssh, a reboot, a resume, ``srun -w … -N1``) gets the first, and ``{gpu}``/``{pci}`` stay for
    the reader to fill."""

    several = "," in values.get("node", "")

    def value(found: re.Match[str]) -> str:
        name = found.group(1)
        filled = values.get(name)
        if filled is None or not _SAFE_VALUE.match(filled) or (several and name in ("gpu", "pci")):
            return UNFILLED[name]  # with several hosts, a GPU may be any host's: the reader fills it
        if name == "node" and several and not _keeps_list(template, found.start()):
            filled = filled.split(",", 1)[0]  # the steps that act on one node take the first
        return shlex.quote(filled)

    return _PLACEHOLDER.sub(value, template)


def _other(langs: Sequence[Lang]) -> Lang | None:
    return langs[1] if len(langs) > 1 else None


def _title(case: Case, lang: Lang) -> str:
    return case.title.get(lang) or case.title.get("en") or case.title.get("ko") or case.id


def evidence_words(evidence: Evidence, lang: Lang, case: Case | None = None) -> str:
    """What the line matched, in words: the signature's note in ``lang`` (its Korean note from ``case``,
    found by the English note the evidence carries), never a pattern."""
    if evidence.kind == "signature" and evidence.note:
        if lang == "ko" and case is not None:
            for signature in case.signatures:
                if signature.note_ko and " ".join((signature.note or "").split()) == evidence.note:
                    return " ".join(signature.note_ko.split())
        return evidence.note
    if evidence.kind == "signature":
        return label("evidence.signature", lang)
    if evidence.kind == "example":
        return label("evidence.example", lang)
    return label("evidence.text", lang)


def failure_words(case: Case, best: Match, lang: Lang) -> str:
    """What failed, in plain words in ``lang``: the matched line's note, else the case's gist, else its
    title (a story about someone else's cluster, the last resort)."""
    first = best.evidence[0] if best.evidence else None
    if first is not None and first.kind == "signature" and first.note:
        return evidence_words(first, lang, case)
    if case.gist is not None and case.gist.get(lang):
        return first_sentence(case.gist, lang, _FAILURE_CHARS)
    return _cut(_title(case, lang), _FAILURE_CHARS)


def names_the_line(best: Match) -> bool:
    """Whether line 1 already says what the matched line means (its signature's note)."""
    return bool(best.evidence) and best.evidence[0].kind == "signature" and bool(best.evidence[0].note)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def verdict(case: Case, best: Match, named: Sequence[str], langs: Sequence[Lang]) -> list[Line]:
    """Line 1 names the failure in the reader's language, then the case id and how sure; the other
    language under it (the title comes last: ``title_line``)."""
    lang = langs[0]
    tier = best.tier.value
    also = f" · {label('also.named', lang)} {', '.join(named)}" if named else ""
    failure = failure_words(case, best, lang)
    failure = failure[:1].upper() + failure[1:] if lang == "en" else failure
    mark = _TIER_MARK.get(tier, "")
    lines = [
        Line(
            f"{mark} *{escape_mrkdwn(failure)}* · {escape_mrkdwn(case.id)} — _{tier_text(tier, lang)}_"
            f"{escape_mrkdwn(also)}",
            f"{failure} · {case.id} — {tier_text(tier, lang)}{also}",
        )
    ]
    other = _other(langs)
    if other:
        said = f"{failure_words(case, best, other)} — {tier_text(tier, other)}"
        lines.append(Line(escape_mrkdwn(said), f"  {said}", "context"))
    if case.title.get(lang) is None:  # the library has this case only in the other language
        missing = label("missing", lang)
        lines.append(Line(escape_mrkdwn(missing), f"  {missing}", "context"))
    return lines


def title_line(case: Case, langs: Sequence[Lang]) -> list[Line]:
    """The case's title in the reader's language (else the other), cut to one line: shown last, when it
    fits (it tells someone else's story; line 1 already says what failed here)."""
    title = case.title.get(langs[0]) or next((case.title.get(lang) for lang in langs[1:] if case.title.get(lang)), None)
    shown = _cut(title or label("missing", langs[0]), _TITLE_CHARS)
    return [Line(escape_mrkdwn(f"{case.id}: {shown}"), f"  {case.id}: {shown}", "context")]


def evidence(best: Match, langs: Sequence[Lang], case: Case | None = None) -> list[Line]:
    """The matched line once, with its line number and what it matched in the reader's language."""
    if not best.evidence:
        return []
    lang = langs[0]
    ev = best.evidence[0]
    times = f" · ×{ev.count:,}" if ev.count > 1 else ""
    where = (
        label("line", lang).format(n=f"{ev.line_no:,}")
        if ev.line_no > 0
        else label("line.end", lang).format(n=f"{-ev.line_no:,}")
    )
    line = ev.line if len(ev.line) <= 300 else ev.line[:299] + "…"
    about = "" if names_the_line(best) else f" · {evidence_words(ev, lang, case)}"
    return [
        Line(
            f"> {escape_mrkdwn(line)}\n_{escape_mrkdwn(where)}{times}{escape_mrkdwn(about)}_",
            f"> {line}\n  {where}{times}{about}",
        )
    ]


def evidence_other(best: Match, langs: Sequence[Lang], case: Case | None = None) -> list[Line]:
    """What the line matched in the other language, in small type (only when it says something else)."""
    other = _other(langs)
    if other is None or not best.evidence or names_the_line(best):
        return []  # line 1 and the line under it already say it in both languages
    first, second = (evidence_words(best.evidence[0], lang, case) for lang in (langs[0], other))
    return [Line(f"_{escape_mrkdwn(second)}_", f"  {second}", "context")] if second != first else []


def suspects_text(info: SuspectInfo, lang: Lang) -> str:
    """``Failed on gpu-b07 · rank 29 · GPU PCI 0000:3b:00`` in ``lang`` (the summary as written when the
    details are not known, as after a language switch)."""
    bits: list[str] = []
    if info.hosts:
        hosts = ", ".join(f"{host} ×{count}" if count > 1 else host for host, count in list(info.hosts.items())[:4])
        bits.append(label("suspects.failed" if info.failed else "suspects.reported", lang).format(hosts=hosts))
    if info.ranks:
        bits.append("rank " + ", ".join(str(r) for r in info.ranks[:4]))
    elif info.local_ranks:
        bits.append("local rank " + ", ".join(str(r) for r in info.local_ranks[:4]))
    if info.pci:
        bits.append("GPU PCI " + ", ".join(info.pci[:3]))
    elif info.gpus:
        bits.append("GPU " + ", ".join(str(g) for g in info.gpus[:4]))
    if info.jobs:
        bits.append(label("suspects.job", lang).format(job=", ".join(info.jobs[:2])))
    if info.collective and not info.failed:
        bits.append(label("suspects.collective", lang))
    return " · ".join(bits) if bits else info.summary


def suspects(
    info: SuspectInfo | None,
    langs: Sequence[Lang],
    history: Mapping[str, Sequence[NodeEvent]] | None = None,
    now_class: str = "",
) -> list[Line]:
    if info is None or not (info.summary or info.hosts):
        return []
    first = suspects_text(info, langs[0])
    lines = [Line(escape_mrkdwn(first), first)]
    for host, earlier in list((history or {}).items())[:2]:
        if earlier:
            md, plain = repeat_text(host, earlier, langs[0], now_class, counted=info.failed)
            lines.append(Line(f"⚠️ {md}", f"! {plain}"))
    other = _other(langs)
    if other:
        second = suspects_text(info, other)
        if second != first:
            lines.append(Line(escape_mrkdwn(second), f"  {second}", "context"))
    return lines


def fitting_steps(case: Case, result: MatchResult) -> list[RunbookStep]:
    """The steps of ``case``'s runbook that fit ``result`` (whose best match is ``case``): a step with
    ``applies_when`` only when the paste names one of its Xid codes or hit one of its signatures."""
    best = result.matches[0] if result.matches and result.matches[0].case_id == case.id else None
    patterns = {evidence.matched for evidence in best.evidence} if best else set()
    hit = {number for number, signature in enumerate(case.signatures) if signature.pattern in patterns}
    xids = set(result.xids)
    return [
        step
        for step in case.runbook
        if step.applies_when is None or xids & set(step.applies_when.xid) or hit & set(step.applies_when.signatures)
    ]


def chosen_steps(
    case: Case, fills: dict[str, str], drain_first: bool = False, runbook: Sequence[RunbookStep] | None = None
) -> list[RunbookStep]:
    """The first steps of ``runbook`` (the case's whole runbook by default; the first reply passes the
    steps that fit the paste); when the paste names the node and none of them uses it, the first step that
    does takes the last place (the reader should see the node in a command). With ``drain_first`` (the
    node failed before) the drain step comes first."""
    runbook = list(case.runbook if runbook is None else runbook)
    if drain_first:
        drain = next((s for s in runbook if s.command and _DRAIN.search(s.command)), None)
        if drain is not None:
            runbook = [drain, *(s for s in runbook if s is not drain)]
    steps = runbook[:STEPS_SHOWN]
    if "node" in fills and not any(s.command and "{node}" in s.command for s in steps):
        with_node = next((s for s in runbook if s.command and "{node}" in s.command), None)
        if with_node is not None:
            steps = [*steps[: STEPS_SHOWN - 1], with_node]
    return steps


def steps(
    case: Case,
    fills: dict[str, str],
    langs: Sequence[Lang],
    count: int,
    drain_first: bool = False,
    runbook: Sequence[RunbookStep] | None = None,
    history: Mapping[str, Sequence[NodeEvent]] | None = None,
) -> list[Line]:
    """The "do now" block with the first ``count`` chosen steps in the reader's language, commands filled,
    and the same steps in the other language right under it in small type (one line). When node memory
    knows the node, its count and earlier threads come right before the first command that acts on it."""
    shown = chosen_steps(case, fills, drain_first, runbook)[:count]
    if not shown:
        return []
    md = [f"*{escape_mrkdwn(label('do_now', langs[0]))}*"]
    plain = [label("do_now", langs[0])]
    host = fills.get("node", "").split(",")[0]
    earlier = (history or {}).get(host) or ()
    told = False
    for number, step in enumerate(shown, start=1):
        step_md, step_plain = step_lines(number, step, langs[:1], fills)
        if earlier and not told and step.command and "{node}" in step.command:
            told = True
            said_md, said_plain = repeat_text(host, earlier, langs[0], case.failure_class or "")
            step_md.insert(1, f"↳ _{said_md}_")
            step_plain.insert(1, f"   ↳ {said_plain}")
        md += step_md
        plain += step_plain
    if any(step.command and "NODE" in fill_command(step.command, fills) for step in shown):
        hint = label("hint.node", langs[0]).format(job=fills.get("job", "JOBID"))
        md.append(f"_{escape_mrkdwn(hint)}_")
        plain.append(f"  {hint}")
    block = [Line("\n".join(md), "\n".join(plain))]
    other = _other(langs)
    texts = [step.text.get(other) for step in shown] if other else []
    if other and all(texts):
        said = f"{label('do_now', other)}: " + " · ".join(f"{n}. {t}" for n, t in enumerate(texts, start=1))
        block.append(Line(escape_mrkdwn(said), f"  {said}", "context"))
    return block


def step_lines(
    number: int, step: RunbookStep, langs: Sequence[Lang], fills: dict[str, str], indent: str = ""
) -> tuple[list[str], list[str]]:
    """One runbook step in ``langs[0]`` (and ``langs[1]`` after it, when given) and its command filled, as
    (mrkdwn lines, plain lines)."""
    first = step.text.get(langs[0]) or step.text.get("en") or ""
    second = step.text.get(langs[1]) if len(langs) > 1 else None
    md = [f"{indent}{number}. {escape_mrkdwn(first)}" + (f" · _{escape_mrkdwn(second)}_" if second else "")]
    plain = [f"{indent}{number}. {first}" + (f" · {second}" if second else "")]
    if step.command:
        command = fill_command(step.command, fills)
        md.append(f"{indent}{'    ' if indent else ''}`{escape_mrkdwn(command)}`")
        plain.append(f"{indent}   $ {command}")
    return md, plain


def first_sentence(text: Localized, lang: Lang, limit: int = 220, *, whole: bool = False) -> str:
    """The first sentence of ``text`` in ``lang`` (all of it with ``whole``), cut at ``limit``."""
    value = " ".join((text.get(lang) or "").split())
    if not value:
        return ""
    sentence = value if whole else _SENTENCE.split(value, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def why(case: Case, langs: Sequence[Lang]) -> list[Line]:
    """The cause in one line: the case's ``gist``, else the first sentence of its summary."""
    gist = case.gist is not None and bool(case.gist.langs())
    source = case.gist if case.gist is not None and gist else case.summary
    lines = []
    first = first_sentence(source, langs[0], whole=gist)
    if first:
        text = f"{label('why', langs[0])}: {first}"
        lines.append(Line(escape_mrkdwn(text), text))
    other = _other(langs)
    second = first_sentence(source, other, whole=gist) if other else ""
    if second:
        lines.append(Line(escape_mrkdwn(second), f"  {second}", "context"))
    return lines


def _size(parts: Sequence[Line]) -> tuple[int, int]:
    return sum(part.lines for part in parts), sum(len(part.text) for part in parts)


def _fits(parts: Sequence[Line]) -> bool:
    lines, chars = _size(parts)
    return lines <= MAX_LINES and chars <= MAX_CHARS


def first_reply_lines(
    result: MatchResult,
    case: Case,
    langs: Sequence[Lang],
    notes: str = "",
    fills: dict[str, str] | None = None,
    history: Mapping[str, Sequence[NodeEvent]] | None = None,
    lead: Sequence[Line] = (),
) -> list[Line]:
    """The blocks of the first reply to ``result`` (whose best match is ``case``), in order: ``lead`` (the
    job's own error, when it is the cause), the head (verdict, evidence, suspects), as many steps as fit,
    the "why" lines that still fit, the notes."""
    best = result.matches[0]
    named = [cid for cid in result.reply_case_ids if cid != best.case_id]
    fills = fills or {}
    # Drain first only when the host failed now too (a host that only reported is not drained for it).
    failed = result.suspects is not None and result.suspects.failed
    again = failed and any(history.values()) if history else False
    found = suspects(result.suspects, langs, history, case.failure_class or "")
    head = [*lead, *verdict(case, best, named, langs), *evidence(best, langs, case), *found]
    note = [Line(f"_{escape_mrkdwn(notes)}_", notes, "context")] if notes else []
    core = head
    reasons = why(case, langs)
    # As many steps as fit with the "why" in the reader's language kept, with their other-language line
    # if it fits too, else without it.
    tries = [(count, whole) for count in range(STEPS_SHOWN, 0, -1) for whole in (True, False)]
    fitting = fitting_steps(case, result)
    for count, whole in tries:
        block = steps(case, fills, langs, count, drain_first=again, runbook=fitting, history=history)
        block = block if whole else block[:1]
        if block and _fits([*head, *block, *reasons[:1], *note]):
            core = [*head, *block]
            break
    # Then, while they fit: the "why" in the reader's language, what the line matched in the other
    # language (under the matched line), the "why" in the other language, the case's title.
    wanted = [
        (reasons[:1], []),
        ([], evidence_other(best, langs, case)),
        (reasons[1:], []),
        (title_line(case, langs), []),
    ]
    below: list[Line] = []
    under: list[Line] = []
    for more_below, more_under in wanted:
        if _fits([*core, *under, *more_under, *below, *more_below, *note]):
            below += more_below
            under += more_under
    at = len(head) - len(found)
    return [*core[:at], *under, *core[at:], *below, *note]
