"""What one author regex costs to scan: a probe text, and the time a compiled pattern takes over it.

The probe text for timing one author regex: lines sampled from the pattern itself, with a share of their
characters changed to others the pattern uses. Deterministic: the same pattern always gives the same text.

Why sampled from the pattern: RE2 scans in linear time, but its DFA caches states; a pattern such as
``a[ab]{1000}[ab]{1000}c`` needs more states than the cache holds on text made of the characters its
classes accept, and RE2 falls back to its NFA, a thousand times slower. Text of ordinary log lines never
shows that; text made of near-matches does. The loader times a compiled pattern over this probe and
refuses one that could not scan a whole paste within the deadline.
"""

from __future__ import annotations

import random
import string
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import re2

from bot.matching.patterns import shape_of
from bot.matching.signatures import re2_options
from bot.model.case import Case, SignatureKind

PROBE_BYTES = 32 * 1024
_LINE_CHARS = 4096  # one probe line at most (a sample of a long counted repetition is cut here)
_LINE_MIN = 1024  # short samples are joined into lines of about this width
_SAMPLES = 256  # strings drawn from a pattern for one probe
_OPEN_REPEAT = 12  # copies drawn at most for *, + and {m,}, beyond the minimum
_ANY = string.ascii_letters + string.digits + string.punctuation + " "
_CLASSES = {
    "d": string.digits,
    "w": string.ascii_letters + string.digits + "_",
    "s": " \t",
    "h": " \t",
    "v": "\n",
}
_NOT_PRINTED = frozenset("\n\r\x0b\x0c")
_UNPRINTED = str.maketrans({c: " " for c in _NOT_PRINTED} | {"\x00": " "})


# ("lit", text) | ("cls", chars) | ("seq", [nodes]) | ("alt", [nodes]) | ("rep", node, low, high)
Node = tuple[Any, ...]
_EMPTY: Node = ("lit", "")


