"""The whole text of a case, in both languages: what explicit requests fall back on when no signature or
known error line fits, and what the plain BM25 baseline ranks. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from bot.matching.engine import TextEngine
from bot.matching.ranking import Titled
from bot.model.case import Case
from bot.model.results import Match, Tier


def case_document(case: Case) -> str:
    """Everything a case says, in both languages: what the plain BM25 baseline ranks."""
    parts: list[str] = [case.id, case.failure_class or "", case.root_cause or "", " ".join(case.components)]
    for text in (case.title, case.summary, case.symptoms_text, case.trigger, case.detection, case.lessons):
        parts += [text.en or "", text.ko or ""]
    parts += [step.text.en or "" for step in case.remediation] + [step.text.ko or "" for step in case.remediation]
    parts += case.symptoms
    return "\n".join(parts)


def _with_examples(case: Case) -> str:
    """The case text and the real log lines its signatures show."""
    return "\n".join([case_document(case), *(line for sig in case.signatures for line in sig.examples)])


def case_text_documents(cases: Mapping[str, Case]) -> list[str]:
    """What the case-text index holds, one document per case in the mapping's order."""
    return [_with_examples(case) for case in cases.values()]


CASE_TEXT_DF_SHARE = 0.5
# The error-looking lines that make the query, the weakest hit kept (BM25 score), and the score the
# closest case shows (always below any reply).
QUERY_LINES = 60
MIN_HIT = 2.0
TOP_SCORE = 35


class CaseTextRanker:
    """Weak candidates from whole case texts, for explicit requests when signatures and known lines leave
    room in the candidate list."""

    def __init__(self, cases: Mapping[str, Titled], engine: TextEngine | None = None) -> None:
        """``engine``: the index of :func:`case_text_documents` for these cases in this order, built
        earlier (the start-up snapshot keeps one); built here otherwise, and then ``cases`` must be whole
        cases."""
        self._cases = cases
        self._ids = list(self._cases)
        if engine is None:
            documents = case_text_documents(cast(Mapping[str, Case], cases))
            engine = TextEngine.build(documents, max_df_share=CASE_TEXT_DF_SHARE, identifiers=False)
        self._index = engine

    def search(self, query_lines: Sequence[str], top: int) -> list[tuple[str, float]]:
        """The cases whose text is closest to ``query_lines`` (id and BM25 score, best first), weakest
        hits dropped: the ranking the reply decision compares the line stages with, and what ``fill``
        takes its candidates from."""
        if not self._ids:
            return []
        hits = self._index.search("\n".join(query_lines[-QUERY_LINES:]), top=top, limit=4000)
        if not hits or hits[0].score < MIN_HIT:
            return []
        return [(self._ids[hit.doc], hit.score) for hit in hits if hit.score >= max(MIN_HIT, hits[0].score * 0.3)]

    def fill(
        self,
        query_lines: Sequence[str],
        matches: list[Match],
        cap: int,
        floor: int,
        found: list[tuple[str, float]] | None = None,
    ) -> list[Match]:
        """``matches`` filled up to ``cap`` with the cases whose text is closest to ``query_lines`` (or
        ``found``, their :meth:`search` made earlier), each ranked after every case already there, scored
        at least ``floor`` and never above ``TOP_SCORE``."""
        room = cap - len(matches)
        if room <= 0 or not self._ids:
            return matches
        hits = self.search(query_lines, cap + len(matches)) if found is None else found
        if not hits:
            return matches
        ceiling = min([m.score for m in matches] + [TOP_SCORE])
        shown = {m.case_id for m in matches}
        added: list[Match] = []
        for case_id, points in hits:
            if case_id in shown:
                continue
            score = max(floor, min(ceiling, round(TOP_SCORE * points / hits[0][1])))
            case = self._cases[case_id]
            added.append(
                Match(
                    case_id=case_id,
                    title=case.title,
                    failure_class=case.failure_class,
                    score=score,
                    tier=Tier.WEAK,
                    evidence=[],
                )
            )
            if len(added) >= room:
                break
        return [*matches, *added]
