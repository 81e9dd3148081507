"""Serving safely (the adversarial review's M4 and the rule behind it): supporting hits alone never make an
unprompted reply, and a hint that every traceback has is refused by ``cases validate`` and the draft form."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import NOW, copy_bundled_cases

from bot.app.service import IncidentService
from bot.library.case_store import load_library
from bot.library.drafts import draft_problems
from bot.matching.signatures import MAX_NEGATIVE_HITS
from bot.ops.clock import fixed
from bot.storage import Storage
from bot.storage.memory import MemoryStorage

GENERIC = ["Traceback (most recent call last)", "RuntimeError: CUDA", 'File "/usr/lib/python3']


def _case(cases: Path, case_id: str, signatures: list[dict[str, Any]]) -> None:
    data = json.loads((cases / "PUB-0035.json").read_text(encoding="utf-8"))
    data["id"] = case_id
    data["signatures"] = signatures
    (cases / f"{case_id}.json").write_text(json.dumps(data), encoding="utf-8")


def test_a_hint_every_traceback_has_is_refused(tmp_path: Path) -> None:
    """The review's M4: a case whose hints are generic does not load (``cases validate`` reports why)."""
    cases = copy_bundled_cases(tmp_path, "PUB-0035")
    signatures = [
        {"kind": "exact", "pattern": pattern, "strength": "supporting", "examples": [f"{pattern} x"]}
        for pattern in GENERIC
    ]
    _case(cases, "PUB-0999", signatures)
    library = load_library(cases)
    assert "PUB-0999" not in library.cases
    said = [p.message for p in library.problems if "PUB-0999" in p.path]
    assert any("is generic: it hits" in m and f"at most {MAX_NEGATIVE_HITS}" in m for m in said), said


def test_the_draft_form_refuses_the_same_hint() -> None:
    fields = {"title_en": "x", "summary_en": "y", "signatures": "Traceback (most recent call last)"}
    assert any("is generic" in p.message for p in draft_problems(fields))


@pytest.fixture
def hints_only(tmp_path: Path) -> tuple[IncidentService, str]:
    """A library with PUB-0035 made of three specific hints (no decisive signature), and a paste hitting all
    three: as strong as hints can make it."""
    cases = copy_bundled_cases(tmp_path, "PUB-0035", "IL-0414")
    hints = [
        "Mismatched NCCL version detected : rank 1 version 22705",
        "nvidia-nccl-cu12==2.20.5 installed beside the system NCCL",
        "NCCL INFO cudaDriverVersion 12040 with NCCL version 2.18.1+cuda12.1",
    ]
    signatures = [{"kind": "exact", "pattern": hint, "strength": "supporting", "examples": [hint]} for hint in hints]
    _case(cases, "PUB-0035", signatures)
    library = load_library(cases)
    assert "PUB-0035" in library.cases, library.problems
    service = IncidentService(library, MemoryStorage(), now=fixed(NOW), deadline_s=20.0)
    return service, "\n".join(hints)


def test_supporting_hits_alone_never_make_an_unprompted_reply(hints_only: tuple[IncidentService, str]) -> None:
    service, paste = hints_only
    result = service.match(paste)
    assert result.best is not None and result.best.case_id == "PUB-0035"
    assert result.best.tier.value == "strong"  # ranked as sure as three hints make it ...
    assert not result.reply  # ... and still not posted unprompted
    asked = service.render_match(result, ("en",), explicit=True)
    assert "PUB-0035" in asked.plain  # asked for, it is shown


def test_a_nul_byte_in_user_text_is_dropped_not_an_outage(storage: Storage) -> None:
    """The review's L11: PostgreSQL cannot hold NUL; a review note or a draft field with one is stored
    without it (on SQLite too, so both backends hold the same), never reported as "database unavailable"."""
    from bot.model.results import DraftRecord, ReviewRecord

    storage.add_review(ReviewRecord("IL-0427", "U7", NOW, "bad\x00note"))
    [review] = storage.list_reviews("IL-0427")
    assert review.note == "badnote"
    draft_id = storage.add_draft(DraftRecord("U1", "C1", "", {"title_en": "a\x00b", "lines": ["x\x00y"]}, NOW))
    stored = storage.get_draft(draft_id)
    assert stored is not None and stored.fields == {"title_en": "ab", "lines": ["xy"]}


def test_a_fifo_or_a_device_in_the_case_directory_is_reported_not_read(tmp_path: Path) -> None:
    """The review's L10: a FIFO would block loading forever, a link to /dev/zero exhaust memory."""
    import os

    cases = copy_bundled_cases(tmp_path, "PUB-0035")
    os.mkfifo(cases / "FIFO.json")
    (cases / "ZERO.json").symlink_to("/dev/zero")
    library = load_library(cases)
    assert list(library.cases) == ["PUB-0035"]
    said = {Path(p.path).name: p.message for p in library.problems}
    assert "not a regular file" in said["FIFO.json"] and "not a regular file" in said["ZERO.json"]