class _Reader:
    """Reads RE2 syntax as ``bot.matching.patterns`` does into a small tree to sample strings from
    (roughly: anchors and flags are dropped, a negated class draws from printable ASCII it does not
    name). Never raises; bounded by the pattern's length."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.pos = 0

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.text[index] if index < len(self.text) else "\x00"

    def read(self) -> Node:
        parts = [self.alternation()]
        while self.pos < len(self.text):  # a stray ")"
            self.pos += 1
            parts.append(self.alternation())
        return ("seq", parts)

    def alternation(self) -> Node:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self) -> Node:
        parts: list[Node] = []
        while self.pos < len(self.text) and self.peek() not in "|)":
            atom = self.atom()
            low_high = self.quantifier()
            if low_high is not None:
                parts.append(("rep", atom, *low_high))
            elif atom[0] == "lit" and parts and parts[-1][0] == "lit":  # runs of literals: one node
                parts[-1] = ("lit", parts[-1][1] + atom[1])
            else:
                parts.append(atom)
        return parts[0] if len(parts) == 1 else ("seq", parts)

    def quantifier(self) -> tuple[int, int] | None:
        char = self.peek()
        if char in "*+?":
            self.pos += 1
            low, high = {"*": (0, _OPEN_REPEAT), "+": (1, 1 + _OPEN_REPEAT), "?": (0, 1)}[char]
        elif char == "{" and self._counted():
            end = self.text.find("}", self.pos)
            low_text, comma, high_text = self.text[self.pos + 1 : end].partition(",")
            self.pos = end + 1
            low = int(low_text)
            high = low if not comma else (int(high_text) if high_text else low + _OPEN_REPEAT)
        else:
            return None
        if self.peek() == "?":
            self.pos += 1
        return min(low, _LINE_CHARS), min(max(high, low), _LINE_CHARS)

    def _counted(self) -> bool:
        end = self.text.find("}", self.pos)
        if end == -1:
            return False
        low, comma, high = self.text[self.pos + 1 : end].partition(",")
        return low.isdigit() and (not comma or high == "" or high.isdigit())

    def atom(self) -> Node:
        char = self.peek()
        self.pos += 1
        if char == "(":
            return self.group()
        if char == "[":
            return ("cls", self.char_class())
        if char == "\\":
            return self.escape()
        if char in "^$":
            return _EMPTY
        if char == ".":
            return ("cls", _ANY)
        return ("lit", char)

    def group(self) -> Node:
        if self.peek() == "?":
            self.pos += 1
            if self.peek() in "P<":
                while self.pos < len(self.text) and self.peek() != ">":
                    self.pos += 1
                self.pos += 1
            else:
                while self.pos < len(self.text) and self.peek() not in ":)":
                    self.pos += 1
                if self.peek() == ")":
                    self.pos += 1
                    return _EMPTY
                self.pos += 1
        inner = self.alternation()
        if self.peek() == ")":
            self.pos += 1
        return inner

    def char_class(self) -> str:
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        members: list[str] = []
        first = True
        while self.pos < len(self.text) and (self.peek() != "]" or first):
            first = False
            if self.peek() == "[" and self.peek(1) == ":":
                end = self.text.find(":]", self.pos + 2)
                name = self.text[self.pos + 2 : end] if end != -1 else ""
                members.append({"digit": string.digits, "space": " "}.get(name, string.ascii_letters))
                self.pos = end + 2 if end != -1 else len(self.text)
                continue
            if self.peek() == "\\":
                self.pos += 1
                members.append(_chars(self.escape()))
                continue
            low = self.peek()
            self.pos += 1
            if self.peek() == "-" and self.peek(1) not in "]\x00":
                high = self.peek(1)
                self.pos += 2
                members.append("".join(chr(c) for c in range(ord(low), min(ord(high), ord(low) + 256) + 1)))
            else:
                members.append(low)
        self.pos += 1
        chosen = "".join(members)
        if negated:
            chosen = "".join(c for c in _ANY if c not in chosen)
        return "".join(c for c in chosen if c not in _NOT_PRINTED) or "x"

    def escape(self) -> Node:
        char = self.peek()
        self.pos += 1
        if char in _CLASSES:
            return ("cls", _CLASSES[char])
        if char in "DWS":
            return ("cls", "".join(c for c in _ANY if c not in _CLASSES[char.lower()]))
        if char in "pP":
            if self.peek() == "{":
                end = self.text.find("}", self.pos)
                self.pos = end + 1 if end != -1 else len(self.text)
            else:
                self.pos += 1
            return ("cls", string.ascii_letters)
        if char == "b":  # a word boundary: a space makes one wherever it stands
            return ("lit", " ")
        if char in "BAzZG":
            return _EMPTY
        if char == "Q":
            end = self.text.find("\\E", self.pos)
            literal = self.text[self.pos : end if end != -1 else len(self.text)]
            self.pos = end + 2 if end != -1 else len(self.text)
            return ("lit", literal)
        if char == "x":
            if self.peek() == "{":
                end = self.text.find("}", self.pos)
                digits = self.text[self.pos + 1 : end] if end != -1 else ""
                self.pos = end + 1 if end != -1 else len(self.text)
            else:
                digits = self.text[self.pos : self.pos + 2]
                self.pos += 2
            try:
                return ("lit", chr(int(digits, 16)))
            except ValueError:
                return ("lit", "x")
        return ("lit", {"n": "\n", "t": "\t", "r": "\r"}.get(char, char))


def _chars(node: Node) -> str:
    return str(node[1])


def _sample(node: Node, rng: random.Random, out: list[str], room: list[int]) -> None:
    """Append one string ``node`` matches to ``out``, spending at most ``room[0]`` characters."""
    kind = node[0]
    if room[0] <= 0:
        return
    if kind == "lit":
        out.append(node[1])
        room[0] -= len(node[1])
    elif kind == "cls":
        out.append(rng.choice(node[1]))
        room[0] -= 1
    elif kind == "seq":
        for part in node[1]:
            _sample(part, rng, out, room)
    elif kind == "alt":
        _sample(rng.choice(node[1]), rng, out, room)
    else:
        _, inner, low, high = node
        count = min(rng.randint(low, high), room[0])
        if inner[0] == "cls":  # the common case, drawn at once
            out.append("".join(rng.choices(inner[1], k=count)))
            room[0] -= count
            return
        for _ in range(count):
            if room[0] <= 0:
                break
            _sample(inner, rng, out, room)


def probe_text(pattern: str, size: int = PROBE_BYTES) -> str:
    """About ``size`` characters of lines: samples of ``pattern`` written back to back with one character
    in eight replaced by another of the same line (near-misses: a scan meets the states a match would
    need), alternating with lines of characters drawn in the samples' proportions (fresh text: states
    that no repeated sample reaches). Deterministic per pattern.

    At most ``_SAMPLES`` samples are drawn from the pattern (drawing is the slow part); lines of short
    samples reuse them in a random order."""
    rng = random.Random(pattern)  # noqa: S311 -- a probe, not a secret: the same pattern, the same text
    tree = _Reader(pattern).read()
    pool: list[str] = []
    drawn = 0
    while drawn < size and len(pool) < _SAMPLES:
        parts: list[str] = []
        _sample(tree, rng, parts, [_LINE_CHARS])
        sample = "".join(parts)[:_LINE_CHARS].translate(_UNPRINTED)
        pool.append(sample)
        drawn += len(sample) or 1
    mix = "".join(pool) or "x"
    lines: list[str] = []
    total = 0
    while total < size:
        if len(lines) % 2:  # every other line: characters drawn in the samples' proportions
            line = "".join(rng.choices(mix, k=_LINE_MIN))
            lines.append(line)
            total += len(line) + 1
            continue
        parts = []
        width = 0
        while width < _LINE_MIN and len(parts) < _LINE_MIN:  # bounded even for empty samples
            sample = pool[rng.randrange(len(pool))]
            parts.append(sample)
            width += len(sample)
        chars = list("".join(parts)[:_LINE_CHARS] or "x")
        width = len(chars)
        changed = width // 8
        positions = range(width)
        for target, source in zip(rng.choices(positions, k=changed), rng.choices(positions, k=changed), strict=True):
            chars[target] = chars[source]
        lines.append("".join(chars))
        total += width + 1
    return "\n".join(lines)[:size]


# A pattern may take this long to scan a whole paste (MAX_PASTE_BYTES, 2 MiB): an eighth of the 2 s
# deadline. Measured on this project's 2-core machine: every bundled pattern 0.004-0.007 s; the review's
# a[ab]{1000}[ab]{1000}c 9.9 s, .{0,200}x.{0,100}y 10 s, a then (a|b) twenty times then c 0.95 s.
SCAN_BUDGET_S = 0.25
PASTE_BYTES = 2 << 20
# Patterns smaller than this (RE2 instructions, estimated) cannot hold enough positions for the DFA to
# run out of memory: every slow pattern measured had 20 or more.
PROBE_ABOVE = 20
_BLOCK = 16 * 1024  # the matcher scans in blocks of this size


def scan_seconds(pattern: str, ignore_case: bool = False, clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds ``pattern`` would take to scan a whole paste without finding a match, extrapolated from
    the fastest of three scans of its probe text (one scan when the first is well within budget).
    The pattern gets a suffix no probe holds (NUL), so a scan never stops early at a match."""
    program = re2.compile(f"(?:{pattern})\x00", re2_options(ignore_case))
    text = probe_text(pattern)
    blocks = [text[start : start + _BLOCK] for start in range(0, len(text), _BLOCK)]
    best = float("inf")
    for _ in range(3):
        began = clock()
        for block in blocks:
            program.search(block)
        best = min(best, clock() - began)
        if best * PASTE_BYTES / max(len(text), 1) < SCAN_BUDGET_S / 4:
            break
    return best * PASTE_BYTES / max(len(text), 1)


