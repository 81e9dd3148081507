"""What a signature's regular expression must contain, read from the pattern itself. Pure.

A small parser of the RE2 syntax that case authors use gives, for any pattern, the fewest literal
characters every match must contain, the fewest characters every match consumes, and an upper bound on the
size of the compiled program. It never raises: syntax it does not know is read as one character of some
class (no literal, size 1), which only makes the literal count smaller and the checks stricter.
"""

from __future__ import annotations

from dataclasses import dataclass

# How many program instructions a Unicode class (\pL, \p{Greek}) may cost; RE2 expands them into ranges.
_UNICODE_CLASS_SIZE = 1300  # measured: \P{L} compiles to 1,204 instructions, the most of any category
_UNBOUNDED = 1  # an open repetition ({m,}, *, +) adds a loop, not copies
_MAX_REPEAT = 1000  # RE2's own limit on a counted repetition
_CLASS_ESCAPES = frozenset("dDwWsShHvVC")
_END = "\x00"
_ZERO_WIDTH_ESCAPES = frozenset("bBAzZG")


@dataclass(frozen=True, slots=True)
class Shape:
    """``literals``: fewest literal characters in any match; ``length``: fewest characters any match
    consumes (0 means the pattern can match an empty string); ``size``: an upper bound on RE2's program
    size, in instructions."""

    literals: int
    length: int
    size: int


def _seq(parts: list[Shape]) -> Shape:
    return Shape(sum(p.literals for p in parts), sum(p.length for p in parts), sum(p.size for p in parts))


def _alt(branches: list[Shape]) -> Shape:
    return Shape(min(b.literals for b in branches), min(b.length for b in branches), sum(b.size for b in branches) + 1)


_LITERAL = Shape(1, 1, 1)
_CLASS = Shape(0, 1, 1)
_EMPTY = Shape(0, 0, 0)


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.pos = 0

    def peek(self, offset: int = 0) -> str:
        """The character ``offset`` ahead; ``_END`` past the end (it is in no set of syntax characters)."""
        index = self.pos + offset
        return self.text[index] if index < len(self.text) else _END

    def alternation(self) -> Shape:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else _alt(branches)

    def sequence(self) -> Shape:
        parts: list[Shape] = []
        while self.pos < len(self.text) and self.peek() not in "|)":
            parts.append(self.quantified(self.atom()))
        return _seq(parts) if parts else _EMPTY

    def atom(self) -> Shape:
        char = self.peek()
        self.pos += 1
        if char == "(":
            return self.group()
        if char == "[":
            self.char_class()
            return _CLASS
        if char == "\\":
            return self.escape()
        if char in "^$":
            return _EMPTY
        if char == ".":
            return _CLASS
        return _LITERAL

    def group(self) -> Shape:
        if self.peek() == "?":
            self.pos += 1
            if self.peek() in "P<":
                while self.pos < len(self.text) and self.peek() != ">":
                    self.pos += 1
                self.pos += 1
            else:  # flags: (?i) alone, or (?i:...)
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

    def char_class(self) -> None:
        if self.peek() == "^":
            self.pos += 1
        if self.peek() == "]":
            self.pos += 1
        while self.pos < len(self.text) and self.peek() != "]":
            if self.peek() == "[" and self.peek(1) == ":":  # [:alpha:]
                end = self.text.find(":]", self.pos + 2)
                self.pos = end + 2 if end != -1 else len(self.text)
                continue
            self.pos += 2 if self.peek() == "\\" else 1
        self.pos += 1

    def escape(self) -> Shape:
        char = self.peek()
        self.pos += 1
        if char in "pP":
            if self.peek() == "{":
                end = self.text.find("}", self.pos)
                self.pos = end + 1 if end != -1 else len(self.text)
            else:
                self.pos += 1
            return Shape(0, 1, _UNICODE_CLASS_SIZE)
        if char in _CLASS_ESCAPES:
            return _CLASS
        if char in _ZERO_WIDTH_ESCAPES:
            return _EMPTY
        if char == "Q":  # \Q...\E: literal text
            end = self.text.find("\\E", self.pos)
            literal = self.text[self.pos : end if end != -1 else len(self.text)]
            self.pos = end + 2 if end != -1 else len(self.text)
            return Shape(len(literal), len(literal), len(literal))
        if char == "x":  # \x41 or \x{263a}
            if self.peek() == "{":
                end = self.text.find("}", self.pos)
                self.pos = end + 1 if end != -1 else len(self.text)
            else:
                self.pos += 2
        elif char.isdigit():  # octal escapes
            while self.peek().isdigit():
                self.pos += 1
        return _LITERAL

    def quantified(self, atom: Shape) -> Shape:
        char = self.peek()
        if char in "*+?":
            self.pos += 1
            low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        elif char == "{" and self._counted():
            low, high = self._counted_values()
        else:
            return atom
        if self.peek() == "?":  # lazy
            self.pos += 1
        copies = high if high is not None else max(low, 1) + _UNBOUNDED
        return Shape(atom.literals * low, atom.length * low, atom.size * min(copies, _MAX_REPEAT) + 1)

    def _counted(self) -> bool:
        end = self.text.find("}", self.pos)
        if end == -1:
            return False
        body = self.text[self.pos + 1 : end]
        low, comma, high = body.partition(",")
        return low.isdigit() and (not comma or high == "" or high.isdigit())

    def _counted_values(self) -> tuple[int, int | None]:
        end = self.text.find("}", self.pos)
        body = self.text[self.pos + 1 : end]
        self.pos = end + 1
        low, comma, high = body.partition(",")
        if not comma:
            return int(low), int(low)
        return int(low), int(high) if high else None


def shape_of(pattern: str) -> Shape:
    """The shape of ``pattern`` (RE2 syntax). Never raises."""
    parser = _Parser(pattern)
    shapes = [parser.alternation()]
    while parser.pos < len(pattern):  # a stray ")": read on as RE2 would reject it anyway
        parser.pos += 1
        shapes.append(parser.alternation())
    return _seq(shapes)


def literal_chars(text: str) -> int:
    """Literal characters of an exact signature: everything but whitespace counts."""
    return len(text) - sum(map(str.isspace, text))
