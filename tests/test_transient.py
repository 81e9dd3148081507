"""Transient is not failure: one NaN gradient norm early in a mixed-precision run that then logs finite
values is loss scaling at work (``bot.matching.numerics``), so the bot does not post it unprompted."""

from __future__ import annotations

import pytest

from bot.matching.matcher import Matcher
from bot.matching.numerics import transient
from bot.matching.reply_weights import REPLY_MODEL
from bot.matching.signatures import compile_signature
from bot.model.case import Case
from bot.replies.render import match_reply

NAN_CASE = Case.model_validate(
    {
        "id": "LOC-0020",
        "title": {"en": "Training diverged", "ko": "학습이 발산했다"},
        "failure_class": "numerics-loss-spike",
        "signatures": [
            {"kind": "regex", "pattern": r"['\"]?grad[_ ]norm['\"]?:\s{0,3}(?:nan|inf)\b", "strength": "decisive"},
            {"kind": "regex", "pattern": r"['\"]loss['\"]:\s{0,3}nan\b", "strength": "decisive"},
        ],
    }
)
SIGNATURES = [compile_signature(NAN_CASE.id, n, sig) for n, sig in enumerate(NAN_CASE.signatures)]
MATCHER = Matcher({NAN_CASE.id: NAN_CASE}, SIGNATURES, reply_model=REPLY_MODEL)


def _hf(grad_norms: list[str], loss: str = "2.31") -> str:
    return "".join(
        f"{{'loss': {loss}, 'grad_norm': {g}, 'learning_rate': 1e-05, 'epoch': {0.01 * (n + 1):.2f}}}\n"
        for n, g in enumerate(grad_norms)
    )


def test_one_nan_grad_norm_then_finite_values_is_loss_scaling() -> None:
    result = MATCHER.match(_hf(["nan", "1.84", "1.62", "1.55"]), slack_encoded=False)
    assert result.matches[0].case_id == "LOC-0020"
    assert not result.reply and result.reply_probability is None
    assert result.transient is not None and "not divergence" in result.transient
    # Asked explicitly, the case is offered with the reason it was not posted.
    reply = match_reply(result, {NAN_CASE.id: NAN_CASE}, ["en"], explicit=True)
    assert "loss scaling skipping a step, not divergence" in reply.plain


@pytest.mark.parametrize(
    ("paste", "why"),
    [
        (_hf(["nan", "nan", "nan", "1.2", "1.1"]), "three NaN lines are not a one-off"),
        (_hf(["1.9", "1.84", "nan", "1.5", "nan"]), "the last value logged is NaN again"),
        (_hf(["nan", "1.84"]), "one finite value is not yet a recovery"),
        (_hf(["nan"]), "nothing after it"),
        (_hf(["nan", "1.84", "1.62"], loss="nan"), "the loss itself is NaN"),
        (
            _hf(["nan", "1.84", "1.62"]) + "Current loss scale already at minimum - cannot decrease scale anymore.\n",
            "the scaler hit its floor",
        ),
    ],
)
def test_divergence_keeps_its_reply(paste: str, why: str) -> None:
    result = MATCHER.match(paste, slack_encoded=False)
    assert result.transient is None, why
    assert result.reply, why


def test_two_skipped_steps_apart_are_still_loss_scaling() -> None:
    result = MATCHER.match(_hf(["nan", "1.84", "inf", "1.5", "1.4"]), slack_encoded=False)
    assert result.transient is not None and not result.reply


def test_megatron_and_key_value_formats() -> None:
    megatron = [
        f" iteration {n:8d}/  500000 | lm loss: {loss} | loss scale: {scale} | grad norm: {norm} |"
        f" number of skipped iterations: {skipped:3d} |"
        for n, loss, scale, norm, skipped in [
            (10, "1.0E+01", "65536.0", "nan", 1),
            (11, "9.9E+00", "32768.0", "12.345", 0),
            (12, "9.8E+00", "32768.0", "11.002", 0),
        ]
    ]
    assert transient(megatron, [0]) is not None
    lightning = ["step=3 grad_norm=inf loss=2.1", "step=4 grad_norm=0.91 loss=2.0", "step=5 grad_norm=0.88 loss=1.9"]
    assert transient(lightning, [0]) is not None
    assert transient(lightning, []) is None
    # A proof line that is not a gradient norm is not for this rule to judge.
    assert transient(["RuntimeError: Function 'MulBackward0' returned nan values", *lightning[1:]], [0]) is None


def test_the_bundled_library_agrees() -> None:
    """The written fixtures beside this file's cases, on the bundled cases: a one-off stays quiet, a NaN that
    stays gets the divergence case."""
    from bench.quality import PASTES
    from bot.library.case_store import load_library
    from bot.ops.settings import BUNDLED_CASES

    library = load_library(BUNDLED_CASES)
    matcher = Matcher(library.cases, library.signatures, sets=library.sets)
    one_off = (PASTES / "transient-ops-numerics-one-nan-grad-norm-recovers.txt").read_bytes()
    calm = matcher.match(one_off, slack_encoded=False)
    assert calm.matches and calm.matches[0].case_id == "PUB-0020"
    assert not calm.reply and calm.transient is not None
    diverged = matcher.match((PASTES / "ops-numerics-grad-norm-nan-stays.txt").read_bytes(), slack_encoded=False)
    assert diverged.reply and diverged.reply_case_ids[0] == "PUB-0020" and diverged.transient is None
