"""Cleaning pasted logs: Slack markup, size and line caps, rank/time prefixes, whitespace.

Pure and bounded: every pattern here is anchored or uses bounded quantifiers, and the work is linear in
the (capped) input. The cleaned text keeps one line per pasted line, so a hit in the cleaned text maps
back to the line the engineer pasted.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate

from bot.model.excerpt import HEAD_SHARE, Excerpt, excerpt

MAX_LINE_CHARS = 4000

_FENCE = re.compile(r"(?m)^[ \t]{0,8}```[A-Za-z]{0,20}")
_FENCE_END = re.compile(r"```[ \t]{0,8}$", re.MULTILINE)
_SLACK_LINK = re.compile(r"<((?:https?|mailto):[^|<>\s]{1,2000})(?:\|([^<>]{0,500}))?>")
_SLACK_MENTION = re.compile(r"<([@#!])([A-Za-z0-9^_-]{1,80})(?:\|([^<>]{0,200}))?>")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]{1,10000}")
_ANSI = re.compile(r"\x1b\[[0-9;]{0,20}[A-Za-z]")

# One prefix at the start of a line; stripped up to _PREFIX_ROUNDS times ("0: [rank0]:[E...] ...").
_PREFIX = re.compile(
    r"(?m)^[ \t]{0,8}(?:"
    r">{1,3}(?= )"  # a quoted line in Slack or markdown
    r"|\[(?:default|rank|Rank|RANK) ?\d{1,6}\]:?"  # [default3]: [rank3]:
    r"|\[\d{1,6},\d{1,6}\]<std(?:out|err)>:"  # mpirun --tag-output
    r"|(?:rank|RANK) ?\d{1,6}:"  # rank3:
    r"|\d{1,6}:(?=[ \t])"  # srun -l "0: "
    r"|\[?\d{4}-\d{2}-\d{2}[T _]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?\]?"  # ISO / BigScience
    r"|\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}\]"  # dmesg -T
    r"|\[ {0,8}\d{1,8}\.\d{1,9}\]"  # dmesg uptime
    r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} [\w.-]{1,64} [\w./-]{1,64}(?:\[\d{1,8}\])?:"  # syslog
    r")[ \t]{0,8}"
)
_PREFIX_ROUNDS = 4
_BLOCK_CHARS = 64 * 1024
_SPACES = re.compile(r"[ \t\r\f\v]{2,}|[\t\r\f\v]")
_EDGE_SPACES = re.compile(r"(?m)^ | $")


@dataclass(frozen=True, slots=True)
class Cleaned:
    """A paste prepared for matching.

    ``text`` is the cleaned text, one line per line of ``raw_lines``; ``raw_lines`` are the pasted lines
    after Slack unescaping and capping, for quoting back as evidence. ``numbers`` gives each kept line's
    real 1-based number in the paste (negative: counted from the end, -1 being the last line, when the
    middle was skipped without counting its lines).
    """

    text: str
    raw_lines: list[str]
    line_starts: list[int] = field(repr=False)
    numbers: list[int] = field(repr=False)
    truncated: bool = False
    skipped_bytes: int = 0
    skipped_lines: int | None = 0
    unread_bytes: int = 0
    binary: bool = False
    long_lines: int = 0  # lines longer than MAX_LINE_CHARS, kept as their head and tail

    def line_of(self, offset: int) -> int:
        """The 0-based line index holding character ``offset`` of ``text``."""
        return bisect_right(self.line_starts, offset) - 1

    def clean_line(self, line_no: int) -> str:
        start = self.line_starts[line_no]
        end = self.line_starts[line_no + 1] - 1 if line_no + 1 < len(self.line_starts) else len(self.text)
        return self.text[start:end]

    def number_of(self, index: int) -> int:
        """The real line number of kept line ``index`` (see ``numbers``)."""
        return self.numbers[index] if 0 <= index < len(self.numbers) else index + 1


def _mention_text(found: re.Match[str]) -> str:
    kind, ident, shown = found.groups()
    if shown and shown.startswith(("@", "#")):
        return shown
    return ("#" if kind == "#" else "@") + (shown or ident)


def unescape_slack(text: str) -> str:
    """Undo Slack's message encoding: links to their label or URL, mentions to plain text, entities."""
    text = _SLACK_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _SLACK_MENTION.sub(_mention_text, text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def looks_binary(data: bytes) -> bool:
    """True when the first 64 KiB hold NUL bytes or are mostly control characters."""
    sample = data[:65536]
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample if b < 9 or 13 < b < 32)
    return controls > len(sample) // 10


def _cap_line(line: str) -> tuple[str, bool]:
    if len(line) <= MAX_LINE_CHARS:
        return line, False
    half = MAX_LINE_CHARS // 2
    return f"{line[:half]} … {line[-half:]}", True


