"""Scoring the matcher on labelled pastes, and the plain BM25 ranking it is compared with. Pure.

For known failures: the top candidate acceptable (hit@1), an acceptable case in the top 3 (hit@3), an
unprompted reply naming only acceptable cases (over pastes not marked explicit-only), a reply naming a
wrong case, no candidate at all. For unrelated errors: any unprompted reply.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.matching.engine import TextEngine
from bot.matching.matcher import Matcher
from bot.model.case import Case


@dataclass(frozen=True, slots=True)
class Labelled:
    name: str
    text: bytes
    accept: tuple[str, ...]  # empty for a negative
    explicit_only: bool = False  # a known failure with no proof on its own: a candidate on request only
    project: str = ""  # where it was posted (a real paste's project: what cross-validation groups by)


@dataclass(frozen=True, slots=True)
class Outcome:
    name: str
    accept: tuple[str, ...]
    explicit_only: bool
    ranked: tuple[str, ...]
    scores: tuple[int, ...]
    replied: bool
    reply_ids: tuple[str, ...]
    probability: float | None = None  # the reply model's, None when no threshold could make it reply

    @property
    def positive(self) -> bool:
        return bool(self.accept)

    @property
    def hit1(self) -> bool:
        return bool(self.ranked) and self.ranked[0] in self.accept

    @property
    def hit3(self) -> bool:
        return any(case_id in self.accept for case_id in self.ranked[:3])

    @property
    def correct_reply(self) -> bool:
        """Replied, and every case the reply names is acceptable."""
        return self.replied and all(case_id in self.accept for case_id in self.reply_ids)

    @property
    def wrong_reply(self) -> bool:
        return self.replied and not self.correct_reply

    @property
    def empty(self) -> bool:
        return not self.ranked


def _rate(flags: Iterable[bool], population: int) -> float:
    return sum(flags) / population if population else 0.0


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def positives(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.positive]

    @property
    def negatives(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.positive]

    def summary(self) -> dict[str, float]:
        positives, negatives = self.positives, self.negatives
        provable = [o for o in positives if not o.explicit_only]
        return {
            "positives": len(positives),
            "negatives": len(negatives),
            "hit@1": _rate((o.hit1 for o in positives), len(positives)),
            "hit@3": _rate((o.hit3 for o in positives), len(positives)),
            "reply": _rate((o.correct_reply for o in provable), len(provable)),
            "wrong_reply": _rate((o.wrong_reply for o in positives), len(positives)),
            "negative_reply": _rate((o.replied for o in negatives), len(negatives)),
            "empty": _rate((o.empty for o in positives), len(positives)),
        }


def evaluate(matcher: Matcher, pastes: Sequence[Labelled]) -> Report:
    report = Report()
    for paste in pastes:
        result = matcher.match(paste.text, slack_encoded=False)
        report.outcomes.append(
            Outcome(
                name=paste.name,
                accept=paste.accept,
                explicit_only=paste.explicit_only,
                ranked=tuple(m.case_id for m in result.matches),
                scores=tuple(m.score for m in result.matches),
                replied=result.reply,
                reply_ids=tuple(result.reply_case_ids),
                probability=result.reply_probability,
            )
        )
    return report


def bm25_baseline(cases: Sequence[Case], pastes: Sequence[Labelled]) -> Report:
    """A plain BM25 ranking of whole case files against whole pastes (no signatures, no reply decision)."""
    files = [json.dumps(case.model_dump(mode="json"), ensure_ascii=False) for case in cases]
    index = TextEngine.build(files, identifiers=False)
    report = Report()
    for paste in pastes:
        query = paste.text.decode("utf-8", "replace")
        hits = index.search(query, top=5, limit=20_000)
        report.outcomes.append(
            Outcome(
                name=paste.name,
                accept=paste.accept,
                explicit_only=paste.explicit_only,
                ranked=tuple(cases[hit.doc].id for hit in hits),
                scores=tuple(round(hit.score) for hit in hits),
                replied=False,
                reply_ids=(),
            )
        )
    return report
