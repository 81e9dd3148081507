"""Compiling case signatures: exact strings and untrusted author regexes through RE2 (linear time).

Pure: no I/O. A pattern RE2 cannot compile (a backreference, a lookaround) raises ``SignatureError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import re2

from bot.models import Signature, SignatureKind, Strength

# Enough for any sane log signature; bounds RE2's DFA memory per pattern (bytes).
_RE2_MAX_MEM = 8 << 20
_WHITESPACE = re.compile(r"\s{1,10000}")


class SignatureError(ValueError):
    """A signature that cannot be used (RE2 rejected the pattern)."""


def squash(text: str) -> str:
    """Collapse runs of whitespace to one space and strip: how pasted lines and exact patterns compare."""
    return _WHITESPACE.sub(" ", text).strip()


@dataclass(frozen=True, slots=True)
class CompiledSignature:
    case_id: str
    index: int
    kind: SignatureKind
    pattern: str
    strength: Strength
    ignore_case: bool
    fallout: bool
    literal: str
    regex: Any  # re2 compiled pattern, or None for exact strings

    @property
    def decisive(self) -> bool:
        return self.strength is Strength.DECISIVE

    def set_pattern(self) -> str:
        """This signature as one RE2 pattern for a multi-pattern set over whole, cleaned text."""
        body = self.pattern if self.regex is not None else re2.escape(self.literal)
        flags = "(?mi)" if self.ignore_case else "(?m)"
        return f"{flags}(?:{body})"

    def search(self, line: str) -> bool:
        """True when this signature hits ``line`` (already squashed by the caller)."""
        if self.regex is not None:
            return self.regex.search(line) is not None
        if self.ignore_case:
            return self.literal in line.lower()
        return self.literal in line


def compile_signature(case_id: str, index: int, signature: Signature) -> CompiledSignature:
    """Compile one signature. Raises ``SignatureError`` naming the case and the signature."""
    regex = None
    literal = squash(signature.pattern)
    if signature.kind is SignatureKind.REGEX:
        options = re2.Options()
        options.log_errors = False
        options.max_mem = _RE2_MAX_MEM
        options.case_sensitive = not signature.ignore_case
        try:
            regex = re2.compile(signature.pattern, options)
        except Exception as exc:  # re2 raises its own error type, not a ValueError subclass
            detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
            raise SignatureError(
                f"{case_id} signatures[{index}]: RE2 cannot compile {signature.pattern!r}: {detail}"
            ) from None
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
        regex=regex,
    )
