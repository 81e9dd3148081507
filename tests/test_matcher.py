"""The matcher on a small synthetic library: tiers, evidence, reply decisions, bounds."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

from bot.matching.matcher import Matcher
from bot.matching.ranking import MatchConfig
from bot.matching.signatures import compile_signature
from bot.model.case import Case
from bot.model.results import Tier


def _case(case_id: str, failure_class: str, signatures: list[dict[str, Any]], symptoms: str = "") -> Case:
    return Case.model_validate(
        {
            "id": case_id,
            "title": {"en": f"{case_id} title", "ko": f"{case_id} 제목"},
            "failure_class": failure_class,
            "symptoms_text": {"en": symptoms},
            "signatures": signatures,
        }
    )


CASES = [
    _case(
        "IL-0001",
        "gpu-memory-ecc",
        [
            {"pattern": "cudaErrorECCUncorrectable", "strength": "decisive"},
            {"kind": "regex", "pattern": r"Xid \(PCI:[0-9a-f:.]{4,16}\): 9[45],", "strength": "decisive"},
            {"pattern": "CUDA error: out of memory", "strength": "supporting"},
        ],
    ),
    _case(
        "IL-0002",
        "gpu-memory-ecc",
        [{"pattern": "uncorrectable ECC error encountered", "strength": "decisive"}],
    ),
    _case(
        "IL-0003",
        "nccl-hang-timeout",
        [
            {
                "pattern": "Watchdog caught collective operation timeout",
                "strength": "decisive",
                "fallout": True,
            }
        ],
    ),
    _case(
        "IL-0004",
        "host-oom",
        [
            {"pattern": "invoked oom-killer", "strength": "decisive"},
            {"kind": "regex", "pattern": r"exit ?code: ?-9\b", "strength": "supporting"},
            {"pattern": "closing signal SIGTERM", "strength": "supporting"},
            {"kind": "regex", "pattern": r"\bKilled\b", "strength": "supporting"},
        ],
    ),
    _case(
        "IL-0005",
        "dataloader-fd-limit",
        [{"pattern": "a decisive string nobody prints", "strength": "decisive"}],
        symptoms='The loader fails with "RuntimeError: received 0 items of ancdata" in the main process.',
    ),
]


def _matcher(**config: Any) -> Matcher:
    signatures = [compile_signature(case.id, index, sig) for case in CASES for index, sig in enumerate(case.signatures)]
    return Matcher({c.id: c for c in CASES}, signatures, MatchConfig(**config))


MATCHER = _matcher()


def test_decisive_signature_gives_exact_tier_evidence_and_reply() -> None:
    paste = (
        "[default0]: iteration 43680 | loss 2.1\n"
        "[default3]:RuntimeError: transform: failed to synchronize: cudaErrorECCUncorrectable: "
        "uncorrectable ECC error encountered\n"
    )
    result = MATCHER.match(paste)
    best = result.best
    assert best is not None and best.tier is Tier.EXACT
    assert {m.case_id for m in result.matches[:2]} == {"IL-0001", "IL-0002"}
    assert best.evidence[0].line.startswith("[default3]:RuntimeError")
    assert best.evidence[0].line_no == 2
    assert result.reply
    # two cases of the same class, close in score: the reply names both
    assert set(result.reply_case_ids) == {"IL-0001", "IL-0002"}


def test_repeated_lines_are_counted_not_rescored() -> None:
    lines = [
        f"[rank{r}]:[E ProcessGroupNCCL.cpp:481] [Rank {r}] Watchdog caught collective operation timeout"
        for r in range(300)
    ]
    result = MATCHER.match("\n".join(lines))
    assert result.best is not None and result.best.case_id == "IL-0003"
    assert result.best.evidence[0].count == 300
    assert result.best.tier is Tier.EXACT


def test_fallout_signature_steps_aside_for_the_root_cause() -> None:
    paste = "\n".join(
        ["NVRM: Xid (PCI:0000:3b:00): 95, pid=5171, Uncontained: FBHUB. RST: Yes, D-RST: No"]
        + [f"[rank{r}]: Watchdog caught collective operation timeout" for r in range(64)]
    )
    result = MATCHER.match(paste)
    assert result.best is not None and result.best.case_id == "IL-0001"
    watchdog = next(m for m in result.matches if m.case_id == "IL-0003")
    assert watchdog.tier is not Tier.EXACT
    assert result.reply


def test_supporting_signatures_alone_are_a_hint_not_a_proof() -> None:
    result = MATCHER.match("torchrun: failed (exitcode: -9) local_rank: 0 (pid: 178)")
    assert result.best is not None and result.best.case_id == "IL-0004"
    assert result.best.tier is Tier.WEAK
    assert not result.reply


def test_several_supporting_signatures_add_up_to_strong_but_never_to_an_unprompted_reply() -> None:
    paste = "Killed\nfailed (exitcode: -9) local_rank: 0\nSending process 598579 closing signal SIGTERM"
    result = MATCHER.match(paste)
    assert result.best is not None and result.best.tier is Tier.STRONG
    assert not result.reply  # hints alone are shown when asked, never posted unprompted


def test_case_text_similarity_finds_a_variant_without_a_signature() -> None:
    paste = "Traceback (most recent call last):\n  ...\nRuntimeError: received 0 items of ancdata"
    result = MATCHER.match(paste)
    assert result.best is not None and result.best.case_id == "IL-0005"
    assert result.best.evidence[0].kind == "text"


@pytest.mark.parametrize(
    "paste",
    [
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x512 and 256x10)",
        "KeyError: 'input_ids'",
        "ModuleNotFoundError: No module named 'flash_attn'",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "",
        "\x00\x01\x02" * 1000,
    ],
)
def test_unrelated_errors_get_no_reply(paste: str) -> None:
    assert not MATCHER.match(paste).reply


def test_conflicting_classes_without_margin_do_not_reply() -> None:
    paste = "python invoked oom-killer: gfp_mask=0x0\nRuntimeError: cudaErrorECCUncorrectable"
    result = MATCHER.match(paste)
    assert {m.tier for m in result.matches[:2]} == {Tier.EXACT}
    assert not result.reply
    assert len(result.matches) >= 2  # still listed for an explicit request


def test_slack_escaped_paste_matches() -> None:
    paste = "```\nNVRM: Xid (PCI:0000:3b:00): 95, pid=&lt;unknown&gt;, Uncontained: FBHUB\n```"
    result = MATCHER.match(paste)
    assert result.best is not None and result.best.case_id == "IL-0001"
    assert "<unknown>" in result.best.evidence[0].line


def test_oversized_paste_keeps_start_and_end_and_says_so() -> None:
    matcher = _matcher(max_bytes=64 * 1024)
    filler = "step 1 | loss 2.0 | lr 1e-4\n" * 50_000
    paste = "cudaErrorECCUncorrectable at start\n" + filler + "Watchdog caught collective operation timeout\n"
    result = matcher.match(paste)
    assert result.truncated and result.skipped_bytes > 0
    assert {"IL-0001", "IL-0003"} <= {m.case_id for m in result.matches}


def test_deadline_stops_the_text_stage() -> None:
    ticks = itertools.count()

    def clock() -> float:
        return float(next(ticks))  # every reading is one "second" later

    paste = "\n".join(f"error {i} something failed badly here" for i in range(2000))
    result = MATCHER.match(paste, clock=clock, deadline_s=0.5)
    assert result.timed_out


@pytest.mark.timing
def test_hostile_ten_megabyte_paste_is_bounded() -> None:
    hostile = ("a" * 3000 + "\n") * 3500  # ~10 MB of long lines
    started = time.perf_counter()
    result = _matcher(max_bytes=2 << 20).match(hostile, clock=time.monotonic, deadline_s=2.0)
    assert time.perf_counter() - started < 5.0
    assert result.truncated
    assert not result.reply


def test_at_most_five_candidates() -> None:
    # Eight cases each hit by their own line: the cap, not the library's size, stops the list at five.
    cases = [
        _case(f"IL-{9000 + n}", f"class-{n}", [{"pattern": f"SYNTHFAULT{n:02d} raised", "strength": "decisive"}])
        for n in range(8)
    ]
    signatures = [compile_signature(c.id, i, s) for c in cases for i, s in enumerate(c.signatures)]
    matcher = Matcher({c.id: c for c in cases}, signatures)
    paste = "\n".join(f"worker {n}: SYNTHFAULT{n:02d} raised" for n in range(8))
    result = matcher.match(paste)
    assert len(cases) > 5 and len(result.matches) == 5


def test_sets_too_big_for_their_memory_budget_are_split_and_still_match() -> None:
    cases = [
        _case(
            f"IL-{n:04d}", f"class-{n}", [{"pattern": f"Widget{n}Error: frobnication failed", "strength": "decisive"}]
        )
        for n in range(1, 3001)
    ]
    signatures = [compile_signature(c.id, i, s) for c in cases for i, s in enumerate(c.signatures)]
    matcher = Matcher({c.id: c for c in cases}, signatures, MatchConfig(set_shard=3000, set_max_mem=1 << 20))
    result = matcher.match("x\nWidget2718Error: frobnication failed\n")
    assert result.best is not None and result.best.case_id == "IL-2718"


def test_relaxed_set_patterns_are_confirmed_by_the_exact_signature() -> None:
    # {2,3} is widened to + inside the RE2 set; the exact pattern must still decide.
    case = _case("IL-0042", "c", [{"kind": "regex", "pattern": r"code=\d{2,3}\b failed", "strength": "decisive"}])
    signatures = [compile_signature(case.id, 0, case.signatures[0])]
    matcher = Matcher({case.id: case}, signatures)
    assert signatures[0].set_pattern(relaxed=True) == r"(?m)(?:code=\d+\b failed)"
    assert matcher.match("code=12345 failed").best is None  # the widened set hits, the exact pattern does not
    assert matcher.match("code=123 failed").best is not None


@pytest.mark.timing
@pytest.mark.parametrize(
    ("shape", "paste", "slack"),
    [
        ("short lines hitting a common word", b"oom\n" * (1 << 19), 0.8),  # 2 MiB; was 4.9 s
        ("nothing but newlines", b"\n" * (2 << 20), 0.8),  # was 1.7 s
    ],
)
def test_hostile_shapes_finish_near_the_deadline_on_the_real_library(shape: str, paste: bytes, slack: float) -> None:
    """Matching stops at the deadline on the real library's signatures, and cleaning a paste of millions
    of empty lines costs next to nothing (blank lines are dropped before anything else)."""
    from pathlib import Path

    from bot.library.case_store import load_library

    library = load_library(Path(__file__).resolve().parent.parent / "cases")
    matcher = Matcher(library.cases, library.signatures, sets=library.sets)
    started = time.perf_counter()
    matcher.match(paste, clock=time.monotonic, deadline_s=0.3)
    assert time.perf_counter() - started < 0.3 + slack, shape
