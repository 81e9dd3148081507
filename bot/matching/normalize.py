"""Cleaning pasted logs: Slack markup, size and line caps, rank/time prefixes, whitespace.

Pure and bounded: every pattern here is anchored or uses bounded quantifiers, and the work is linear in
the (capped) input. The cleaned text keeps one line per pasted line, so a hit in the cleaned text maps
back to the line the engineer pasted.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate

MAX_LINE_CHARS = 4000
HEAD_SHARE = 0.25  # of the byte cap kept from the start; the rest comes from the end, where errors are

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
_SPACES = re.compile(r"[ \t\r\f\v]{2,}|[\t\r\f\v]")
_EDGE_SPACES = re.compile(r"(?m)^ | $")


@dataclass(frozen=True, slots=True)
class Cleaned:
    """A paste prepared for matching.

    ``text`` is the cleaned text, one line per line of ``raw_lines``; ``raw_lines`` are the pasted lines
    after Slack unescaping and capping, for quoting back as evidence.
    """

    text: str
    raw_lines: list[str]
    line_starts: list[int] = field(repr=False)
    truncated: bool = False
    skipped_bytes: int = 0
    binary: bool = False

    def line_of(self, offset: int) -> int:
        """The 0-based line number holding character ``offset`` of ``text``."""
        return bisect_right(self.line_starts, offset) - 1

    def clean_line(self, line_no: int) -> str:
        start = self.line_starts[line_no]
        end = self.line_starts[line_no + 1] - 1 if line_no + 1 < len(self.line_starts) else len(self.text)
        return self.text[start:end]


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


def cap_bytes(data: bytes, max_bytes: int) -> tuple[bytes, int]:
    """Keep the head and the tail of ``data`` within ``max_bytes``; returns (kept, skipped byte count)."""
    if len(data) <= max_bytes:
        return data, 0
    head = int(max_bytes * HEAD_SHARE)
    tail = max_bytes - head
    return data[:head] + b"\n" + data[-tail:], len(data) - head - tail


def looks_binary(data: bytes) -> bool:
    """True when the first 64 KiB hold NUL bytes or are mostly control characters."""
    sample = data[:65536]
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample if b < 9 or 13 < b < 32)
    return controls > len(sample) // 10


def clean(paste: str | bytes, max_bytes: int, *, slack_encoded: bool = True) -> Cleaned:
    """Prepare a paste for matching. Never raises for any input.

    ``max_bytes`` caps the UTF-8 size (head and tail kept, the middle skipped and counted).
    ``slack_encoded`` says the text came through Slack's message encoding (``&lt;``, ``<url|label>``).
    """
    data = paste.encode("utf-8", "replace") if isinstance(paste, str) else paste
    binary = looks_binary(data)
    data, skipped = cap_bytes(data, max_bytes)
    text = data.decode("utf-8", "replace")
    if binary:
        text = _CONTROL.sub(" ", text.replace("\x00", ""))
    text = _ANSI.sub("", text)
    if slack_encoded:
        text = unescape_slack(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    raw_lines = [line[:MAX_LINE_CHARS] for line in text.split("\n")]
    body = _FENCE_END.sub("", _FENCE.sub("", "\n".join(raw_lines)))
    for _ in range(_PREFIX_ROUNDS):
        stripped = _PREFIX.sub("", body)
        if stripped == body:
            break
        body = stripped
    body = _EDGE_SPACES.sub("", _SPACES.sub(" ", body))
    lines = body.split("\n")
    starts = [0, *accumulate(len(line) + 1 for line in lines[:-1])]
    return Cleaned(
        text=body,
        raw_lines=raw_lines,
        line_starts=starts,
        truncated=skipped > 0,
        skipped_bytes=skipped,
        binary=binary,
    )
