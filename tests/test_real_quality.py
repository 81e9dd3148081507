"""Matching quality, every run, on the written fixtures and on both splits of the real-paste corpus.

* No paste gets a reply naming a wrong case, and no fixture or dev negative gets an unprompted reply.
* The floors sit just under what the matcher achieves today, so a change that makes matching worse fails.
  ``test`` has its own floors: it is never learned from, so its figures are the honest ones.
* Every signature learned from real pastes names their URLs in ``sources``; those are ``dev`` sources,
  and every example line it shows is verbatim in a dev paste from one of them.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from bench.quality import PASTES, REAL, load_pastes, load_real
from bot.library.case_store import load_library
from bot.matching.matcher import Matcher
from bot.matching.quality import Outcome, Report, bm25_baseline, evaluate

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = load_library(ROOT / "cases")
MATCHER = Matcher(LIBRARY.cases, LIBRARY.signatures, sets=LIBRARY.sets)
REPORTS: dict[str, Report] = {
    "fixtures": evaluate(MATCHER, load_pastes()),
    "dev": evaluate(MATCHER, load_real("dev")),
    "test": evaluate(MATCHER, load_real("test")),
}
# Measured 2026-12-03 (docs/quality/figures.md, written by `make quality`); each floor a little under the figure.
FLOORS = {
    "fixtures": {"hit@1": 0.94, "hit@3": 0.97, "reply": 0.83},
    "dev": {"hit@1": 0.97, "hit@3": 0.98, "reply": 0.92},
    "test": {"hit@1": 0.91, "hit@3": 0.93, "reply": 0.83},
}
CEILINGS = {
    "fixtures": {"negative_reply": 0.0, "empty": 0.0},
    "dev": {"negative_reply": 0.0, "empty": 0.01},
    "test": {"negative_reply": 0.05, "empty": 0.02},
}


def _outcomes(kind: str) -> list[tuple[str, Outcome]]:
    return [(name, o) for name, report in REPORTS.items() for o in report.outcomes if o.positive == (kind == "+")]


def _rows() -> list[dict[str, str]]:
    with (REAL / "manifest.tsv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.mark.parametrize(("split", "outcome"), _outcomes("+"), ids=lambda v: v if isinstance(v, str) else v.name)
def test_a_reply_never_names_a_wrong_case(split: str, outcome: Outcome) -> None:
    assert not outcome.wrong_reply, (split, outcome.reply_ids)


@pytest.mark.parametrize(
    ("split", "outcome"),
    [(s, o) for s, o in _outcomes("-") if s != "test"],
    ids=lambda v: v if isinstance(v, str) else v.name,
)
def test_unrelated_error_gets_no_channel_reply(split: str, outcome: Outcome) -> None:
    assert not outcome.replied, (split, outcome.reply_ids)


@pytest.mark.parametrize("split", list(REPORTS))
def test_quality_floors(split: str) -> None:
    summary = REPORTS[split].summary()
    for key, floor in FLOORS[split].items():
        assert summary[key] >= floor, (key, summary[key])
    for key, ceiling in CEILINGS[split].items():
        assert summary[key] <= ceiling, (key, summary[key])


@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_matcher_beats_plain_bm25_on_real_pastes(split: str) -> None:
    pastes = load_real(split)
    baseline = bm25_baseline(list(LIBRARY.cases.values()), pastes).summary()
    ours = REPORTS[split].summary()
    assert ours["hit@1"] > baseline["hit@1"] + 0.05
    assert ours["hit@3"] >= baseline["hit@3"]


def test_every_fixture_is_labelled_with_known_ids() -> None:
    for meta in PASTES.glob("*.json"):
        label = json.loads(meta.read_text(encoding="utf-8"))
        assert set(label) == {"accept", "reply", "note"}, meta.name
        assert all(case_id in LIBRARY.cases for case_id in label["accept"]), meta.name
        assert meta.with_suffix(".txt").exists()
        if not label["accept"]:
            assert label["reply"] is False


def test_signatures_learn_only_from_dev_pastes() -> None:
    rows = _rows()
    split_of = {row["url"]: row["split"] for row in rows}
    dev_text: dict[str, str] = {}
    for row in rows:
        if row["split"] == "dev":
            text = (REAL / "pastes" / row["file"]).read_text(encoding="utf-8")
            dev_text[row["url"]] = dev_text.get(row["url"], "") + "\n" + text
    learned = 0
    for case in LIBRARY.cases.values():
        for signature in case.signatures:
            real = [url for url in signature.sources if url in split_of]
            assert all(split_of[url] == "dev" for url in real), (case.id, signature.pattern)
            if not real:
                continue
            learned += 1
            corpus = "\n".join(dev_text[url] for url in real)
            shown = [line for line in signature.examples if line in corpus]
            assert shown, (case.id, signature.pattern, "no example line is verbatim in its dev pastes")
    assert learned >= 20
