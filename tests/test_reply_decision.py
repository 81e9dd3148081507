"""The unprompted reply decision (``bot.matching.decision``): a logistic model over named features, fitted
on the `dev` real pastes by ``bench/reply_fit.py``, behind two rules no weight can trade away."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench.quality import load_real
from bench.reply_fit import MAX_UNRELATED, MAX_WRONG, MODEL_JSON, choose_threshold, fit, out_of_fold, rows_of
from bot.library.case_store import load_library
from bot.matching.decision import FEATURES, ReplyModel
from bot.matching.matcher import Matcher
from bot.matching.reply_weights import REPLY_MODEL
from bot.matching.signatures import compile_signature
from bot.model.case import Case

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = load_library(ROOT / "cases")

ALWAYS = ReplyModel(weights={}, bias=60.0, threshold=0.0)
NEVER = ReplyModel(weights={}, bias=-60.0, threshold=1.0)
ECC = "[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
# A library of one case with hints only: however many hit, they are never proof.
HINTS = Case.model_validate(
    {
        "id": "LOC-0001",
        "title": {"en": "Hints only", "ko": "힌트만"},
        "failure_class": "host-oom",
        "signatures": [
            {"pattern": "exitcode: -9", "strength": "supporting"},
            {"pattern": "Signal 9 (SIGKILL) received", "strength": "supporting"},
            {"kind": "regex", "pattern": "ChildFailedError", "strength": "supporting"},
        ],
    }
)
HINTS_ONLY = (
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    "  exitcode: -9 (pid: 4242)\n"
    "Signal 9 (SIGKILL) received by PID 4242\n"
)


def _matcher(model: ReplyModel = REPLY_MODEL) -> Matcher:
    return Matcher(LIBRARY.cases, LIBRARY.signatures, sets=LIBRARY.sets, reply_model=model)


def test_the_bundled_weights_are_the_data_file() -> None:
    data = json.loads(MODEL_JSON.read_text(encoding="utf-8"))
    assert data["weights"] == dict(REPLY_MODEL.weights)
    assert data["bias"] == REPLY_MODEL.bias and data["threshold"] == REPLY_MODEL.threshold
    assert set(data["weights"]) == set(FEATURES)
    # Fitted within the limits the issue set, under cross-validation grouped by project.
    assert data["fitted"]["cross_validated"]["wrong"] <= MAX_WRONG
    assert data["fitted"]["cross_validated"]["unrelated"] <= MAX_UNRELATED
    assert data["fitted"]["folds"] >= 5 and data["fitted"]["projects"] >= 100


def test_the_bundled_model_is_what_dev_fits_today() -> None:
    """A change to the cases or the matcher that moves the features needs a refit (python -m bench.reply_fit)."""
    matcher = _matcher()
    rows = rows_of(matcher, load_real("dev"))
    threshold = choose_threshold(rows, out_of_fold(rows), guard=0.05)
    model = fit(rows, threshold)
    assert model.threshold == pytest.approx(REPLY_MODEL.threshold, abs=1e-3)
    for name in FEATURES:
        assert model.weights[name] == pytest.approx(REPLY_MODEL.weights[name], abs=1e-3), name


def test_probability_is_the_logistic_of_the_weighted_sum() -> None:
    model = ReplyModel(weights={"exact": 2.0, "score": -1.0}, bias=0.5, threshold=0.6)
    p = model.probability({"exact": 1.0, "score": 0.5, "length": 9.0})  # a feature without a weight adds nothing
    assert p == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert model.replies({"exact": 1.0, "score": 0.5})
    assert not model.replies({"exact": 0.0, "score": 0.5})  # 1 / (1 + e^0) = 0.5 < 0.6
    assert model.probability({"exact": 1e9}) == pytest.approx(1.0)  # clamped, never an overflow


def test_supporting_hits_alone_never_reply_whatever_the_weights() -> None:
    signatures = [compile_signature(HINTS.id, n, sig) for n, sig in enumerate(HINTS.signatures)]
    result = Matcher({HINTS.id: HINTS}, signatures, reply_model=ALWAYS).match(HINTS_ONLY, slack_encoded=False)
    assert [m.case_id for m in result.matches] == ["LOC-0001"]
    assert len(result.matches[0].evidence) == 3 and not result.reply
    assert result.reply_features is None and result.reply_probability is None


def test_the_model_decides_among_matches_with_proof() -> None:
    sure = _matcher(ALWAYS).match(ECC, slack_encoded=False)
    assert sure.reply and sure.reply_case_ids[0] in {"IL-0427", "IL-0414"}
    shy = _matcher(NEVER).match(ECC, slack_encoded=False)
    assert not shy.reply and shy.reply_case_ids == []
    assert shy.reply_features is not None
    assert set(shy.reply_features) == set(FEATURES)
    assert shy.reply_features["exact"] == 1.0 and shy.reply_features["text_only"] == 0.0
    assert all(-1.0 <= value <= 1.0 for value in shy.reply_features.values())
    bundled = _matcher().match(ECC, slack_encoded=False)
    assert bundled.reply and bundled.reply_probability is not None
    assert bundled.reply_probability >= REPLY_MODEL.threshold


def test_a_job_error_beside_rank_reports_stays_outside_the_model() -> None:
    paste = (
        "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "[rank1]:[E ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600003 "
        "milliseconds before timing out.\n"
    )
    result = _matcher(ALWAYS).match(paste, slack_encoded=False)
    assert not result.reply and result.job_error is not None
    assert result.reply_probability is None
