"""Loading the case directory: bad files are reported with path and field, good cases still serve."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from bot.cli.main import main
from bot.library.case_store import load_library
from bot.matching.signatures import SignatureError, compile_signature
from bot.model.case import Signature, SignatureKind
from bot.model.ids import canonical_id


def _case(case_id: str, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": case_id,
        "title": {"en": f"title {case_id}", "ko": f"제목 {case_id}"},
        "summary": {"en": "summary", "ko": "요약"},
        "lessons": {"en": "lesson", "ko": "교훈"},
        "remediation": [{"text": {"en": "fix", "ko": "조치"}}],
        "failure_class": "test-class",
        "signatures": [{"kind": "exact", "pattern": f"boom {case_id}", "strength": "decisive"}],
        "runbook": [
            {
                "stage": "confirm",
                "text": {"en": "Look.", "ko": "본다."},
                "command": "ssh {node} true",
                "assumes": {"en": "ssh access to the node", "ko": "노드에 ssh로 접속할 수 있다"},
            },
            {"stage": "verify", "text": {"en": "Check.", "ko": "확인한다."}},
        ],
        "gist": {"en": "It broke.", "ko": "고장 났다."},
        "severity": "node",
    }
    data.update(extra)
    return data


def _write(directory: Path, name: str, content: str | dict[str, Any]) -> Path:
    path = directory / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("IL-0427", "IL-0427"),
        ("il-427", "IL-0427"),
        ("IL-427", "IL-0427"),
        ("il0427", "IL-0427"),
        (" IL-00427 ", "IL-0427"),
        ("pub-3", "PUB-0003"),
        ("IL-12345", "IL-12345"),
        ("hello world", None),
        ("427", None),
        ("", None),
    ],
)
def test_ids_are_case_insensitive_and_tolerate_padding(raw: str, expected: str | None) -> None:
    assert canonical_id(raw) == expected


def test_broken_duplicate_and_bad_regex_are_all_reported_while_good_cases_load(tmp_path: Path) -> None:
    _write(tmp_path, "a_good.json", _case("IL-0001"))
    _write(tmp_path, "b_broken.json", '{"id": "IL-0002", "title": ')
    _write(tmp_path, "c_duplicate.json", _case("IL-0001"))
    backref = _case("IL-0003", signatures=[{"kind": "regex", "pattern": r"(boom)\1", "strength": "decisive"}])
    _write(tmp_path, "d_backref.json", backref)
    wrong_type = _case("IL-0004", signatures="not a list")
    _write(tmp_path, "e_type.json", wrong_type)
    _write(tmp_path, "f_good.json", _case("PUB-0001"))

    library = load_library(tmp_path)

    assert sorted(library.cases) == ["IL-0001", "PUB-0001"]
    assert library.get("il-1") is not None
    errors = {(Path(p.path).name, p.field): p.message for p in library.errors}
    assert ("b_broken.json", "") in errors and "invalid JSON" in errors[("b_broken.json", "")]
    assert "duplicate id IL-0001" in errors[("c_duplicate.json", "id")]
    assert "a_good.json" in errors[("c_duplicate.json", "id")]
    assert "IL-0003 signatures[0]" in errors[("d_backref.json", "signatures[0].pattern")]
    assert ("e_type.json", "signatures") in errors
    assert len(library.errors) == 4


def test_validate_command_lists_every_problem_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "good.json", _case("IL-0001"))
    _write(tmp_path, "lookaround.json", _case("IL-0002", signatures=[{"kind": "regex", "pattern": "a(?=b)"}]))
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    assert main(["cases", "validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "lookaround.json: signatures[0].pattern" in out
    assert "binary.json" in out and "not UTF-8" in out
    assert "1 cases loaded" in out


def test_validate_passes_on_a_clean_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "good.json", _case("IL-0001"))
    assert main(["cases", "validate", "--strict", str(tmp_path)]) == 0
    assert "0 errors, 0 warnings" in capsys.readouterr().out


def test_strict_validation_fails_on_a_missing_language(tmp_path: Path) -> None:
    _write(tmp_path, "half.json", _case("IL-0001", lessons={"en": "only English"}))
    assert main(["cases", "validate", str(tmp_path)]) == 0
    assert main(["cases", "validate", "--strict", str(tmp_path)]) == 1


def test_a_signature_that_misses_its_own_example_is_an_error(tmp_path: Path) -> None:
    bad = _case("IL-0001", signatures=[{"pattern": "needle here", "examples": ["a haystack without it"]}])
    _write(tmp_path, "x.json", bad)
    library = load_library(tmp_path)
    assert [p.field for p in library.errors] == ["signatures[0].examples[0]"]


def test_missing_directory_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    library = load_library(tmp_path / "nope")
    assert len(library) == 0
    assert library.errors[0].message == "not a directory"


@pytest.mark.timing
def test_catastrophic_backtracking_pattern_runs_in_linear_time() -> None:
    sig = compile_signature("IL-0001", 0, Signature(kind=SignatureKind.REGEX, pattern=r"(a+)+$"))
    hostile_short = "a" * 10_000 + "!"
    hostile_long = "a" * 1_000_000 + "!"
    started = time.perf_counter()
    assert not sig.search(hostile_short)
    short = time.perf_counter() - started
    started = time.perf_counter()
    assert not sig.search(hostile_long)
    long = time.perf_counter() - started
    # Python's backtracking engine would take astronomically long on either; RE2 is linear. A generous
    # bound that still fails any exponential engine: 100x the input takes well under 10,000x the time.
    assert long < 1.0
    assert long < max(short, 1e-4) * 5_000


@pytest.mark.parametrize("pattern", [r"(a)\1", r"foo(?!bar)", r"(?<=x)y"])
def test_re2_rejects_backreferences_and_lookarounds_with_a_clear_error(pattern: str) -> None:
    with pytest.raises(SignatureError, match=r"IL-0009 signatures\[2\]: RE2 cannot compile"):
        compile_signature("IL-0009", 2, Signature(kind=SignatureKind.REGEX, pattern=pattern))
