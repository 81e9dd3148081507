"""Application faults are not hardware faults (issue 34, item 4): a program error beside a watchdog
timeout leads, and no case whose proof is only the watchdog answers unprompted; common job-side errors get
one plain line and no weak candidates that matched no line of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.library.case_store import load_library
from bot.matching.jobside import job_error
from bot.matching.matcher import Matcher
from bot.ops.settings import BUNDLED_CASES
from bot.replies.render import match_reply

LIBRARY = load_library(BUNDLED_CASES)
MATCHER = Matcher(LIBRARY.cases, LIBRARY.signatures, sets=LIBRARY.sets)
WATCHDOG = (
    "[rank0]:[E1026 04:01:29.510593654 ProcessGroupNCCL.cpp:683] [Rank 0] Watchdog caught collective operation"
    " timeout: WorkNCCL(SeqNum=55485, OpType=ALLREDUCE, NumelIn=2560, NumelOut=160, Timeout(ms)=600000) ran for"
    " 600087 milliseconds before timing out."
)


@pytest.mark.parametrize(
    "fault",
    [
        "[rank2]: RuntimeError: CUDA error: an illegal memory access was encountered",
        "Mar  5 02:10:11 gpu-f07 kernel: NVRM: Xid (PCI:0000:3b:00): 31, pid=4411, name=python, Ch 00000008, MMU Fault",
        "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
        "[rank1]: RuntimeError: CUDA error: device-side assert triggered",
    ],
)
def test_a_program_error_beside_a_watchdog_stops_the_unprompted_reply_and_leads(fault: str) -> None:
    alone = MATCHER.match(WATCHDOG)
    assert alone.reply and alone.best is not None and alone.best.case_id == "PUB-0003"  # the watchdog alone
    result = MATCHER.match(f"{fault}\n{WATCHDOG}")
    assert not result.reply and result.job_error == fault
    plain = match_reply(result, LIBRARY.cases, ("en",), explicit=True).plain  # type: ignore[arg-type]
    assert plain.startswith("This looks like an error in the job, not the cluster:\n> " + " ".join(fault.split())[:40])


def test_a_hardware_proof_beside_a_program_error_still_answers() -> None:
    """A decisive hardware line (uncorrectable ECC) is proof of its own: the OOM that followed does not
    silence it."""
    paste = (
        "[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n"
    )
    result = MATCHER.match(paste)
    assert result.reply and result.best is not None and result.best.case_id in {"IL-0427", "IL-0414"}


def test_a_job_side_traceback_gets_one_line_and_no_unrelated_candidates() -> None:
    paste = (
        'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    loss = out["loss"]\n'
        "KeyError: 'loss'"
    )
    result = MATCHER.match(paste)
    assert not result.reply and result.job_error == "KeyError: 'loss'"
    plain = match_reply(result, LIBRARY.cases, ("en", "ko"), explicit=True).plain  # type: ignore[arg-type]
    assert "error in the job, not the cluster" in plain and "KeyError: 'loss'" in plain
    assert "Closest weak candidates" not in plain  # loss-spike cases matched no line of this paste


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("KeyError: 'loss'", True),
        ("[rank3]: NameError: name 'x' is not defined", True),
        ("RuntimeError: CUDA error: uncorrectable ECC error encountered", False),
        ("NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.", False),
        ("the KeyError handler logged nothing", False),  # a word in prose, not the exception
    ],
)
def test_what_counts_as_the_jobs_own_error(line: str, found: bool) -> None:
    assert (job_error([line]) is not None) is found


def test_a_long_line_is_cut_for_the_screen() -> None:
    line = "KeyError: " + "x" * 5000
    said = job_error([line])
    assert said is not None and len(said) == 300


def test_the_reviewers_application_fault_gets_no_unprompted_hardware_answer(tmp_path: Path) -> None:
    """The review's q03 as a file: Xid 31 and an illegal memory access on rank 2, a watchdog on rank 0."""
    paste = tmp_path / "q03.log"
    paste.write_text(
        "Mar  5 02:10:11 gpu-f07 kernel: NVRM: Xid (PCI:0000:3b:00): 31, pid=4411, name=python, MMU Fault\n"
        "[rank2]: RuntimeError: CUDA error: an illegal memory access was encountered\n" + WATCHDOG + "\n",
        encoding="utf-8",
    )
    result = MATCHER.match(paste.read_bytes())
    assert not result.reply
