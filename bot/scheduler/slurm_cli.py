"""The scheduler read through Slurm's client commands on the bot's host (``SLURM_CLI=true``): ``sinfo``,
``squeue`` and ``sacct`` with fixed argument lists, never through a shell, each bounded by what is left of
the caller's deadline. Needs the client binaries, ``slurm.conf`` (or ``SLURM_CONF``) and munge's socket.

Rights: reading node states and reasons needs nothing special; ``squeue -w`` lists other users' jobs only
when ``PrivateData=jobs`` is not set (else the count is the bot user's own jobs); ``sacct -a`` needs
accounting (slurmdbd) and, under ``PrivateData=jobs``, an operator or admin account.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from datetime import datetime

from bot.model.nodestate import NodeState, SchedulerError
from bot.scheduler.slurm_state import from_epoch, from_words

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_OUTPUT_CAP = 4 << 20
# sinfo's fields: node, long state, who set the reason, when (epoch: SLURM_TIME_FORMAT=%s), the reason last
# (it may hold the separator).
_SINFO_FORMAT = "%N|%T|%u|%H|%E"


def _epoch(text: str) -> datetime | None:
    return from_epoch(int(text)) if text.isdigit() else None


class SlurmCli:
    name = "slurm-cli"

    def __init__(
        self,
        *,
        bin_dir: str | None = None,
        accounting: bool = True,
        run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
    ) -> None:
        self._bin = bin_dir
        self._accounting = accounting
        self._run = run

    def _command(self, tool: str, args: Sequence[str], deadline: float) -> subprocess.CompletedProcess[str]:
        left = deadline - time.monotonic()
        if left <= 0.05:
            raise SchedulerError("timeout", tool)
        path = os.path.join(self._bin, tool) if self._bin else tool
        env = {**os.environ, "SLURM_TIME_FORMAT": "%s"}
        try:
            done = self._run(
                [path, *args], capture_output=True, text=True, timeout=left, env=env, check=False, shell=False
            )
        except subprocess.TimeoutExpired as timed_out:
            raise SchedulerError("timeout", tool) from timed_out
        except OSError as missing:
            raise SchedulerError("unreachable", f"{tool}: {missing.strerror or missing}") from missing
        if len(done.stdout) > _OUTPUT_CAP:
            raise SchedulerError("garbage", f"{tool}: output over {_OUTPUT_CAP} bytes")
        return done

    def nodes(self, names: Sequence[str], timeout_s: float) -> dict[str, NodeState | None]:
        deadline = time.monotonic() + timeout_s
        asked = [n for n in dict.fromkeys(names) if _NAME.match(n)]
        found: dict[str, NodeState | None] = {n: None for n in names}
        if not asked:
            return found
        done = self._command("sinfo", ["-h", "-N", "-n", ",".join(asked), "-o", _SINFO_FORMAT], deadline)
        if done.returncode != 0:
            raise SchedulerError("unreachable", f"sinfo exited with status {done.returncode}")
        rows: dict[str, list[str]] = {}
        for line in done.stdout.splitlines():
            fields = line.split("|", 4)
            if len(fields) != 5 or not _NAME.match(fields[0]):
                raise SchedulerError("garbage", "sinfo: an unexpected line")
            rows.setdefault(fields[0], fields)  # a node in two partitions is listed twice
        for name, (_, state_word, by, at, reason) in rows.items():
            if name not in found:
                continue
            users = self._users(name, deadline)
            state, not_responding = from_words(state_word, jobs=len(users))
            found[name] = NodeState(
                name=name,
                state=state,
                not_responding=not_responding,
                reason=None if reason in ("", "none", "(null)") else reason,
                reason_by=None if by in ("", "N/A", "(null)", "Unknown") or reason in ("", "none") else by,
                reason_at=_epoch(at),
                jobs=len(users),
                users=tuple(sorted(set(users))),
                failed_24h=self._failed(name, deadline),
                raw_state=state_word,
            )
        return found

    def _users(self, name: str, deadline: float) -> list[str]:
        done = self._command("squeue", ["-h", "-w", name, "-t", "RUNNING,COMPLETING", "-o", "%u"], deadline)
        if done.returncode != 0:
            raise SchedulerError("unreachable", f"squeue exited with status {done.returncode}")
        return [line.strip() for line in done.stdout.splitlines() if line.strip()]

    def _failed(self, name: str, deadline: float) -> int | None:
        """Jobs that ended failed on ``name`` in the last 24 h, or None without accounting (or time)."""
        if not self._accounting or deadline - time.monotonic() < 0.2:
            return None
        args = ["-a", "-X", "-n", "-P", "-N", name, "-S", "now-24hours", "-E", "now"]
        try:
            done = self._command("sacct", [*args, "-s", "F,NF,TO,OOM,BF,DL", "-o", "JobID"], deadline)
        except SchedulerError:
            return None
        if done.returncode != 0:
            return None
        return sum(1 for line in done.stdout.splitlines() if line.strip())
