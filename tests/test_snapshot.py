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
from bot.library.snapshot import FILES, LIBRARY, code_version, listing, load_with_snapshot, snapshot_key
from bot.ops.clock import fixed
from bot.ops.settings import BUNDLED_CASES
from bot.storage.memory import MemoryStorage

PASTES = Path(__file__).parent / "fixtures" / "pastes"
SAMPLES = sorted(PASTES.glob("*.txt"))[::6]


# A library of a dozen cases: what a snapshot does does not depend on how many there are, and the
# mutation run (make mutants) repeats these tests for every mutant of bot/library/snapshot.py.
SUBSET = (
    "IL-0125",
    "IL-0238",
    "IL-0239",
    "IL-0414",
    "IL-0415",
    "IL-0421",
    "IL-0427",
    "PUB-0004",
    "PUB-0009",
    "PUB-0010",
)
SUBSET += ("PUB-0013",)  # with them: signatures with ignore_case, also, fallout and notes


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    directory = tmp_path / "cases"
    directory.mkdir()
    for case_id in SUBSET:
        shutil.copy(BUNDLED_CASES / f"{case_id}.json", directory)
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
    assert json.loads(library_file.read_bytes())["format"] != 999  # written again, whole
    assert [p for p in root.iterdir() if p.is_dir()] == [snapshot]  # and nothing set aside is left


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


# Well-formed JSON, wrong rows: each field the opening check covers, damaged in every saved row.
ROW_DAMAGE = {
    "kind": (1, "not-a-kind"),
    "strength": (3, "not-a-strength"),
    "index": (0, "0"),
    "pattern": (2, 7),
    "literal": (6, 7),
    "note": (8, 7),
    "also": (7, "not-a-list"),
    "extra-field": (9, "one too many"),
}


@pytest.mark.parametrize("field", list(ROW_DAMAGE))
def test_a_malformed_signature_row_is_not_trusted(cases: Path, tmp_path: Path, field: str) -> None:
    """The damaged snapshot is not used: the answers are those of the case files, and the snapshot is
    written again, whole."""
    root = tmp_path / "snapshots"
    expected = answers(IncidentService(load_library(cases), MemoryStorage(), now=fixed(NOW), deadline_s=30.0))
    position, value = ROW_DAMAGE[field]

    def damaged(data: dict[str, object]) -> None:
        rows = data["cases"]
        assert isinstance(rows, list)
        for row in rows:
            for signature in row[4]:
                if position < len(signature):
                    signature[position] = value
                else:
                    signature.append(value)

    _planted(cases, root, damaged)
    assert answers(service_for(cases, root)) == expected
    [snapshot] = [p for p in root.iterdir() if p.is_dir()]
    rows = [sig for row in json.loads((snapshot / LIBRARY).read_bytes())["cases"] for sig in row[4]]
    assert rows and all(len(sig) == 9 and sig[position if position < 9 else 0] != value for sig in rows)


def test_discarding_an_index_that_is_not_there_is_not_an_error(cases: Path, tmp_path: Path) -> None:
    library = load_with_snapshot(cases, tmp_path / "snapshots")
    assert library.snapshot is not None
    library.snapshot.discard_index("never-built")
    library.snapshot.discard_index("case-text")
    assert not (library.snapshot.path / "case-text").exists()


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


def test_the_librarys_problems_survive_the_snapshot(cases: Path, tmp_path: Path) -> None:
    """A broken case file is reported the same way on a start that reads the snapshot."""
    (cases / "IL-9999.json").write_text('{"id": "IL-9999", "title": ', encoding="utf-8")
    first = load_with_snapshot(cases, tmp_path / "snapshots")
    second = load_with_snapshot(cases, tmp_path / "snapshots")
    assert second.cases.loaded == 0  # from the snapshot
    assert second.problems == first.problems and any("IL-9999.json" in p.path for p in second.problems)
    assert {p.severity for p in second.problems} >= {"error"}


def _fields(sig: object) -> tuple[object, ...]:
    names = ("case_id", "index", "kind", "pattern", "strength", "ignore_case", "fallout", "literal", "also", "note")
    return tuple(getattr(sig, name) for name in names)


def test_signatures_and_paths_read_back_from_the_snapshot_are_the_ones_loaded(cases: Path, tmp_path: Path) -> None:
    direct = load_library(cases)
    load_with_snapshot(cases, tmp_path / "snapshots")
    again = load_with_snapshot(cases, tmp_path / "snapshots")
    assert again.cases.loaded == 0
    assert [_fields(s) for s in again.signatures] == [_fields(s) for s in direct.signatures]
    assert any(s.also for s in direct.signatures) and any(s.ignore_case for s in direct.signatures)
    assert any(s.fallout for s in direct.signatures) and any(s.note for s in direct.signatures)
    assert again.paths == direct.paths and all(again.paths.values())


def test_warnings_keep_their_severity_through_the_snapshot(cases: Path, tmp_path: Path) -> None:
    data = json.loads((cases / "PUB-0009.json").read_text(encoding="utf-8"))
    data["id"] = "PUB-9009"
    data.pop("failure_class", None)  # missing: a warning, not an error
    (cases / "PUB-9009.json").write_text(json.dumps(data), encoding="utf-8")
    first = load_with_snapshot(cases, tmp_path / "snapshots")
    second = load_with_snapshot(cases, tmp_path / "snapshots")
    assert second.cases.loaded == 0
    assert second.problems == first.problems == load_library(cases).problems
    assert {p.severity for p in second.problems if "PUB-9009" in p.path} == {"warning"}


