"""The start-up snapshot: a second start reads it instead of the case files, gives the same answers, rebuilds
what a changed file changes, and never trusts a snapshot that is corrupt, foreign or planted."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import NOW

from bot.app.service import IncidentService
from bot.library.case_store import load_library
from bot.library.snapshot import FILES, LIBRARY, load_with_snapshot
from bot.ops.clock import fixed
from bot.ops.settings import BUNDLED_CASES
from bot.storage.memory import MemoryStorage

PASTES = Path(__file__).parent / "fixtures" / "pastes"
SAMPLES = sorted(PASTES.glob("*.txt"))[::6]


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    directory = tmp_path / "cases"
    shutil.copytree(BUNDLED_CASES, directory)
    return directory


def answers(service: IncidentService) -> list[tuple[bool, list[tuple[str, str, int]]]]:
    out = []
    for path in SAMPLES:
        result = service.match(path.read_bytes(), slack_encoded=False)
        out.append((result.reply, [(m.case_id, m.tier.value, m.score) for m in result.matches]))
    return out


def service_for(cases: Path, root: Path) -> IncidentService:
    return IncidentService(load_with_snapshot(cases, root), MemoryStorage(), now=fixed(NOW), deadline_s=30.0)


def test_a_second_start_reads_the_snapshot_and_answers_the_same(cases: Path, tmp_path: Path) -> None:
    root = tmp_path / "snapshots"
    expected = answers(IncidentService(load_library(cases), MemoryStorage(), now=fixed(NOW), deadline_s=30.0))
    first = service_for(cases, root)
    assert answers(first) == expected
    [snapshot] = [p for p in root.iterdir() if p.is_dir()]
    assert {"case-text", "search"} <= {p.name for p in snapshot.iterdir()}
    second = service_for(cases, root)
    library = second.library
    assert library.snapshot is not None and library.snapshot.path == snapshot
    assert library.cases.loaded == 0  # nothing read in full yet: summaries and saved indexes only
    assert answers(second) == expected
    assert [c.id for c in second.search_cases("ecc")][:2] == [c.id for c in first.search_cases("ecc")][:2]
    assert second.get_case("IL-0427") == first.get_case("IL-0427")
    assert library.cases.loaded >= 1


def test_a_changed_added_or_removed_file_is_seen(cases: Path, tmp_path: Path) -> None:
    root = tmp_path / "snapshots"
    service_for(cases, root)
    data = json.loads((cases / "IL-0414.json").read_text(encoding="utf-8"))
    data["title"]["en"] = "A title changed after the snapshot"
    (cases / "IL-0414.json").write_text(json.dumps(data), encoding="utf-8")
    added = json.loads((cases / "IL-0427.json").read_text(encoding="utf-8"))
    added["id"] = "IL-9427"
    (cases / "IL-9427.json").write_text(json.dumps(added), encoding="utf-8")
    (cases / "PUB-0013.json").unlink()
    later = service_for(cases, root)
    case = later.get_case("IL-0414")
    assert case is not None and case.title.en == "A title changed after the snapshot"
    assert later.get_case("IL-9427") is not None and later.get_case("PUB-0013") is None
    assert later.library.summaries["IL-0414"].title.en == "A title changed after the snapshot"
    assert len([p for p in root.iterdir() if p.is_dir()]) == 2
    # And a third start with nothing changed opens the new snapshot as it is.
    again = service_for(cases, root)
    assert again.library.cases.loaded == 0 and again.get_case("IL-9427") is not None


def test_unchanged_files_are_not_checked_again(cases: Path, tmp_path: Path) -> None:
    root = tmp_path / "snapshots"
    service_for(cases, root)
    [first] = [p for p in root.iterdir() if p.is_dir()]
    files = json.loads((first / FILES).read_bytes())
    # What the earlier snapshot made of IL-0427's unchanged bytes is what the next load uses: mark it.
    for entry in files["files"]:
        if entry["name"] == "IL-0427.json":
            entry["case"]["summary"]["title"]["en"] = "marker from the earlier snapshot"
    (first / FILES).write_text(json.dumps(files), encoding="utf-8")
    os.utime(cases / "IL-0414.json")  # a new key: the library is loaded again
    time.sleep(0.01)
    later = load_with_snapshot(cases, root)
    assert later.summaries["IL-0427"].title.en == "marker from the earlier snapshot"


@pytest.mark.parametrize("damage", ["truncated", "foreign", "not-json"])
def test_a_damaged_or_foreign_snapshot_is_rebuilt(cases: Path, tmp_path: Path, damage: str) -> None:
    root = tmp_path / "snapshots"
    expected = answers(service_for(cases, root))
    [snapshot] = [p for p in root.iterdir() if p.is_dir()]
    library_file = snapshot / LIBRARY
    if damage == "truncated":
        library_file.write_bytes(library_file.read_bytes()[:1000])
    elif damage == "foreign":
        data = json.loads(library_file.read_bytes())
        data["format"] = 999
        library_file.write_text(json.dumps(data), encoding="utf-8")
    else:
        library_file.write_bytes(b"\x80\x04\x95 not json at all")
    assert answers(service_for(cases, root)) == expected


def test_a_broken_index_is_discarded_and_rebuilt(cases: Path, tmp_path: Path) -> None:
    root = tmp_path / "snapshots"
    expected = answers(service_for(cases, root))
    [snapshot] = [p for p in root.iterdir() if p.is_dir()]
    for path in (snapshot / "case-text").iterdir():
        if path.name != ".complete":
            path.write_bytes(b"garbage")
    assert answers(service_for(cases, root)) == expected


def test_planted_files_never_run(cases: Path, tmp_path: Path) -> None:
    root = tmp_path / "snapshots"
    service_for(cases, root)
    [snapshot] = [p for p in root.iterdir() if p.is_dir()]
    marker = tmp_path / "ran"
    payload = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('x')\n"
    for name in ("__init__.py", "library.py", "cases.pkl", "sitecustomize.py"):
        (snapshot / name).write_text(payload, encoding="utf-8")
    (snapshot / "search" / "meta.py").write_text(payload, encoding="utf-8")
    service_for(cases, root)
    assert not marker.exists()


def _planted(cases: Path, root: Path, edit: object) -> None:
    """A first start saves the snapshot; ``edit(library_json)`` then changes it, well-formed (still JSON of
    the right format and version)."""
    service_for(cases, root)
    [snapshot] = [p for p in root.iterdir() if p.is_dir()]
    data = json.loads((snapshot / LIBRARY).read_bytes())
    edit(data)  # type: ignore[operator]
    (snapshot / LIBRARY).write_text(json.dumps(data), encoding="utf-8")


def test_a_case_pointing_past_the_saved_cases_is_not_trusted(cases: Path, tmp_path: Path) -> None:
    root = tmp_path / "snapshots"

    def past_the_end(data: dict[str, object]) -> None:
        rows = data["cases"]
        assert isinstance(rows, list)
        rows[0][1] = 10**9  # offset of the first case, far past the end of cases.jsonl

    _planted(cases, root, past_the_end)
    library = load_with_snapshot(cases, root)
    direct = load_library(cases)
    assert {case_id: library.cases[case_id] for case_id in direct.cases} == dict(direct.cases.items())


def test_a_malformed_signature_row_is_not_trusted(cases: Path, tmp_path: Path) -> None:
    root = tmp_path / "snapshots"
    expected = answers(IncidentService(load_library(cases), MemoryStorage(), now=fixed(NOW), deadline_s=30.0))

    def bogus_kind(data: dict[str, object]) -> None:
        rows = data["cases"]
        assert isinstance(rows, list)
        for row in rows:
            for signature in row[4]:
                signature[1] = "not-a-kind"

    _planted(cases, root, bogus_kind)
    assert answers(service_for(cases, root)) == expected


def test_outcomes_saved_by_other_code_are_not_reused(cases: Path, tmp_path: Path) -> None:
    """After an upgrade (another code version), every file is checked again: what the old code made of
    an unchanged file may be wrong for the new one."""
    root = tmp_path / "snapshots"
    service_for(cases, root)
    [first] = [p for p in root.iterdir() if p.is_dir()]
    files = json.loads((first / FILES).read_bytes())
    for entry in files["files"]:
        if entry["name"] == "IL-0427.json":
            entry["case"]["summary"]["title"]["en"] = "marker from older code"
    files["version"] = "an older code version"
    (first / FILES).write_text(json.dumps(files), encoding="utf-8")
    os.utime(cases / "IL-0414.json")  # a new key: the library is loaded again
    later = load_with_snapshot(cases, root)
    assert later.summaries["IL-0427"].title.en != "marker from older code"


def test_only_the_newest_three_snapshots_are_kept(tmp_path: Path) -> None:
    cases = tmp_path / "few"
    cases.mkdir()
    for case_id in ("IL-0427", "IL-0414", "PUB-0009"):
        shutil.copy(BUNDLED_CASES / f"{case_id}.json", cases / f"{case_id}.json")
    root = tmp_path / "snapshots"
    for n in range(10):
        os.utime(cases / "IL-0414.json", ns=(10**18 + n, 10**18 + n))  # a new key each time
        load_with_snapshot(cases, root)
    kept = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(kept) == 3
