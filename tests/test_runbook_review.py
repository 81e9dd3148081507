"""The runbook review's acceptance pastes, written here from its table (the reviewer's own are kept back):
the NVML mismatch gets a runbook that drains, then reboots or reloads; Xid 79 gets the bug report before
any reboot or reset; Xid 154, Xid 140 and a GB200 NVLink Xid get an unprompted answer; a reset is aimed by
the PCI id the Xid line names, never by a CUDA ordinal; no command of the library runs `kubectl debug …
chroot` without the sysadmin profile or aims a reset by `{gpu}`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.library.case_store import load_library
from bot.matching.matcher import Matcher
from bot.model.case import Case
from bot.ops.settings import BUNDLED_CASES
from bot.replies.render import match_reply

LIBRARY = load_library(BUNDLED_CASES)
MATCHER = Matcher(LIBRARY.cases, LIBRARY.signatures, sets=LIBRARY.sets)
PASTES = Path(__file__).resolve().parent / "fixtures" / "pastes"
_REBOOT_OR_RESET = re.compile(r"scontrol\s+reboot|\breboot\b|nvidia-smi\b[^;&|]*\s-r\b|modprobe\s+-r|rmmod")
_DRAIN = re.compile(r"state=drain")


def _first_index(case: Case, pattern: re.Pattern[str]) -> int:
    return next(n for n, step in enumerate(case.runbook) if pattern.search(step.command or ""))


def test_the_nvml_mismatch_drains_then_reboots_or_reloads() -> None:
    paste = (
        "$ srun -w gpu-d11 nvidia-smi\n"
        "Failed to initialize NVML: Driver/library version mismatch\n"
        "NVML library version: 550.127\n"
    )
    result = MATCHER.match(paste)
    assert result.reply and result.best is not None and result.best.case_id == "PUB-0040"
    case = LIBRARY.cases["PUB-0040"]
    assert _first_index(case, _DRAIN) < _first_index(case, _REBOOT_OR_RESET)
    assert not (case.runbook[0].command or "").lstrip().startswith(("nvidia-smi", "ssh {node} nvidia-smi"))


def test_xid_79_collects_the_bug_report_before_any_reboot_or_reset() -> None:
    paste = (
        "Mar  4 03:12:44 gpu-c021 kernel: NVRM: Xid (PCI:0000:4e:00): 79, pid=2112, name=python, GPU has fallen off"
        " the bus.\n"
        "Mar  4 03:12:44 gpu-c021 kernel: NVRM: GPU 0000:4e:00.0: GPU has fallen off the bus.\n"
        "Mar  4 03:12:44 gpu-c021 kernel: NVRM: A GPU crash dump has been created. If possible, please run\n"
        "NVRM: nvidia-bug-report.sh as root to collect this data before\nNVRM: the NVIDIA kernel module is unloaded.\n"
    )
    result = MATCHER.match(paste)
    assert result.reply and result.best is not None and result.best.case_id == "IL-0415"
    case = LIBRARY.cases["IL-0415"]
    assert _first_index(case, re.compile(r"nvidia-bug-report\.sh")) < _first_index(case, _REBOOT_OR_RESET)


@pytest.mark.parametrize(
    ("fixture", "case_id"),
    [
        ("new-xid154-node-reboot-required-syslog", "PUB-0042"),
        ("new-xid140-h100-dmesg", "PUB-0043"),
        ("new-xid149-netir-fatal-gb200", "PUB-0044"),
    ],
)
def test_the_newest_gpus_xids_get_an_unprompted_answer(fixture: str, case_id: str) -> None:
    result = MATCHER.match((PASTES / f"{fixture}.txt").read_bytes())
    assert result.reply and result.best is not None and result.best.case_id == case_id


def test_a_reset_is_aimed_by_the_pci_id_the_xid_line_names_not_the_cuda_ordinal() -> None:
    """The review's q04: Xid 48/63 on 4e:00 while the rank says cuda:0."""
    paste = (
        "Mar  4 10:12:01 gpu-k12 kernel: NVRM: Xid (PCI:0000:4e:00): 48, pid=1, name=python, DBE (0x1)\n"
        "Mar  4 10:12:01 gpu-k12 kernel: NVRM: Xid (PCI:0000:4e:00): 63, pid=1, name=python, Row Remapper: New row"
        " marked for remapping, reset gpu to activate.\n"
        "[rank3]: torch.cuda device cuda:0: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    )
    result = MATCHER.match(paste)
    assert result.best is not None and result.best.case_id == "IL-0414" and result.suspects is not None
    fills = result.suspects.fills
    case = LIBRARY.cases["IL-0414"]
    details = match_reply(result, LIBRARY.cases, ("en",), explicit=True, fills=fills).plain  # type: ignore[arg-type]
    assert "-i 0 " not in details and not details.rstrip().endswith("-i 0")
    reset = next(s for s in case.runbook if s.command and "nvidia-smi -r" in s.command)
    assert "{pci}" in (reset.command or "") and fills.get("pci") == "0000:4e:00.0"


def test_no_command_in_the_library_debugs_without_the_profile_or_resets_by_ordinal() -> None:
    for case_id in LIBRARY.cases:
        for step in LIBRARY.cases[case_id].runbook:
            command = step.command or ""
            if re.search(r"kubectl\s+debug\b.*chroot\s+/host", command):
                assert "--profile=sysadmin" in command, (case_id, command)
            if re.search(r"nvidia-smi\b[^;&|]*\s-r\b", command):
                assert "{gpu}" not in command and "-i {pci}" in command, (case_id, command)
