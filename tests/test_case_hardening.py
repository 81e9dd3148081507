"""No case file can stall, crash or silence the bot: catch-all and oversized signatures are rejected with
the reason at load, validate and sync time; a file that makes parsing raise is one broken file, not a
failed reload; a duplicate id never hides the file named after it."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import NOW, copy_bundled_cases
from library_server import LibraryServer

from bot.app.reloader import LibraryReloader
from bot.app.service import IncidentService
from bot.cli.main import main
from bot.library.case_store import load_library, parse_case
from bot.matching.matcher import Matcher
from bot.matching.signatures import CompiledSignature, SignatureError, SignatureSets, compile_signature
from bot.model.case import Signature, SignatureKind, Strength
from bot.ops.clock import fixed
from bot.ops.settings import BUNDLED_CASES
from bot.storage.memory import MemoryStorage

ECC = "[rank29]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
CHAT = ["hello everyone, lunch at noon?", "ok 👍"]


def _case_with(tmp_path: Path, signature: dict[str, Any], case_id: str = "LOC-0001") -> Path:
    data = json.loads((BUNDLED_CASES / "IL-0427.json").read_text(encoding="utf-8"))
    data.update(id=case_id, signatures=[signature])
    cases = copy_bundled_cases(tmp_path, "IL-0427", "PUB-0011")
    (cases / f"{case_id}.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return cases


CATCH_ALLS = [
    {"kind": "regex", "pattern": "(?s).*", "strength": "decisive"},
    {"kind": "regex", "pattern": "^.*$", "strength": "decisive"},
    {"kind": "regex", "pattern": r"[\s\S]", "strength": "decisive"},
    {"kind": "regex", "pattern": r"[\s\S]", "strength": "supporting"},
    {"kind": "exact", "pattern": "   ", "strength": "decisive"},
    {"kind": "exact", "pattern": "ok ", "strength": "supporting"},
    {"kind": "regex", "pattern": "(?i)lunch", "strength": "supporting"},
]


@pytest.mark.parametrize("signature", CATCH_ALLS, ids=[s["pattern"] + "/" + s["strength"] for s in CATCH_ALLS])
def test_catch_all_signatures_are_rejected_and_the_bot_stays_quiet(
    tmp_path: Path, signature: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    cases = _case_with(tmp_path, signature)
    library = load_library(cases)
    assert "LOC-0001" not in library.cases
    (problem,) = [p for p in library.errors if "LOC-0001" in p.path]
    assert "signatures[0]" in problem.field and any(
        word in problem.message for word in ("empty", "literal", "characters", "ordinary")
    ), problem.message
    matcher = Matcher(library.cases, library.signatures, sets=library.sets)
    for line in CHAT:
        assert matcher.match(line).matches == []
    ecc = matcher.match(ECC)
    assert ecc.reply and ecc.reply_case_ids[0] == "IL-0427"
    assert main(["cases", "validate", str(cases)]) == 1
    assert "LOC-0001" in capsys.readouterr().out


def test_a_decisive_signature_that_hits_a_hard_negative_is_rejected(tmp_path: Path) -> None:
    # The hard-negative fixtures hold a GPU out-of-memory error that no case explains.
    cases = _case_with(tmp_path, {"kind": "exact", "pattern": "CUDA out of memory", "strength": "decisive"})
    library = load_library(cases)
    (problem,) = [p for p in library.errors if "LOC-0001" in p.path]
    assert "no case explains" in problem.message and "supporting" in problem.message
    supporting = _case_with(tmp_path, {"kind": "exact", "pattern": "CUDA out of memory", "strength": "supporting"})
    assert "LOC-0001" in load_library(supporting).cases  # a hint may appear in real errors


@pytest.mark.timing
def test_an_oversized_regex_is_rejected_fast_and_nothing_crashes(tmp_path: Path) -> None:
    huge = r"\pL{1000}" * 180
    cases = _case_with(tmp_path, {"kind": "regex", "pattern": huge, "strength": "supporting"})
    started = time.perf_counter()
    library = load_library(cases)
    assert time.perf_counter() - started < 5
    (problem,) = [p for p in library.errors if "LOC-0001" in p.path]
    assert "too large" in problem.message or "instructions" in problem.message
    matcher = Matcher(library.cases, library.signatures, sets=library.sets)
    assert matcher.match("é" * 3500).matches == []
    with_example = _case_with(
        tmp_path, {"kind": "regex", "pattern": r"\pL{1000}" * 3, "strength": "supporting", "examples": ["a" * 3000]}
    )
    assert "LOC-0001" not in load_library(with_example).cases  # reported, never a traceback


@pytest.mark.parametrize(
    ("count", "pattern", "said"),
    [
        (30, r"zq{n:04d}xv\p{{Greek}}{{150}}", "too large for the matcher"),  # each under RE2's own limit
        (33, r"zq{n:04d}xv bus error", "over the limit of 32 per case"),
        (20, r"Q{n:04d}X01\pL{{8}}", "too large for the matcher"),  # \pL is 1,200 RE2 instructions, not 64
    ],
)
def test_one_case_file_cannot_make_the_matcher_huge(tmp_path: Path, count: int, pattern: str, said: str) -> None:
    """Hundreds of signatures, each within the per-pattern limit, would cost hundreds of MB of RE2 sets:
    the case is rejected at load with one line, fast, and the rest of the library serves."""
    cases = _case_with(tmp_path, {"kind": "regex", "pattern": "x", "strength": "supporting"})
    data = json.loads((cases / "LOC-0001.json").read_text(encoding="utf-8"))
    data["signatures"] = [
        {"kind": "regex", "pattern": pattern.format(n=n), "strength": "supporting"} for n in range(count)
    ]
    (cases / "LOC-0001.json").write_text(json.dumps(data), encoding="utf-8")
    started = time.perf_counter()
    library = load_library(cases)
    assert time.perf_counter() - started < 10
    (problem,) = [p for p in library.errors if "LOC-0001" in p.path]
    assert said in problem.message and "\n" not in problem.message
    assert {"IL-0427", "PUB-0011"} <= set(library.cases)


@pytest.mark.timing
def test_many_small_unicode_class_cases_cannot_add_up(tmp_path: Path) -> None:
    """Each file is within its own budget; together they would cost gigabytes of RE2 sets. The library's
    Unicode-class budget keeps the first ones (file order) and rejects the rest with one line each."""
    cases = copy_bundled_cases(tmp_path, "IL-0427", "PUB-0011")
    data = json.loads((BUNDLED_CASES / "IL-0427.json").read_text(encoding="utf-8"))
    for n in range(60):
        pattern = f"QZXJ{n:04d}\\pL{{7}}"
        data.update(id=f"LOC-{n + 1:04d}", signatures=[{"kind": "regex", "pattern": pattern, "strength": "supporting"}])
        (cases / f"LOC-{n + 1:04d}.json").write_text(json.dumps(data), encoding="utf-8")
    started = time.perf_counter()
    library = load_library(cases)
    assert time.perf_counter() - started < 30
    kept = [cid for cid in library.cases if cid.startswith("LOC-")]
    over = [p for p in library.errors if "over their budget" in p.message]
    assert 5 <= len(kept) < 60 and len(kept) + len(over) == 60
    assert {"IL-0427", "PUB-0011"} <= set(library.cases)


def test_a_rejected_pattern_is_shown_cut() -> None:
    with pytest.raises(SignatureError) as raised:
        compile_signature("LOC-0001", 0, Signature(kind=SignatureKind.REGEX, pattern=r"\pL{1000}" * 180))
    assert len(str(raised.value)) < 300 and "…" in str(raised.value)


def test_the_set_build_drops_a_pattern_that_does_not_fit_instead_of_raising() -> None:
    ok = compile_signature("IL-0001", 0, Signature(kind=SignatureKind.EXACT, pattern="GPU has fallen off the bus"))
    # As if it had slipped past the load-time checks: a Unicode class repeated 100 times needs more than the
    # set's memory budget.
    heavy = CompiledSignature("IL-0002", 0, SignatureKind.REGEX, r"\pL{100}", Strength.SUPPORTING, False, False, "")
    sets = SignatureSets([ok, heavy], max_mem=256 << 10)
    assert [d.signature.case_id for d in sets.dropped] == ["IL-0002"]
    assert sets.candidates("GPU has fallen off the bus") == [0]


def test_a_file_that_makes_parsing_raise_is_one_broken_file(tmp_path: Path) -> None:
    for raw in (
        b'{"id": "IL-0414", "x": 1' + b"0" * 5000 + b"}",
        b'{"id": "IL-0414", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    ):
        case, _, problems = parse_case(raw, "IL-0414.json")
        assert case is None and problems and problems[0].message.startswith("invalid JSON")


def test_reload_with_a_deleted_a_broken_b_and_a_new_c(tmp_path: Path) -> None:
    cases = copy_bundled_cases(tmp_path, "IL-0427", "IL-0414", "PUB-0011")
    service = IncidentService(load_library(cases), MemoryStorage(), now=fixed(NOW))
    reloader = LibraryReloader(service, cases)
    reloader.baseline()
    (cases / "IL-0427.json").unlink()  # A
    (cases / "IL-0414.json").write_bytes(b'{"id": "IL-0414", "x": 1' + b"0" * 5000 + b"}")  # B, unparsable
    shutil.copy(BUNDLED_CASES / "PUB-0009.json", cases / "PUB-0009.json")  # C
    outcome = reloader.reload("sighup")
    assert outcome is not None and outcome.kept_previous == ("IL-0414",)
    assert sorted(service.library.cases) == ["IL-0414", "PUB-0009", "PUB-0011"]
    assert "incident_bot_broken_case_files 1.0" in service.metrics.render().decode()
    assert service.match("RuntimeError: CUDA error: uncorrectable ECC error encountered").reply_case_ids == ["IL-0414"]


def test_the_file_named_after_the_id_wins_a_duplicate(tmp_path: Path) -> None:
    cases = copy_bundled_cases(tmp_path, "IL-0414")
    impostor = json.loads((BUNDLED_CASES / "PUB-0011.json").read_text(encoding="utf-8"))
    impostor["id"] = "IL-0414"
    (cases / "DUP.json").write_text(json.dumps(impostor), encoding="utf-8")  # sorts before IL-0414.json
    library = load_library(cases)
    assert library.paths["IL-0414"].endswith("IL-0414.json")
    assert library.cases["IL-0414"].failure_class == "gpu-memory-ecc"
    (problem,) = library.errors
    assert problem.path.endswith("DUP.json") and "duplicate id IL-0414" in problem.message


def test_sync_rejects_a_catch_all_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((BUNDLED_CASES / "IL-0427.json").read_text(encoding="utf-8"))
    data.update(id="LOC-0002", signatures=[{"kind": "regex", "pattern": "(?s).*", "strength": "decisive"}])
    chatty = {
        **data,
        "id": "LOC-0003",
        "signatures": [{"kind": "regex", "pattern": "(?i)lunch", "strength": "supporting"}],
    }
    target = tmp_path / "synced"
    target.mkdir()
    with LibraryServer() as server:
        server.put(data)
        server.put(chatty)  # parses, then fails the ordinary-text screen
        assert main(["--cases", str(target), "sync", "--api-url", server.base_url]) == 1
    assert not (target / "LOC-0002.json").exists() and not (target / "LOC-0003.json").exists()
    out = capsys.readouterr().out
    assert "rejected 2" in out and "empty string" in out and "ordinary" in out
    assert "nothing written" in out and "local file kept" not in out  # there was no local file


def test_signature_objects_stay_plain_data() -> None:
    sig = compile_signature("IL-0001", 0, Signature(pattern="GPU has fallen off the bus"))
    assert isinstance(sig, CompiledSignature) and sig.regex is None


def test_the_shipped_hard_negatives_are_the_fixture_negatives() -> None:
    from build_ordinary import TARGET, build

    assert TARGET.read_text(encoding="utf-8") == build(), "run `make ordinary` after changing negative fixtures"