def test_a_directory_named_like_a_case_file_is_not_listed(cases: Path) -> None:
    (cases / "IL-7777.json").mkdir()
    assert "IL-7777.json" not in [name for name, _, _ in listing(cases)]


def test_keys_are_fixed_length_digests(cases: Path) -> None:
    version = code_version()
    key = snapshot_key(cases, listing(cases), version)
    assert len(version) == len(key) == 32 and int(version, 16) >= 0 and int(key, 16) >= 0
    assert snapshot_key(cases, listing(cases)[1:], version) != key  # a file less, another snapshot


def test_the_snapshot_files_are_compact_utf8(cases: Path, tmp_path: Path) -> None:
    library = load_with_snapshot(cases, tmp_path / "snapshots")
    assert library.snapshot is not None
    raw = (library.snapshot.path / LIBRARY).read_bytes()
    assert "장애".encode() in raw or "오류".encode() in raw  # Korean as UTF-8, not \\u escapes
    assert b'", "' not in raw and b'": ' not in raw


@pytest.mark.parametrize(
    "where", [(-1, None), (None, 0), (None, -5), (10, 10**9)], ids=["before", "empty", "negative", "past"]
)
def test_a_case_whose_offset_or_length_is_out_of_bounds_is_not_trusted(
    cases: Path, tmp_path: Path, where: tuple[int | None, int | None]
) -> None:
    root = tmp_path / "snapshots"
    offset, length = where

    def bounds(data: dict[str, object]) -> None:
        rows = data["cases"]
        assert isinstance(rows, list)
        if offset is not None:
            rows[-1][1] = offset
        if length is not None:
            rows[-1][2] = length

    _planted(cases, root, bounds)
    library = load_with_snapshot(cases, root)
    direct = load_library(cases)
    assert library.cases.loaded == len(direct.cases)  # read from the files, not the snapshot
    assert {case_id: library.cases[case_id] for case_id in direct.cases} == dict(direct.cases.items())


def test_an_index_is_built_aside_and_a_failed_build_leaves_nothing(cases: Path, tmp_path: Path) -> None:
    library = load_with_snapshot(cases, tmp_path / "snapshots")
    snapshot = library.snapshot
    assert snapshot is not None
    seen: list[Path] = []

    def build(work: Path) -> None:
        seen.append(work)
        assert work.parent == snapshot.path and work.name.startswith(".extra-")  # aside, in the snapshot
        (work / "data").write_bytes(b"x")

    final = snapshot.index_dir("extra", build)
    assert final == snapshot.path / "extra" and (final / "data").read_bytes() == b"x"
    assert (final / ".complete").read_bytes() == b"" and not seen[0].exists()
    assert snapshot.index_dir("extra", build) == final and len(seen) == 1  # complete: not built again

    def broken(work: Path) -> None:
        (work / "half").write_bytes(b"x")
        raise RuntimeError("build failed")

    with pytest.raises(RuntimeError):
        snapshot.index_dir("other", broken)
    assert not (snapshot.path / "other").exists()
    assert [p.name for p in snapshot.path.iterdir() if p.name.startswith(".other-")] == []


def test_an_index_another_process_finished_first_is_kept(cases: Path, tmp_path: Path) -> None:
    library = load_with_snapshot(cases, tmp_path / "snapshots")
    snapshot = library.snapshot
    assert snapshot is not None

    def racing(work: Path) -> None:
        (work / "mine").write_bytes(b"late")
        theirs = snapshot.path / "shared"  # the other process renames its build into place meanwhile
        theirs.mkdir()
        (theirs / "theirs").write_bytes(b"first")

    final = snapshot.index_dir("shared", racing)
    assert (final / "theirs").read_bytes() == b"first" and not (final / "mine").exists()
    assert [p.name for p in snapshot.path.iterdir() if p.name.startswith(".shared-")] == []


def test_a_snapshot_root_that_cannot_be_made_is_logged_and_the_files_are_loaded(
    cases: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("a file where the snapshot directory should be", encoding="utf-8")
    root = blocker / "snapshots"
    with caplog.at_level("INFO", logger="incident_bot.snapshot"):
        library = load_with_snapshot(cases, root)
    assert set(library.cases) == set(load_library(cases).cases) and library.snapshot is None
    [said] = [r.getMessage() for r in caplog.records if r.name == "incident_bot.snapshot"]
    assert said.startswith(f"no snapshot: cannot create {root} (") and said.endswith(")") and "None" not in said


def test_a_snapshot_root_is_created_with_its_parents(cases: Path, tmp_path: Path) -> None:
    root = tmp_path / "data" / "deep" / "snapshots"
    library = load_with_snapshot(cases, root)
    assert library.snapshot is not None and library.snapshot.path.parent == root


def test_a_fresh_snapshot_lets_the_parsed_cases_go_and_reads_them_back(cases: Path, tmp_path: Path) -> None:
    """After the first start's indexes are built, the whole cases are released: read again from the
    snapshot when shown, the same as parsed."""
    direct = load_library(cases)
    library = load_with_snapshot(cases, tmp_path / "snapshots")
    assert library.cases.loaded == len(direct.cases)
    library.release()
    assert library.cases.loaded == 0
    assert library.cases["IL-0427"] == direct.cases["IL-0427"] and library.cases.loaded == 1


def test_a_missing_case_directory_is_reported_not_snapshotted(tmp_path: Path) -> None:
    library = load_with_snapshot(tmp_path / "no-such-cases", tmp_path / "snapshots")
    assert not library.cases and any("not a directory" in p.message for p in library.problems)
    assert not (tmp_path / "snapshots").exists()
