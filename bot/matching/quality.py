"""Scoring the matcher on labelled pastes: hit@1, hit@3, correct replies, false replies. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.matching.matcher import Matcher


@dataclass(frozen=True, slots=True)
class Labelled:
    name: str
    text: bytes
    accept: tuple[str, ...]  # empty for a negative
    reply: bool  # whether an unprompted channel reply is expected


@dataclass(frozen=True, slots=True)
class Outcome:
    name: str
    accept: tuple[str, ...]
    want_reply: bool
    ranked: tuple[str, ...]
    scores: tuple[int, ...]
    replied: bool
    reply_ids: tuple[str, ...]

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


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def positives(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.positive]

    @property
    def negatives(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.positive]

    def rate(self, attribute: str, population: Sequence[Outcome]) -> float:
        return sum(bool(getattr(o, attribute)) for o in population) / len(population) if population else 0.0

    def summary(self) -> dict[str, float | int]:
        positives, negatives = self.positives, self.negatives
        return {
            "positives": len(positives),
            "negatives": len(negatives),
            "hit@1": self.rate("hit1", positives),
            "hit@3": self.rate("hit3", positives),
            "correct_reply": self.rate("correct_reply", positives),
            "false_reply": self.rate("replied", negatives),
        }


def evaluate(matcher: Matcher, pastes: Sequence[Labelled]) -> Report:
    report = Report()
    for paste in pastes:
        result = matcher.match(paste.text)
        report.outcomes.append(
            Outcome(
                name=paste.name,
                accept=paste.accept,
                want_reply=paste.reply,
                ranked=tuple(m.case_id for m in result.matches),
                scores=tuple(m.score for m in result.matches),
                replied=result.reply,
                reply_ids=tuple(result.reply_case_ids),
            )
        )
    return report
