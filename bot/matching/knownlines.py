"""The known error lines every case brings (its signatures' example lines, its exact strings, the lines
quoted in its symptoms), and the indexes the matcher ranks with: pure, and what the start-up snapshot
saves and restores.
"""

from __future__ import annotations

import json
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


class KnownLine:
    """One known line of a case. Its masked form and Xid codes are worked out when first compared (a
    library of tens of thousands of cases has hundreds of thousands of lines; few are ever compared)."""

    __slots__ = ("_masked", "_xids", "case_id", "confirmed", "fallout", "signature", "strength", "text")

    def __init__(
        self,
        case_id: str,
        text: str,
        strength: Strength | None,
        signature: int | None,
        fallout: bool = False,
        *,
        confirmed: bool = False,
    ) -> None:
        self.case_id = case_id
        self.confirmed = confirmed  # a confirmed example (bot.matching.examples), not a line of the case file
        self.text = text
        self.strength = strength
        self.signature = signature  # the signature this text illustrates (index into the library's list)
        self.fallout = fallout
        self._masked: str | None = None
        self._xids: frozenset[str] | None = None

    @property
    def masked(self) -> str:
        if self._masked is None:
            self._masked = mask(self.text)
        return self._masked

    @property
    def xids(self) -> frozenset[str]:
        """The Xid codes the text names."""
        if self._xids is None:
            self._xids = frozenset(XID_CODE.findall(self.text))
        return self._xids

    def to_json(self) -> list[Any]:
        return [self.case_id, self.text, _STRENGTH_CODE[self.strength], self.signature, self.fallout]

    def payload(self) -> bytes:
        """This line as the known-line index stores it (:meth:`from_json` of its JSON reads it back)."""
        return json.dumps(self.to_json(), ensure_ascii=False).encode()

    @classmethod
    def from_json(cls, row: list[Any]) -> KnownLine:
        case_id, text, strength, signature, fallout = row
        return cls(str(case_id), str(text), _CODE_STRENGTH[strength], signature, bool(fallout))


_STRENGTH_CODE: dict[Strength | None, int] = {None: 0, Strength.DECISIVE: 1, Strength.SUPPORTING: 2}
_CODE_STRENGTH = {code: strength for strength, code in _STRENGTH_CODE.items()}


def mask(text: str) -> str:
    """Lower case with every number as 0, except an Xid's code, which names the fault (Xid 31 and Xid 13
    are different failures), spelled in letters so that masking leaves it."""
    kept = XID_CODE.sub(lambda found: "xid " + found.group(1).translate(_DIGIT_TO_LETTER), text)
    return _DIGITS.sub("0", kept.lower())


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
                lines.append(KnownLine(case_id, text, kind, sig_no, fallout))
    return lines


@dataclass(frozen=True, slots=True)
class MatcherParts:
    """What the matcher ranks text with, besides its signatures. ``known`` is None when the known-line
    index stores each line with its document (a snapshot's index: the list is never loaded)."""

    known: list[KnownLine] | None
    known_engine: TextEngine
    case_text: CaseTextRanker

    @classmethod
    def build(cls, cases: Mapping[str, Case], signatures: Sequence[CompiledSignature], per_case: int) -> MatcherParts:
        known = known_lines(cases, signatures, per_case)
        engine = TextEngine.build([line.text for line in known], max_df_share=KNOWN_LINES_DF_SHARE)
        return cls(known, engine, CaseTextRanker(cases))
