"""Scoring, ranking and the reply decision over what each case matched in a paste. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from bot.matching.signatures import SET_MAX_MEM, SET_SHARD
from bot.model.case import Localized, Strength
from bot.model.results import Evidence, Match, Tier


class Titled(Protocol):
    """What a candidate shows of its case: a whole case or its summary."""

    @property
    def title(self) -> Localized: ...
    @property
    def failure_class(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class MatchConfig:
    max_bytes: int = 2 << 20
    max_candidates: int = 5
    max_text_lines: int = 400
    min_score: int = 15
    strong_score: int = 60
    reply_margin: int = 10  # two classes with proof closer than this: the bot does not choose unprompted
    same_class_band: int = 5
    fuzzy_floor: int = 85
    docs_per_case: int = 16
    set_shard: int = SET_SHARD
    set_max_mem: int = SET_MAX_MEM


@dataclass
class Tally:
    """What one case matched in one paste."""

    decisive: dict[int, Evidence] = field(default_factory=dict)
    fallout: dict[int, Evidence] = field(default_factory=dict)
    supporting: dict[int, Evidence] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    lines: dict[int, list[int]] = field(default_factory=dict)  # 0-based lines each signature hit
    specificity: int = 0
    text_sim: float = 0.0
    text_strength: Strength | None = None
    text_fallout: bool = False
    text_evidence: Evidence | None = None
    text_line: int | None = None  # index of the line the text stage matched

    def hit(self, index: int) -> bool:
        return index in self.decisive or index in self.fallout or index in self.supporting

    def line_set(self) -> set[int]:
        """Every pasted line this case matched (signatures and the known-line stage)."""
        found = {n for numbers in self.lines.values() for n in numbers}
        if self.text_line is not None:
            found.add(self.text_line)
        return found


def score(tally: Tally, decisive_elsewhere: bool, config: MatchConfig) -> tuple[int, Tier]:
    """0–100 and a tier: exact only from a decisive signature; fallout counts as a hint when another
    case has proof."""
    decisive = len(tally.decisive) + (0 if decisive_elsewhere else len(tally.fallout))
    supporting = len(tally.supporting) + (len(tally.fallout) if decisive_elsewhere else 0)
    if decisive:
        return min(100, 88 + 4 * (decisive - 1) + 2 * supporting), Tier.EXACT
    by_signature = 0 if supporting == 0 else min(70, 40 + 10 * (supporting - 1))
    by_text = 0.0
    if tally.text_sim >= config.fuzzy_floor:
        proof = tally.text_strength is Strength.DECISIVE and not (tally.text_fallout and decisive_elsewhere)
        # A near-copy of a decisive example is nearly as good as the signature; a near-copy of a
        # hint, or of a line quoted in the case text, stays a hint.
        top = 85 if proof else (55 if tally.text_strength is Strength.SUPPORTING else 50)
        span = 100 - config.fuzzy_floor
        by_text = 20 + (top - 20) * (tally.text_sim - config.fuzzy_floor) / span
    high, low = max(by_signature, by_text), min(by_signature, by_text)
    score = int(min(87, high + low / 4))
    return score, Tier.STRONG if score >= config.strong_score else Tier.WEAK


def rank(tallies: Mapping[str, Tally], cases: Mapping[str, Titled], config: MatchConfig) -> list[Match]:
    """The candidates, best first (score, then how specific their signatures are, then id)."""
    decisive_cases = {case_id for case_id, tally in tallies.items() if tally.decisive}
    scored: list[tuple[int, int, str, Match]] = []
    for case_id, tally in tallies.items():
        elsewhere = bool(decisive_cases - {case_id})
        points, tier = score(tally, elsewhere, config)
        if points < config.min_score:
            continue
        evidence = [
            *tally.decisive.values(),
            *tally.fallout.values(),
            *tally.supporting.values(),
            *([tally.text_evidence] if tally.text_evidence else []),
        ][:3]
        case = cases[case_id]
        match = Match(
            case_id=case_id,
            title=case.title,
            failure_class=case.failure_class,
            score=points,
            tier=tier,
            evidence=evidence,
        )
        scored.append((points, tally.specificity, case_id, match))
    scored.sort(key=lambda item: (-item[0], -item[1], item[2]))
    return [match for *_, match in scored[: config.max_candidates]]


def has_proof(tally: Tally, decisive_elsewhere: bool, config: MatchConfig) -> bool:
    """Whether a case has proof of its own: a decisive signature hit (fallout too, when no other case has
    proof), or a near-copy of a decisive known or confirmed line. Supporting hits are never proof, however
    many: every traceback has ``Traceback (most recent call last)`` in it."""
    if tally.decisive or (tally.fallout and not decisive_elsewhere):
        return True
    near = tally.text_sim >= config.fuzzy_floor and tally.text_strength is Strength.DECISIVE
    return near and not (tally.text_fallout and decisive_elsewhere)
