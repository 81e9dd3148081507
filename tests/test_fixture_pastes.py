"""Every fixture paste, every run: negatives never get an unprompted reply, positives stay ranked.

The pastes in tests/fixtures/pastes were written from the case facts and from how these failures look
in real logs, before the signatures were tuned; each carries the case ids a human would accept. The
floors below sit just under what the matcher achieves today, so a change that makes matching worse fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.quality import PASTES, load_pastes
from bot.library.case_store import load_library
from bot.matching.matcher import Matcher
from bot.matching.quality import evaluate

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = load_library(ROOT / "cases")
MATCHER = Matcher(LIBRARY.cases, LIBRARY.signatures)
ALL = load_pastes()
REPORT = evaluate(MATCHER, ALL)
NEGATIVES = [o for o in REPORT.outcomes if not o.positive]
POSITIVES = [o for o in REPORT.outcomes if o.positive]


def test_every_fixture_is_labelled_with_known_ids() -> None:
    for meta in PASTES.glob("*.json"):
        label = json.loads(meta.read_text(encoding="utf-8"))
        assert set(label) == {"accept", "reply", "note"}, meta.name
        assert all(case_id in LIBRARY.cases for case_id in label["accept"]), meta.name
        assert meta.with_suffix(".txt").exists()
        if not label["accept"]:
            assert label["reply"] is False


@pytest.mark.parametrize("outcome", NEGATIVES, ids=lambda o: o.name)
def test_unrelated_error_gets_no_channel_reply(outcome: object) -> None:
    assert not outcome.replied


@pytest.mark.parametrize("outcome", POSITIVES, ids=lambda o: o.name)
def test_a_reply_never_names_a_wrong_case(outcome: object) -> None:
    replied = outcome.replied
    assert not replied or outcome.correct_reply, outcome.reply_ids


def test_quality_floors() -> None:
    summary = REPORT.summary()
    assert summary["positives"] >= 100 and summary["negatives"] >= 40
    assert summary["hit@1"] >= 0.88
    assert summary["hit@3"] >= 0.92
    assert summary["correct_reply"] >= 0.75
    assert summary["false_reply"] == 0.0