def _decode(data: bytes, binary: bool, slack_encoded: bool) -> list[str]:
    text = data.decode("utf-8", "replace")
    if binary:
        text = _CONTROL.sub(" ", text.replace("\x00", ""))
    text = _ANSI.sub("", text)
    if slack_encoded:
        text = unescape_slack(text)
    # Lines are what "\n" ends (as grep -n and editors count them); a lone "\r" (progress bars) is a space.
    return text.replace("\r\n", "\n").replace("\r", " ").split("\n")


def clean(paste: str | bytes | Excerpt, max_bytes: int, *, slack_encoded: bool = True) -> Cleaned:
    """Prepare a paste for matching. Never raises for any input.

    ``max_bytes`` caps the UTF-8 size (head and tail kept, the middle skipped and counted); an
    :class:`Excerpt` comes already cut (by a reader that never held the whole text).
    ``slack_encoded`` says the text came through Slack's message encoding (``&lt;``, ``<url|label>``).
    """
    if isinstance(paste, Excerpt):
        cut = paste if paste.size <= max_bytes else _recut(paste, max_bytes)
        if not cut.skipped_bytes and cut.tail:  # two pieces of one contiguous text
            cut = Excerpt(cut.head + cut.tail)
    else:
        cut = excerpt(paste.encode("utf-8", "replace") if isinstance(paste, str) else paste, max_bytes)
    binary = looks_binary(cut.head) or looks_binary(cut.tail)
    head_lines = _decode(cut.head, binary, slack_encoded)
    tail_lines = _decode(cut.tail, binary, slack_encoded) if cut.skipped_bytes else []
    numbers = list(range(1, len(head_lines) + 1))
    if tail_lines:
        if cut.skipped_lines is None:  # counted from the end; the empty piece after a final newline is no line
            trailing = 1 if tail_lines[-1] == "" else 0
            numbers += [*range(trailing - len(tail_lines), 0), *([0] * trailing)]
        else:
            first = len(head_lines) + cut.skipped_lines
            numbers += list(range(first, first + len(tail_lines)))
    raw_lines: list[str] = []
    kept_numbers: list[int] = []
    long_lines = 0
    # Blank lines carry nothing to match and are dropped here (``numbers`` keeps every kept line's real
    # number): a paste of two million newlines is then as cheap as an empty one.
    for line, number in zip(head_lines + tail_lines, numbers, strict=True):
        if not line or line.isspace():
            continue
        capped, was_long = _cap_line(line)
        raw_lines.append(capped)
        kept_numbers.append(number)
        long_lines += was_long
    numbers = kept_numbers
    body = "\n".join(_clean_block(block) for block in _blocks(raw_lines))
    lines = body.split("\n")
    starts = [0, *accumulate(len(line) + 1 for line in lines[:-1])]
    return Cleaned(
        text=body,
        raw_lines=raw_lines,
        line_starts=starts,
        numbers=numbers,
        truncated=cut.skipped_bytes > 0,
        skipped_bytes=cut.skipped_bytes,
        skipped_lines=cut.skipped_lines,
        unread_bytes=cut.unread_bytes,
        binary=binary,
        long_lines=long_lines,
    )


def _blocks(lines: list[str]) -> Iterator[str]:
    """Consecutive lines joined into blocks of about ``_BLOCK_CHARS``: every cleaning step is line-local,
    and a regex pass over one block is a short C call, so the thread matching a 2 MiB paste never holds
    the GIL long enough to delay the event loop's acknowledgements."""
    start, size = 0, 0
    for index, line in enumerate(lines):
        size += len(line) + 1
        if size >= _BLOCK_CHARS:
            yield "\n".join(lines[start : index + 1])
            start, size = index + 1, 0
    if start < len(lines) or not lines:
        yield "\n".join(lines[start:])


def _clean_block(block: str) -> str:
    block = _FENCE_END.sub("", _FENCE.sub("", block))
    for _ in range(_PREFIX_ROUNDS):
        stripped = _PREFIX.sub("", block)
        if stripped == block:
            break
        block = stripped
    return _EDGE_SPACES.sub("", _SPACES.sub(" ", block))


def _recut(cut: Excerpt, max_bytes: int) -> Excerpt:
    """An excerpt larger than ``max_bytes`` cut again: the head's start and the tail's end are kept."""
    head_cap = int(max_bytes * HEAD_SHARE)
    head, rest = cut.head[:head_cap], cut.head[head_cap:]
    tail_cap = max_bytes - len(head)
    tail = (rest + cut.tail)[-tail_cap:] if tail_cap > 0 else b""
    dropped = (rest + cut.tail)[: len(rest) + len(cut.tail) - len(tail)]
    lines = None if cut.skipped_lines is None else cut.skipped_lines + dropped.count(b"\n")
    return Excerpt(head, tail, cut.skipped_bytes + len(dropped), lines, cut.unread_bytes)
