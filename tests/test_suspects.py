"""Naming the suspect node, rank and GPU from the lines that matched, and only from those."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.library.case_store import load_library
from bot.matching.matcher import Matcher
from bot.matching.suspects import extract_suspects, is_host
from bot.replies.render import fill_template

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = load_library(ROOT / "cases")
MATCHER = Matcher(LIBRARY.cases, LIBRARY.signatures)


@pytest.mark.parametrize(
    ("line", "field", "expected"),
    [
        # dmesg / syslog / journalctl
        (
            "Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
            "hosts",
            {"gpu-a17": 1},
        ),
        (
            "Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
            "pci",
            ["0000:3b:00"],
        ),
        ("[Mon Mar  4 10:12:01 2024] NVRM: Xid (PCI:0000:B7:00): 48, pid=1, DBE", "pci", ["0000:b7:00"]),
        # nvidia-smi
        ("Unable to determine the device handle for GPU0000:08:00.0: Unknown Error", "pci", ["0000:08:00"]),
        ("GPU 00000000:3B:00.0", "pci", ["0000:3b:00"]),
        # torch / torchrun / DeepSpeed rank prefixes
        ("[rank5]:RuntimeError: CUDA error: uncorrectable ECC error encountered", "ranks", [5]),
        ("[E ProcessGroupNCCL.cpp:481] [Rank 65] Watchdog caught collective operation timeout", "ranks", [65]),
        ("12: RuntimeError: CUDA error: uncorrectable ECC error encountered", "ranks", [12]),
        ("[default3]:terminate called after throwing an instance of 'c10::CUDAError'", "local_ranks", [3]),
        # NCCL's own host:pid:tid [dev] prefix
        ("gpu-b04:1234:5678 [3] NCCL WARN NET/IB : Got completion from peer with status=12", "hosts", {"gpu-b04": 1}),
        # pdsh-style and bracketed host prefixes
        ("h100-018: python invoked oom-killer: gfp_mask=0x0", "hosts", {"h100-018": 1}),
        ("[node-12] NVRM: Xid (PCI:0000:3b:00): 79", "hosts", {"node-12": 1}),
        # Slurm
        ("srun: error: Node failure on n30157", "hosts", {"n30157": 1}),
        (
            "slurmstepd: error: *** JOB 682842 ON n30001 CANCELLED AT 2022-05-07T03:12:55 DUE TO NODE FAILURE ***",
            "jobs",
            ["682842"],
        ),
        ("slurmstepd: error: Detected 1 oom_kill event in StepId=8812.0.", "jobs", ["8812"]),
        ("slurmstepd: error: *** STEP 4242.0 ON n30001 CANCELLED AT 2022-05-07T03:12:55 ***", "jobs", ["4242"]),
        ("RuntimeError: CUDA error: out of memory on cuda:3", "gpus", [3]),
    ],
)
def test_identifiers_from_prefixes(line: str, field: str, expected: object) -> None:
    info = extract_suspects([line], [0], failed=True).to_info()
    assert info is not None
    assert getattr(info, field) == expected


@pytest.mark.parametrize(
    "token",
    [
        *("RuntimeError", "kernel", "python3", "cuda0", "rank3", "default3", "NCCL", "E1120"),
        *("nvme0n1", "ib0", "mlx5_0", "psycopg2.OperationalError"),  # devices and Python names before a colon
    ],
)
def test_words_that_look_like_hosts_are_not_hosts(token: str) -> None:
    assert not is_host(token)


@pytest.mark.parametrize("token", ["gpu-a17", "n30041", "h100-018", "ip-10-1-92-13", "node-12.cluster.local"])
def test_real_host_names(token: str) -> None:
    assert is_host(token)


def test_the_batch_host_of_a_cancelled_job_is_not_named() -> None:
    line = "slurmstepd: error: *** JOB 682842 ON n30001 CANCELLED AT 2022-05-07T03:12:55 DUE TO NODE FAILURE ***"
    info = extract_suspects([line], [0], failed=True).to_info()
    assert info is not None and info.hosts == {}


def test_srun_task_line_ties_the_rank_to_its_host() -> None:
    lines = [
        "[rank5]:RuntimeError: CUDA error: uncorrectable ECC error encountered",
        "srun: error: gpu-a17: task 5: Exited with exit code 1",
        "srun: error: gpu-a18: tasks 8-15: Exited with exit code 1",
        "some unrelated line on gpu-z99",
    ]
    info = extract_suspects(lines, [0], failed=True).to_info()
    assert info is not None
    assert info.hosts == {"gpu-a17": 1}
    assert info.ranks == [5]


def test_torchrun_failure_table_ties_the_rank_to_its_host() -> None:
    lines = [
        "[rank3]: torch.OutOfMemoryError is not it; Signal 9 (SIGKILL) received by PID 4121",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2024-03-14_05:14:14",
        "  host      : node-12",
        "  rank      : 3 (local_rank: 3)",
        "  exitcode  : -9 (pid: 4121)",
    ]
    info = extract_suspects(lines, [0], failed=False).to_info()
    assert info is not None and info.hosts == {"node-12": 1}


def test_one_failing_rank_among_many_healthy_ones() -> None:
    paste = "\n".join(
        [f"[rank{r}]: iteration 100 | loss 2.1" for r in range(64)]
        + ["[rank37]:RuntimeError: CUDA error: uncorrectable ECC error encountered"]
        + ["srun: error: gpu-c05: task 37: Exited with exit code 1", "srun: error: gpu-c01: tasks 0-7: Terminated"]
    )
    result = MATCHER.match(paste)
    assert result.suspects is not None
    assert result.suspects.failed
    assert result.suspects.ranks == [37]
    assert result.suspects.hosts == {"gpu-c05": 1}
    assert "failed on gpu-c05" in result.suspects.summary


def test_collective_timeout_names_reporters_not_a_culprit() -> None:
    paste = "\n".join(
        f"[rank{r}]:[E ProcessGroupNCCL.cpp:481] [Rank {r}] Watchdog caught collective operation timeout: "
        f"WorkNCCL(SeqNum=1559, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800441 milliseconds before timing out."
        for r in range(16)
    )
    result = MATCHER.match(paste)
    assert result.best is not None and result.best.case_id == "PUB-0003"
    assert result.suspects is not None
    assert not result.suspects.failed
    assert result.suspects.summary.startswith("reported by ranks 0-15")
    assert "node" not in result.suspects.fills


def test_several_failing_nodes_are_listed_with_counts() -> None:
    paste = "\n".join(
        ["Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 95, pid=1, Uncontained: FBHUB. RST: Yes"] * 3
        + ["Mar  4 10:13:01 gpu-a18 kernel: NVRM: Xid (PCI:0000:5e:00): 95, pid=2, Uncontained: FBHUB. RST: Yes"]
    )
    result = MATCHER.match(paste)
    assert result.suspects is not None
    assert result.suspects.hosts == {"gpu-a17": 3, "gpu-a18": 1}
    assert result.suspects.fills["node"] == "gpu-a17,gpu-a18"
    assert "pci" not in result.suspects.fills  # two GPUs: no single value to fill


def test_templates_are_filled_and_unknown_placeholders_say_what_to_write() -> None:
    assert fill_template("sbatch --exclude={node} job.sh", {"node": "gpu-a17"}) == "sbatch --exclude=gpu-a17 job.sh"
    assert fill_template("nvidia-smi -q -d ECC -i {pci}", {"node": "x"}) == "nvidia-smi -q -d ECC -i PCI"
    assert fill_template("sacct -j {job} -o NodeList", {}) == "sacct -j JOBID -o NodeList"


def test_reply_shows_suspects_and_filled_commands() -> None:
    from bot.replies.render import match_reply

    paste = "Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE (0x1)"
    result = MATCHER.match(paste)
    assert result.suspects is not None
    reply = match_reply(
        result,
        LIBRARY.cases,
        ("en", "ko"),
        explicit=True,
        suspects=result.suspects.summary,
        fills=result.suspects.fills,
    )
    assert "Failed on gpu-a17" in reply.plain and "ssh gpu-a17 timeout 60 nvidia-smi" in reply.plain
    assert "-i 0000:3b:00.0" in reply.plain
    assert "{pci}" not in reply.plain


def test_no_suspects_from_unrelated_lines() -> None:
    paste = "gpu-z99: all good\nRuntimeError: cudaErrorECCUncorrectable: uncorrectable ECC error encountered"
    result = MATCHER.match(paste)
    assert result.suspects is None or result.suspects.hosts == {}


def test_a_syslog_line_with_a_one_digit_day_names_its_host() -> None:
    paste = "Mar 3 01:02:03 gpu-k12 kernel: NVRM: Xid (PCI:0000:4e:00): 48, pid=1, name=python, DBE (0x1)"
    result = MATCHER.match(paste)
    assert result.suspects is not None and result.suspects.hosts == {"gpu-k12": 1}


def test_a_host_named_where_a_task_was_killed_fills_the_node() -> None:
    """The review's p13: the OOM line names no host, but srun says which host's task was killed, and
    slurmstepd which step: both fill the commands."""
    paste = "\n".join(
        [
            "Out of memory: Killed process 12345 (python) total-vm:123kB, anon-rss:100kB",
            "srun: error: gpu-e044: task 3: Killed",
            "slurmstepd: error: *** STEP 4412210.0 ON gpu-e044 CANCELLED AT 2024-01-01T00:00:00 ***",
        ]
    )
    result = MATCHER.match(paste)
    assert result.suspects is not None and result.suspects.failed
    assert result.suspects.hosts == {"gpu-e044": 1} and result.suspects.jobs == ["4412210"]


def test_an_nccl_cuda_failure_names_its_host_as_failed_not_reporting() -> None:
    """The review's q06: the host that printed its own CUDA failure is where it failed, even when the
    matched line is a watchdog every rank prints."""
    paste = "\n".join(
        [
            "gpu-m03:2211:2301 [5] NCCL WARN Cuda failure 999 'unknown error'",
            "[rank45]:[E ProcessGroupNCCL.cpp:1375] [PG 0 Rank 45] Process group watchdog thread terminated with"
            " exception: CUDA error: unknown error",
        ]
    )
    result = MATCHER.match(paste)
    assert result.suspects is not None and result.suspects.failed
    assert "gpu-m03" in result.suspects.hosts


@pytest.mark.parametrize(
    "line",
    [
        "srun: error: gpu-c01: tasks 0-7: Terminated",  # srun stopping the others after one failed
        "srun: error: gpu-c02: task 9: Exited with exit code 1",  # every rank exits after an abort
        "srun: error: gpu-c06: tasks 0-7: Aborted (core dumped)",  # as every rank after a watchdog abort
        "slurmstepd: error: *** JOB 77 ON gpu-c03 CANCELLED AT 2024-01-01T00:00:00 DUE TO NODE FAILURE ***",
        "slurmstepd: error: *** JOB 77 ON gpu-c04 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***",
        "ssh gpu-c05 is slow today; NCCL WARN Cuda failure was seen earlier",  # mentioned, not a prefix
    ],
)
def test_a_host_merely_mentioned_or_stopped_with_the_rest_is_not_named(line: str) -> None:
    from bot.matching.suspects import named_failures

    assert named_failures([line]).hosts == ()


def test_a_death_srun_reports_of_every_host_names_none() -> None:
    from bot.matching.suspects import named_failures

    every = [f"srun: error: gpu-a{n:02d}: tasks {8 * n}-{8 * n + 7}: Killed" for n in range(8)]
    assert named_failures(every).hosts == ()
    one = [*[f"srun: error: gpu-a{n:02d}: tasks {8 * n}-{8 * n + 7}: Terminated" for n in range(7)], every[7]]
    assert named_failures(one).hosts == ("gpu-a07",)
