"""Guards on the bundled library: every file validates, every signature hits its own examples and none
of the unrelated fixtures (a signature must never fire on healthy logs or on ordinary user bugs)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bot.library.case_store import load_library
from bot.matching.normalize import clean

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = load_library(ROOT / "cases")
PASTES = ROOT / "tests" / "fixtures" / "pastes"
CASE_FACTS_IDS = ["IL-0125", "IL-0427", "IL-0415", "IL-0414", "IL-0421", "IL-0238", "IL-0239"] + [
    f"PUB-{n:04d}" for n in range(1, 28)
]
# Library growth: classes the first cases did not cover, each from public sources and real pastes.
GROWTH_IDS = [f"PUB-{n:04d}" for n in range(28, 40)]
REAL_MANIFEST = ROOT / "tests" / "fixtures" / "real" / "manifest.tsv"


def test_bundled_library_has_no_problem_at_all() -> None:
    assert [str(p) for p in LIBRARY.problems] == []


def test_the_brief_cases_are_all_there() -> None:
    assert sorted(LIBRARY.cases) == sorted(CASE_FACTS_IDS + GROWTH_IDS)


@pytest.mark.parametrize("case_id", CASE_FACTS_IDS + GROWTH_IDS)
def test_each_case_is_bilingual_and_has_a_signature(case_id: str) -> None:
    case = LIBRARY.cases[case_id]
    for field in ("title", "summary", "lessons"):
        assert getattr(case, field).langs() == ("en", "ko"), field
    assert case.remediation and all(step.text.langs() == ("en", "ko") for step in case.remediation)
    assert case.signatures and case.failure_class
    assert case.sources, "every case cites its sources"


def test_file_names_match_ids() -> None:
    for case_id, path in LIBRARY.paths.items():
        assert Path(path).stem == case_id


def test_no_il_number_is_invented() -> None:
    il_ids = {cid for cid in LIBRARY.cases if cid.startswith("IL-")}
    assert il_ids == {"IL-0125", "IL-0427", "IL-0415", "IL-0414", "IL-0421", "IL-0238", "IL-0239"}


def test_unverified_figures_stay_out() -> None:
    il0421 = json.dumps(LIBRARY.cases["IL-0421"].model_dump(mode="json"), ensure_ascii=False)
    assert "31.19" not in il0421 or "unverified" in il0421.lower()


def _negatives() -> list[Path]:
    names = []
    for meta in sorted(PASTES.glob("*.json")):
        if not json.loads(meta.read_text(encoding="utf-8"))["accept"]:
            names.append(meta.with_suffix(".txt"))
    return names


def test_there_are_enough_fixtures() -> None:
    labels = [json.loads(p.read_text(encoding="utf-8")) for p in PASTES.glob("*.json")]
    positives = [label for label in labels if label["accept"]]
    assert len(positives) >= 40 + 3 * 17
    assert len(labels) - len(positives) >= 25
    per_class: Counter[str] = Counter()
    for label in positives:
        for case_id in label["accept"]:
            per_class[LIBRARY.cases[case_id].failure_class or ""] += 1
    # The classes added later are covered by real pastes (both splits) rather than written ones.
    with REAL_MANIFEST.open(encoding="utf-8") as handle:
        for row in list(handle)[1:]:
            accept = row.split("\t")[1]
            for case_id in accept.split(","):
                if case_id in GROWTH_IDS:
                    per_class[LIBRARY.cases[case_id].failure_class or ""] += 1
    # Failures that print little or nothing of their own get fewer pastes, but never none.
    quiet = {"checkpoint-bloat", "checkpoint-resume-state", "silent-data-corruption"}
    classes = {case.failure_class or "" for case in LIBRARY.cases.values()}
    thin = {name: per_class[name] for name in classes if per_class[name] < (1 if name in quiet else 3)}
    # (nccl-version-skew counts its real pastes: 3, one in test; see test_real_corpus.)
    assert thin == {}, "every failure class needs written fixture pastes (3, or 1 for a quiet failure)"


@pytest.mark.parametrize("negative", _negatives(), ids=lambda p: p.stem)
def test_no_decisive_signature_fires_on_a_negative(negative: Path) -> None:
    text = clean(negative.read_bytes(), 4 << 20).text
    fired = [
        f"{sig.case_id}:{sig.pattern}"
        for sig in LIBRARY.signatures
        if sig.decisive and any(sig.search(line) for line in text.split("\n"))
    ]
    assert fired == []
