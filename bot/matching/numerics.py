"""Transient is not failure: a NaN or inf gradient norm once or twice, then finite ones, is mixed-precision
loss scaling at work (the step is skipped and the scale lowered), not a diverging run. Pure.

The rule reads the lines a case's proof came from. When every one of them is a gradient-norm value that
is NaN or inf (no NaN loss, no "minimum loss scale" line) and there are at most ``_FEW`` of them, and the
paste then logs at least ``_FINITE_AFTER`` finite gradient norms after the last, the proof is transient:
the matcher does not answer unprompted, and the result says why.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

from bot.matching.signatures import re2_options

# A gradient norm as frameworks log it: HF Trainer's {'grad_norm': nan}, Megatron's "grad norm: 1.23 |",
# Lightning and DeepSpeed's grad_norm=inf, "gradient norm 0.5". The value is captured.
_NUMBER = r"[-+]?\d{1,12}(?:\.\d{1,20})?(?:e[-+]?\d{1,3})?"
_GRAD_NORM = re2.compile(
    r"""(?i)\b(?:grad(?:ient)?[_ ]norm)['"]?\s{0,3}[:=]?\s{0,3}['"]?(nan|[-+]?inf(?:inity)?|""" + _NUMBER + r")\b",
    re2_options(),
)
# What proves divergence however few lines say it: the loss itself NaN or inf, or the scaler at its floor.
_DIVERGED = re2.compile(
    r"""(?i)\b(?:lm[_ ])?loss['"]?\s{0,3}[:=]\s{0,3}['"]?(?:nan|[-+]?inf)\b"""
    r"|minimum loss scale|loss scale already at minimum",
    re2_options(),
)
_FEW = 2
_FINITE_AFTER = 2
_LOOK_AHEAD = 2_000  # lines read after the last NaN line
_LINE_CHARS = 2_000


def _value(line: str) -> str | None:
    found = _GRAD_NORM.search(line[:_LINE_CHARS])
    return found.group(1).lower() if found else None


def _finite(value: str) -> bool:
    return "nan" not in value and "inf" not in value


def transient(raw_lines: Sequence[str], proof: Sequence[int]) -> str | None:
    """Why the proof on lines ``proof`` (0-based) is loss scaling at work rather than divergence, or None."""
    if not proof or len(set(proof)) > _FEW:
        return None
    for number in proof:
        line = raw_lines[number]
        value = _value(line)
        if value is None or _finite(value) or _DIVERGED.search(line[:_LINE_CHARS]):
            return None
    last = max(proof)
    finite = 0
    for line in raw_lines[last + 1 : last + 1 + _LOOK_AHEAD]:
        if _DIVERGED.search(line[:_LINE_CHARS]):
            return None
        value = _value(line)
        if value is None:
            continue
        if not _finite(value):
            return None  # NaN again after the finite ones started: not a one-off
        finite += 1
    if finite < _FINITE_AFTER:
        return None
    return (
        f"a gradient norm was NaN or inf on {len(set(proof))} line(s), then {finite} finite ones followed: "
        "loss scaling skipping a step, not divergence"
    )
