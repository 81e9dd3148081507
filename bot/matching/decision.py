"""The unprompted reply, decided from named features of a match by a logistic model fitted on the `dev`
real pastes (``bench/reply_fit.py``, source-grouped cross-validation). Pure.

Three rules stand outside the model and no weight can trade them away:
- a best case without proof of its own (:func:`bot.matching.ranking.has_proof`: supporting hits alone, or
  the case text alone) never replies;
- two failure classes that each have proof of their own, scored within ``reply_margin`` of each other: the
  paste shows two failures and the bot does not choose between them unprompted (too rare in `dev` for a
  weight to learn it: the fit gives the margin none, so it stays a rule);
- a case whose proof is only reports every rank prints beside the job's own error (the matcher's job-error
  rule).
And one case the model cannot weigh: proof that is only a near-copy of a line people confirmed for the
case (``bot.matching.examples``). `dev` holds no confirmed lines, so no weight was fitted for them; such a
match replies when its tier is strong, as it did before the model, so a confirmation still teaches.
Among the rest the model weighs how sure the match is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.matching.ranking import MatchConfig, Tally, has_proof
from bot.model.results import Match, Tier

# The features, in the order the weights are stored. Each is a number a reviewer can read off a match.
FEATURES: tuple[str, ...] = (
    "exact",  # the best case's tier is exact (a decisive signature hit)
    "strong",  # its tier is strong
    "score",  # its score, 0-1
    "margin",  # score ahead of the best rival (a case of another class that explains other lines), 0-1
    "lines",  # distinct pasted lines the best case matched, log2(1 + n) / 4
    "signatures",  # distinct signatures of the best case that hit, log2(1 + n) / 3
    "fallout_only",  # its only proof is fallout (lines every rank prints when something else failed)
    "text_only",  # its only proof is a near-copy of a decisive known line (no signature)
    "decisive_elsewhere",  # another case has a decisive hit too
    "text_agrees",  # the whole-case-text ranking puts the best case (or one of its class) first
    "job_error",  # the paste names a program-side error (bot.matching.jobside)
    "length",  # lines in the paste, log10(1 + n) / 5
)


@dataclass(frozen=True, slots=True)
class ReplyModel:
    """``bias + sum(weight * feature)`` through the logistic function, compared with ``threshold``."""

    weights: Mapping[str, float]
    bias: float
    threshold: float

    def probability(self, features: Mapping[str, float]) -> float:
        z = self.bias + sum(self.weights.get(name, 0.0) * value for name, value in features.items())
        z = max(-60.0, min(60.0, z))
        return 1.0 / (1.0 + math.exp(-z))

    def replies(self, features: Mapping[str, float]) -> bool:
        return self.probability(features) >= self.threshold


@dataclass(frozen=True, slots=True)
class Decision:
    reply: bool
    case_ids: list[str]  # what a reply names (empty without a reply)
    features: dict[str, float] | None  # None: no candidate with proof of its own, so never a reply
    probability: float | None = None


def _log_share(count: int, scale: float) -> float:
    return min(1.0, math.log2(1 + count) / scale)


def features(
    matches: Sequence[Match],
    tallies: Mapping[str, Tally],
    config: MatchConfig,
    *,
    text_ranking: Sequence[str],
    job_error: bool,
    lines: int,
) -> tuple[dict[str, float], list[str]] | None:
    """The features of the best match and the cases a reply would name (the best and, when as sure, one
    companion), or None when the best case has no proof of its own."""
    if not matches:
        return None
    best = matches[0]
    tally = tallies[best.case_id]
    elsewhere = any(t.decisive for case_id, t in tallies.items() if case_id != best.case_id)
    if not has_proof(tally, elsewhere, config):
        return None
    best_lines = tally.line_set()

    def companion(other: Match) -> bool:
        if best.failure_class is not None and other.failure_class == best.failure_class:
            return True
        other_lines = tallies[other.case_id].line_set() if other.case_id in tallies else set()
        return bool(other_lines) and other_lines <= best_lines

    rivals = [m for m in matches[1:] if not companion(m)]
    margin = best.score - max(m.score for m in rivals) if rivals else 100
    for rival in rivals:
        within = best.score - rival.score < config.reply_margin and rival.case_id in tallies
        rival_elsewhere = any(t.decisive for case_id, t in tallies.items() if case_id != rival.case_id)
        if within and has_proof(tallies[rival.case_id], rival_elsewhere, config):
            return None  # two failures, each proved: not the bot's choice to make unprompted
    classes = {m.case_id: m.failure_class for m in matches}
    top_text = text_ranking[0] if text_ranking else None
    agrees = top_text is not None and (
        top_text == best.case_id or (best.failure_class is not None and classes.get(top_text) == best.failure_class)
    )
    signature_proof = bool(tally.decisive) or (bool(tally.fallout) and not elsewhere)
    hit = len(tally.decisive) + len(tally.fallout) + len(tally.supporting)
    found = {
        "exact": float(best.tier is Tier.EXACT),
        "strong": float(best.tier is Tier.STRONG),
        "score": best.score / 100,
        "margin": max(-100, min(100, margin)) / 100,
        "lines": _log_share(len(best_lines), 4.0),
        "signatures": _log_share(hit, 3.0),
        "fallout_only": float(not tally.decisive and bool(tally.fallout)),
        "text_only": float(not signature_proof),
        "decisive_elsewhere": float(elsewhere),
        "text_agrees": float(agrees),
        "job_error": float(job_error),
        "length": min(1.0, math.log10(1 + lines) / 5),
    }
    close = [
        m.case_id
        for m in matches[1:]
        if companion(m) and m.tier is not Tier.WEAK and best.score - m.score <= config.same_class_band
    ]
    return found, [best.case_id, *close[:1]]


def decide(
    matches: Sequence[Match],
    tallies: Mapping[str, Tally],
    config: MatchConfig,
    model: ReplyModel,
    *,
    text_ranking: Sequence[str],
    job_error: bool,
    lines: int,
) -> Decision:
    found = features(matches, tallies, config, text_ranking=text_ranking, job_error=job_error, lines=lines)
    if found is None:
        return Decision(False, [], None)
    values, names = found
    evidence = tallies[matches[0].case_id].text_evidence
    if values["text_only"] and evidence is not None and evidence.kind == "example":
        confirmed = matches[0].tier is not Tier.WEAK
        return Decision(confirmed, names if confirmed else [], None)
    probability = model.probability(values)
    reply = probability >= model.threshold
    return Decision(reply, names if reply else [], values, probability)
