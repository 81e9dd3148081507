"""Compiling case signatures: exact strings and untrusted author regexes through RE2 (linear time).

Pure: no I/O. A pattern RE2 cannot compile (a backreference, a lookaround) raises ``SignatureError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import re2

from bot.model.case import Signature, SignatureKind, Strength

# Enough for any sane log signature; bounds RE2's DFA memory per pattern (bytes).
_RE2_MAX_MEM = 8 << 20
_WHITESPACE = re.compile(r"\s{1,10000}")
# A counted repetition {m,n} or {m,} that is not escaped (an escaped brace is a literal one).
_COUNTED = re.compile(r"(?<!\\)\{(\d{1,4}),\d{0,4}\}")


class SignatureError(ValueError):
    """A signature that cannot be used (RE2 rejected the pattern)."""


def squash(text: str) -> str:
    """Collapse runs of whitespace to one space and strip: how pasted lines and exact patterns compare."""
    return _WHITESPACE.sub(" ", text).strip()


@dataclass(slots=True)
class CompiledSignature:
    """A checked signature. Regexes are parsed at load time and compiled on first use, because a
    library of thousands of cases is matched through RE2 sets and needs few individual programs."""

    case_id: str
    index: int
    kind: SignatureKind
    pattern: str
    strength: Strength
    ignore_case: bool
    fallout: bool
    literal: str
    _regex: Any = None

    @property
    def decisive(self) -> bool:
        return self.strength is Strength.DECISIVE

    @property
    def is_regex(self) -> bool:
        return self.kind is SignatureKind.REGEX

    @property
    def regex(self) -> Any:
        """The compiled RE2 program (None for exact strings)."""
        if self.kind is not SignatureKind.REGEX:
            return None
        if self._regex is None:
            self._regex = re2.compile(self.pattern, _options(self.ignore_case))
        return self._regex

    def set_pattern(self, *, relaxed: bool = False) -> str:
        """This signature as one RE2 pattern over whole, cleaned text.

        ``relaxed`` widens counted repetitions (``{0,200}`` to ``*``, ``{4,16}`` to ``+``): a superset
        that RE2 compiles far faster inside a large set, used only as a prefilter; every hit is then
        confirmed with the exact pattern.
        """
        body = self.pattern if self.is_regex else re2.escape(self.literal)
        if relaxed and self.is_regex:
            body = _COUNTED.sub(lambda m: "*" if m.group(1) == "0" else "+", body)
        flags = "(?mi)" if self.ignore_case else "(?m)"
        return f"{flags}(?:{body})"

    def search(self, line: str) -> bool:
        """True when this signature hits ``line`` (already squashed by the caller)."""
        if self.is_regex:
            return self.regex.search(line) is not None
        if self.ignore_case:
            return self.literal in line.lower()
        return self.literal in line


def _options(ignore_case: bool) -> Any:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = _RE2_MAX_MEM
    options.case_sensitive = not ignore_case
    return options


def _parses(pattern: str, ignore_case: bool) -> bool:
    """Whether RE2 accepts ``pattern``: a parse only, an order of magnitude cheaper than compiling."""
    probe = re2.Set.SearchSet(_options(ignore_case))
    try:
        probe.Add(pattern)
    except re2.error:
        return False
    return True


def compile_signature(case_id: str, index: int, signature: Signature) -> CompiledSignature:
    """Check one signature. Raises ``SignatureError`` naming the case and the signature."""
    literal = squash(signature.pattern)
    if signature.kind is SignatureKind.REGEX:
        if not _parses(signature.pattern, signature.ignore_case):
            try:  # compile only to get RE2's own explanation
                re2.compile(signature.pattern, _options(signature.ignore_case))
                detail = "rejected"
            except re2.error as exc:
                detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
            raise SignatureError(f"{case_id} signatures[{index}]: RE2 cannot compile {signature.pattern!r}: {detail}")
    elif signature.ignore_case:
        literal = literal.lower()
    return CompiledSignature(
        case_id=case_id,
        index=index,
        kind=signature.kind,
        pattern=signature.pattern,
        strength=signature.strength,
        ignore_case=signature.ignore_case,
        fallout=signature.fallout,
        literal=literal,
    )
