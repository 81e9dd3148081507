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
from bot.ops.settings import BUNDLED_CASES
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


SLOW = "a[ab]{1000}[ab]{1000}c"  # the review's M5 pattern: RE2 accepts it, its DFA runs out of memory on a/b text


def _slow_case(cases: Path) -> None:
    _case(
        cases,
        "PUB-0999",
        [
            {"kind": "regex", "pattern": SLOW, "strength": "supporting", "examples": ["a" + "ab" * 1000 + "c"]},
            {
                "kind": "exact",
                "pattern": "FROBNICATOR HALTED unexpectedly",
                "strength": "decisive",
                "also": [SLOW],
                "examples": ["FROBNICATOR HALTED unexpectedly"],
            },
        ],
    )


@pytest.mark.timing
def test_the_loader_refuses_a_pattern_that_cannot_scan_a_paste_in_time(tmp_path: Path) -> None:
    """The review's M5, at load time: the signature and the ``also`` pattern are each timed over a probe
    text and refused, naming the field and the extrapolated time (about 10 s here against 0.25 s)."""
    cases = copy_bundled_cases(tmp_path, "PUB-0035")
    _slow_case(cases)
    library = load_library(cases)
    assert "PUB-0999" not in library.cases and "PUB-0035" in library.cases
    said = {p.field: p.message for p in library.problems if "PUB-0999" in p.path}
    assert set(said) == {"signatures[0].pattern", "signatures[1].also[0]"}, said
    assert all("to scan a 2 MiB paste, over the 0.25 s a pattern may take" in m for m in said.values())


@pytest.mark.timing
@pytest.mark.parametrize(
    "pattern",
    [
        ".{0,200}x.{0,100}y",  # looks ordinary; 10 s on 2 MiB of printable text
        "a" + "(a|b)" * 20 + "c",  # no repetition at all, and about 1 s
        r"\d{1,1000}\.\d{1000}x",
    ],
)
def test_the_draft_form_refuses_a_slow_pattern(pattern: str) -> None:
    fields = {"title_en": "x", "summary_en": "y", "signatures": f"re:{pattern}"}
    assert any("to scan a 2 MiB paste" in p.message for p in draft_problems(fields)), draft_problems(fields)


def test_the_probe_text_is_made_of_the_pattern_and_never_holds_nul() -> None:
    """The probe is drawn from the pattern (its near-misses are what slows a DFA down), the same for the
    same pattern, and free of NUL (the timed program ends in one, so a scan never stops at a match)."""
    from bot.library.pattern_cost import PROBE_BYTES, probe_text

    text = probe_text(SLOW)
    assert text == probe_text(SLOW) and len(text) <= PROBE_BYTES
    assert set(text) <= set("abc\n") and text.count("a") > PROBE_BYTES // 3
    for pattern in (r"foo\x00{30}bar", r"[^x]{40}y", r"(?i)\bxid[ :=#]{0,3}\d{2,3}\b"):
        assert "\x00" not in probe_text(pattern)
    assert probe_text("^$") and probe_text("(?:)") != SLOW  # empty samples end, never loop


def test_samples_drawn_from_a_pattern_match_it() -> None:
    """Every bundled regex (but two whose word boundaries the sampler does not place) matches the
    strings drawn from it: the probe is made of what the pattern reads."""
    import random

    import re2

    from bot.library.pattern_cost import _Reader, _sample
    from bot.matching.signatures import re2_options

    library = load_library(BUNDLED_CASES)
    patterns = {(s.pattern, s.ignore_case) for s in library.signatures if s.is_regex}
    patterns |= {(p, False) for s in library.signatures for p in s.also}
    missed = []
    for pattern, ignore_case in sorted(patterns):
        rng = random.Random(1)
        tree = _Reader(pattern).read()
        program = re2.compile(pattern, re2_options(ignore_case))
        for _ in range(10):
            out: list[str] = []
            _sample(tree, rng, out, [4096])
            if program.search("".join(out)) is None:
                missed.append(pattern)
                break
    assert len(patterns) > 100 and len(missed) <= 2, missed


def test_the_cost_is_the_fastest_scan_extrapolated_to_a_paste() -> None:
    """With a clock that advances a fixed step per reading, a scan of the probe measures one step, scaled
    from the probe's size to 2 MiB. A scan well inside the budget is not repeated; one near or over it
    is repeated three times (the fastest counts: a busy machine must not refuse a good pattern)."""
    from bot.library.pattern_cost import PASTE_BYTES, probe_text, scan_seconds

    pattern = "Xid \\(PCI:[0-9a-f:.]{4,16}\\): 79"
    scale = PASTE_BYTES / len(probe_text(pattern))
    for step, readings in ((0.0005, 2), (0.01, 6)):
        ticks = iter(range(1000))
        seconds = scan_seconds(pattern, clock=lambda step=step, ticks=ticks: next(ticks) * step)
        assert seconds == pytest.approx(step * scale)
        assert next(ticks) == readings


@pytest.mark.timing
def test_a_slow_pattern_cannot_hold_a_paste_past_the_deadline(tmp_path: Path) -> None:
    """The second defence, for a slow pattern the probe would miss: a hint and an ``also`` pattern RE2
    scans slowly took 32 s on a 2 MiB paste against the 2 s deadline. Let in past the loader and scanned
    block by block with a deadline check between blocks, the match stops near the deadline (bound for a
    loaded 2-core machine)."""
    import random
    import time

    from bot.library.case_store import CaseLibrary
    from bot.matching.signatures import compile_signature
    from bot.model.case import Case

    cases = copy_bundled_cases(tmp_path, "PUB-0035", "IL-0414")
    _slow_case(cases)
    slow = Case.model_validate_json((cases / "PUB-0999.json").read_text(encoding="utf-8"))
    (cases / "PUB-0999.json").unlink()
    loaded = load_library(cases)
    let_in = [compile_signature(slow.id, n, signature) for n, signature in enumerate(slow.signatures)]
    whole = {case_id: loaded.cases[case_id] for case_id in loaded.cases}
    library = CaseLibrary(cases={**whole, slow.id: slow}, signatures=[*loaded.signatures, *let_in])
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