def test_a_command_in_a_steps_text_is_held_to_the_safety_rules() -> None:
    """The review's L2: a draft's runbook is text only; `rm -rf /` there is refused like in a command."""
    fields = {
        "title_en": "x",
        "summary_en": "y",
        "runbook_en": "drain {node}\n$ rm -rf /",
        "signatures": "NVSwitch fatal error on tray 4",
    }
    problems = draft_problems(fields)
    assert [(p.field, p.message.split(":")[0]) for p in problems] == [("runbook[1].text.en", "rm-rf")]
    reset_first = {**fields, "runbook_en": "ssh {node} nvidia-smi -r -i {pci}"}
    assert any(p.message.startswith("gpu-reset:") for p in draft_problems(reset_first))


def test_also_patterns_count_in_the_case_budget(tmp_path: Path) -> None:
    """The review's M5 (its budget part): co-occurrence patterns are in the per-case pattern budget."""
    cases = copy_bundled_cases(tmp_path, "PUB-0035")
    data = json.loads((cases / "PUB-0035.json").read_text(encoding="utf-8"))
    big = "(?:" + "|".join(f"word{n:04d}x" for n in range(600)) + ")"
    data["signatures"][0]["also"] = [big] * 4
    (cases / "PUB-0035.json").write_text(json.dumps(data), encoding="utf-8")
    library = load_library(cases)
    assert "PUB-0035" not in library.cases
    assert any("regex and also patterns together are too large" in p.message for p in library.problems)


def test_blocks_cover_the_text_and_end_at_line_breaks() -> None:
    from bot.matching.matcher import text_blocks

    text = "".join(f"line {n} " + "x" * (n % 300) + "\n" for n in range(5000))
    blocks = text_blocks(text, 4096)
    assert blocks[0][0] == 0 and blocks[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(blocks))
    assert all(text[end - 1] == "\n" and end - start <= 4096 for start, end in blocks)
    assert text_blocks("") == [(0, 0)] and text_blocks("no newline") == [(0, 10)]


@pytest.mark.timing
def test_a_slow_pattern_cannot_hold_a_paste_past_the_deadline(tmp_path: Path) -> None:
    """The review's M5: a hint and an `also` pattern RE2 accepts but scans slowly (its DFA runs out of
    memory on a/b text) took 32 s on a 2 MiB paste against the 2 s deadline. Scanned block by block with a
    deadline check between blocks, the match stops near the deadline (bound for a loaded 2-core machine)."""
    import random
    import time

    cases = copy_bundled_cases(tmp_path, "PUB-0035", "IL-0414")
    slow = "a[ab]{1000}[ab]{1000}c"
    _case(
        cases,
        "PUB-0999",
        [
            {"kind": "regex", "pattern": slow, "strength": "supporting", "examples": ["a" + "ab" * 1000 + "c"]},
            {
                "kind": "exact",
                "pattern": "FROBNICATOR HALTED unexpectedly",
                "strength": "decisive",
                "also": [slow],
                "examples": ["FROBNICATOR HALTED unexpectedly"],
            },
        ],
    )
    library = load_library(cases)
    assert "PUB-0999" in library.cases
    rng = random.Random(0)
    rows = ("".join(rng.choice("ab") for _ in range(3000)) for _ in range(690))
    paste = "FROBNICATOR HALTED unexpectedly\n" + "\n".join(rows)
    service = IncidentService(library, MemoryStorage(), now=fixed(NOW), deadline_s=2.0)
    started = time.monotonic()
    result = service.match(paste)
    assert time.monotonic() - started < 4.0  # 2 s deadline; 32 s before blocks
    assert result.timed_out


def test_a_malformed_request_is_one_warning_line_without_its_bytes() -> None:
    """The review's L8: aiohttp's traceback quoted the bytes an unauthenticated client sent."""
    import io
    import logging

    from bot.ops.logs import configure_logging

    stream = io.StringIO()
    configure_logging("INFO", "json")
    logging.getLogger().handlers[0].setStream(stream)  # type: ignore[attr-defined]
    try:
        try:
            raise ValueError("Invalid character in chunk size: b'SECRETBYTES'")
        except ValueError:
            logging.getLogger("aiohttp.server").exception("Error handling request")
    finally:
        configure_logging("INFO", "json")
    [line] = stream.getvalue().splitlines()
    record = json.loads(line)
    assert record["level"] == "warning" and "malformed HTTP request dropped (ValueError)" in record["event"]
    assert "SECRETBYTES" not in line and "Traceback" not in line


def test_storage_down_leaves_the_language_to_the_locale(library: Any) -> None:
    """The review's L1: reading the saved language raised right after the command's ack, and Slack got a
    404 after 3 s; now the locale decides and the answer goes on (it then says the database is down)."""
    from bot.storage import open_storage

    down = open_storage("postgresql://postgres@127.0.0.1:5999/nothing-listens-here")
    try:
        service = IncidentService(library, down, now=fixed(NOW), deadline_s=20.0)
        assert service.langs_for_user("U1", "ko-KR") == ("ko", "en")
        assert service.langs_for_user("U1", None) == ("en", "ko")
    finally:
        down.close()
