"""The known error lines every case brings (its signatures' example lines, its exact strings, the lines
quoted in its symptoms), and the indexes the matcher ranks with: pure, and what the start-up snapshot
saves and restores.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.matching.casetext import CaseTextRanker
from bot.matching.engine import TextEngine
from bot.matching.signatures import CompiledSignature, squash
from bot.model.case import Case, Strength

_QUOTED = re.compile(r"`([^`\n]{15,300})`|\"([^\"\n]{15,300})\"")
_DIGITS = re.compile(r"\d{1,40}")
_DIGIT_TO_LETTER = str.maketrans("0123456789", "abcdefghij")
XID_CODE = re.compile(r"\bXid\b(?: \(PCI:[0-9a-fA-F:.]{1,20}\))?:? {0,2}(\d{1,3})\b", re.IGNORECASE)
KNOWN_LINES_DF_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class KnownLine:
    case_id: str
    text: str
    masked: str
    strength: Strength | None
    signature: int | None  # the signature this text illustrates (index into the library's list)
    fallout: bool = False
    xids: frozenset[str] = frozenset()  # the Xid codes the text names

    def to_json(self) -> list[Any]:
        strength = self.strength.value if self.strength is not None else None
        return [self.case_id, self.text, strength, self.signature, self.fallout]

    @classmethod
    def from_json(cls, row: list[Any]) -> KnownLine:
        case_id, text, strength, signature, fallout = row
        return known_line(case_id, text, Strength(strength) if strength else None, signature, bool(fallout))


def mask(text: str) -> str:
    """Lower case with every number as 0, except an Xid's code, which names the fault (Xid 31 and Xid 13
    are different failures), spelled in letters so that masking leaves it."""
    kept = XID_CODE.sub(lambda found: "xid " + found.group(1).translate(_DIGIT_TO_LETTER), text)
    return _DIGITS.sub("0", kept.lower())


def known_line(case_id: str, text: str, strength: Strength | None, signature: int | None, fallout: bool) -> KnownLine:
    return KnownLine(case_id, text, mask(text), strength, signature, fallout, frozenset(XID_CODE.findall(text)))


def known_lines(cases: Mapping[str, Case], signatures: Sequence[CompiledSignature], per_case: int) -> list[KnownLine]:
    """At most ``per_case`` distinct lines of 20 characters or more per case, signature lines first."""
    by_case: dict[str, dict[str, tuple[Strength | None, int | None, bool]]] = defaultdict(dict)
    for number, sig in enumerate(signatures):
        texts = list(cases[sig.case_id].signatures[sig.index].examples)
        if not sig.is_regex:
            texts.append(sig.literal)
        for text in texts:
            # A proof that needs other lines beside it is only a hint when one line looks like it.
            shown: Strength | None = Strength.SUPPORTING if sig.also else sig.strength
            by_case[sig.case_id].setdefault(squash(text), (shown, number, sig.fallout))
    for case in cases.values():
        for found in _QUOTED.finditer(case.symptoms_text.en or ""):
            by_case[case.id].setdefault(squash(found.group(1) or found.group(2)), (None, None, False))
    lines: list[KnownLine] = []
    for case_id, case_texts in by_case.items():
        for text, (kind, sig_no, fallout) in list(case_texts.items())[:per_case]:
            if len(text) >= 20:
                lines.append(known_line(case_id, text, kind, sig_no, fallout))
    return lines


@dataclass(frozen=True, slots=True)
class MatcherParts:
    """What the matcher ranks text with, besides its signatures."""

    known: list[KnownLine]
    known_engine: TextEngine
    case_text: CaseTextRanker

    @classmethod
    def build(cls, cases: Mapping[str, Case], signatures: Sequence[CompiledSignature], per_case: int) -> MatcherParts:
        known = known_lines(cases, signatures, per_case)
        engine = TextEngine.build([line.text for line in known], max_df_share=KNOWN_LINES_DF_SHARE)
        return cls(known, engine, CaseTextRanker(cases))