@lru_cache(maxsize=4096)
def too_slow(pattern: str, ignore_case: bool = False) -> float | None:
    """The extrapolated seconds when ``pattern`` cannot scan a whole paste within ``SCAN_BUDGET_S``, else
    None. Small patterns are not probed. Remembered per pattern for the life of the process."""
    if shape_of(pattern).size < PROBE_ABOVE:
        return None
    try:
        seconds = scan_seconds(pattern, ignore_case)
    except re2.error:
        return None  # what RE2 cannot compile is reported by the signature checks
    return seconds if seconds > SCAN_BUDGET_S else None


def slow_patterns(case: Case) -> list[tuple[str, str]]:
    """(field, message) for each regex signature or ``also`` pattern of ``case`` that could not scan a
    whole paste within its share of the deadline."""
    found: list[tuple[str, str]] = []
    for index, signature in enumerate(case.signatures):
        patterns = [(f"signatures[{index}].pattern", signature.pattern)]
        if signature.kind is not SignatureKind.REGEX:
            patterns = []
        patterns += [(f"signatures[{index}].also[{n}]", p) for n, p in enumerate(signature.also)]
        for where, pattern in patterns:
            seconds = too_slow(pattern, signature.ignore_case)
            if seconds is not None:
                shown = pattern if len(pattern) <= 80 else pattern[:79] + "…"
                found.append(
                    (
                        where,
                        f"{shown!r} would take about {seconds:.1f} s to scan a {PASTE_BYTES >> 20} MiB paste, over"
                        f" the {SCAN_BUDGET_S} s a pattern may take: RE2 runs out of memory for its states on text"
                        " made of the characters its classes accept (bound or shorten the repetitions)",
                    )
                )
    return found
