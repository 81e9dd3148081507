"""Guards on the bundled library: every file validates, every signature hits its own examples and none
of the unrelated fixtures (a signature must never fire on healthy logs or on ordinary user bugs)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.library.case_store import load_library
from bot.library.review import review_library
from bot.matching.normalize import clean

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = load_library(ROOT / "cases")
PASTES = ROOT / "tests" / "fixtures" / "pastes"
CASE_FACTS_IDS = ["IL-0125", "IL-0427", "IL-0415", "IL-0414", "IL-0421", "IL-0238", "IL-0239"] + [
    f"PUB-{n:04d}" for n in range(1, 28)
]
# Library growth: classes the first cases did not cover, each from public sources and real pastes.
GROWTH_IDS = [f"PUB-{n:04d}" for n in range(28, 45)]
REAL_MANIFEST = ROOT / "tests" / "fixtures" / "real" / "manifest.tsv"
HANGUL = re.compile("[\uac00-\ud7a3]")
# What a Korean note copies from the English one: Xid numbers, codes, flags, env variables, quoted strings.
COPIED = re.compile(
    r"Xid \d+|errno \d+|status \d+|error \d+|(?<![A-Za-z])'[^']+'(?![A-Za-z])|-[a-z]\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"
)


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
        # A transient- fixture is quiet through the matcher's transient rule (tests/test_transient.py).
        if not json.loads(meta.read_text(encoding="utf-8"))["accept"] and not meta.name.startswith("transient-"):
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


# -- Korean notes, the glossary and what commands assume ------------------------------------------------------


def _signature_items() -> list[tuple[str, int, dict[str, Any]]]:
    items = []
    for path in sorted((ROOT / "cases").glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        items += [(case["id"], number, sig) for number, sig in enumerate(case.get("signatures", []))]
    return items


def test_every_signature_has_a_korean_note_next_to_the_english_one() -> None:
    items = _signature_items()
    assert len(items) == 259
    for case_id, number, sig in items:
        where = f"{case_id} signatures[{number}]"
        keys = list(sig)
        assert keys[keys.index("note") + 1] == "note_ko", where
        note, note_ko = sig["note"], sig["note_ko"]
        assert HANGUL.search(note_ko), where
        assert len(note_ko) <= 1.3 * len(note), where
        assert not note_ko.rstrip(".").endswith("다"), f"{where}: a label, not a sentence"
        # Xid numbers, errno/status codes, flags and identifiers are copied exactly.
        for token in COPIED.findall(note):
            assert token in note_ko, f"{where}: {token!r} missing"


def test_case_files_keep_their_json_layout() -> None:
    for path in sorted((ROOT / "cases").glob("*.json")):
        text = path.read_text(encoding="utf-8")
        assert text == json.dumps(json.loads(text), ensure_ascii=False, indent=2) + "\n", path.name


def _planted(tmp_path: Path, case_id: str, edit: Callable[[dict[str, Any]], None]) -> list[str]:
    case = json.loads((ROOT / "cases" / f"{case_id}.json").read_text(encoding="utf-8"))
    edit(case)
    (tmp_path / f"{case_id}.json").write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")
    library = load_library(tmp_path)
    return [str(p) for p in [*library.problems, *review_library(library)]]


@pytest.mark.parametrize(
    ("slip", "term"),
    [("집합 통신", "collective"), ("콜렉티브", "collective"), ("집단 통신", "collective"), ("손실", "loss")],
)
def test_the_new_glossary_slips_are_reported(tmp_path: Path, slip: str, term: str) -> None:
    def edit(case: dict[str, Any]) -> None:
        case["summary"]["ko"] += f" {slip} 이 튀었다."
        case["runbook"][0]["text"]["ko"] += f" {slip} 을 본다."
        case["signatures"][0]["note_ko"] += f"; {slip} 멈춤"

    warnings = [p for p in _planted(tmp_path, "PUB-0020", edit) if p.startswith("warning")]
    for field in ("summary.ko", "runbook[0].text.ko", "signatures[0].note_ko"):
        assert any(f"{field}: uses {slip!r}" in p and f"Korean for {term!r}" in p for p in warnings), field


def test_note_ko_of_a_library_owned_case_is_checked(tmp_path: Path) -> None:
    # IL- text is the library's, but signatures (and their note_ko) are ours.
    def edit(case: dict[str, Any]) -> None:
        case["signatures"][0]["note_ko"] += "; 집합 통신 타임아웃"

    problems = _planted(tmp_path, "IL-0421", edit)
    assert any("signatures[0].note_ko: uses '집합 통신'" in p for p in problems), problems


def test_data_loss_is_not_a_loss_slip(tmp_path: Path) -> None:
    def edit(case: dict[str, Any]) -> None:
        case["summary"]["ko"] += " 데이터 손실은 없었고 패킷 손실률도 낮았다."
        case["signatures"][0]["note_ko"] += "; 데이터 손실"

    problems = _planted(tmp_path, "PUB-0031", edit)
    assert not any("손실" in p for p in problems), problems
    # The exception covers only the phrase: a bare 손실 next to it is still reported.
    problems = _planted(tmp_path, "PUB-0031", lambda case: case["lessons"].update(ko="데이터 손실 뒤 손실 급등"))
    assert sum("lessons.ko: uses '손실'" in p for p in problems) == 1, problems


def test_a_command_without_assumes_is_a_warning(tmp_path: Path) -> None:
    def edit(case: dict[str, Any]) -> None:
        del case["runbook"][0]["assumes"]
        case["runbook"][1]["assumes"] = {"en": "Slurm operator rights."}

    warnings = [p for p in _planted(tmp_path, "PUB-0031", edit) if p.startswith("warning")]
    assert [p.split(": ")[2] for p in warnings] == ["runbook[0].assumes", "runbook[1].assumes"], warnings
    assert all("a step with a command needs `assumes` in English and Korean" in p for p in warnings)


def _reboot(assumes: dict[str, str]) -> Callable[[dict[str, Any]], None]:
    def edit(case: dict[str, Any]) -> None:
        step = next(s for s in case["runbook"] if "scontrol reboot" in (s.get("command") or ""))
        step["assumes"] = assumes

    return edit


def test_a_reboot_that_does_not_say_it_waits_for_idle_is_a_warning(tmp_path: Path) -> None:
    silent = {"en": "Slurm operator rights.", "ko": "Slurm 운영자 권한이 필요하다."}
    problems = _planted(tmp_path, "PUB-0029", _reboot(silent))
    for lang in ("en", "ko"):
        assert any(p.startswith("warning") and f"assumes.{lang}: reboot:" in p for p in problems), problems
    half = {"en": "Slurm operator; ASAP waits until the node is idle.", "ko": "Slurm 운영자 권한이 필요하다."}
    problems = _planted(tmp_path, "PUB-0029", _reboot(half))
    assert [p for p in problems if "reboot:" in p] == [p for p in problems if "assumes.ko: reboot:" in p] != []
    said = {"en": "ASAP waits until the node is idle.", "ko": "ASAP 는 노드가 유휴 상태가 될 때까지 기다린다."}
    assert not any("reboot:" in p for p in _planted(tmp_path, "PUB-0029", _reboot(said)))


def test_every_command_says_what_it_assumes() -> None:
    for case in LIBRARY.cases.values():
        for number, step in enumerate(case.runbook):
            if step.command:
                assert step.assumes is not None and step.assumes.langs() == ("en", "ko"), f"{case.id}[{number}]"
