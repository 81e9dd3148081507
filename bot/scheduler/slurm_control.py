"""Draining and resuming a node through Slurm's client command, the one write the bot makes:
``scontrol update nodename=NODE state=drain reason=REASON`` (and ``state=resume``), a fixed argument list,
never a shell. Slurm 22.05's REST cannot update nodes (``openapi/v0.0.38`` has no node update); later
releases' ``POST /slurm/v0.0.40/node/{name}`` could, and this adapter is where it would go.

Least privilege: the bot's Slurm user needs ``AdminLevel=Operator`` (``sacctmgr modify user
name=incident-bot set adminlevel=Operator``, which needs slurmdbd), not root or SlurmUser. ``run_as`` runs
the command as that user when the bot itself runs as root (tests, a root container): the process must be
root to switch.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_REASON_CHARS = 200


@dataclass(frozen=True, slots=True)
class ControlResult:
    ok: bool
    command: str  # as a person would type it (shell-quoted), for the thread and the audit
    answer: str  # exit status and the scheduler's first line


def safe_reason(reason: str) -> str:
    """One line, printable, at most 200 characters: what scontrol stores as the node's reason."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in reason).split())
    return flat[:_REASON_CHARS] or "drained from Slack"


class SlurmControl:
    def __init__(
        self,
        *,
        bin_dir: str | None = None,
        run_as: str | None = None,
        run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
    ) -> None:
        self._bin = bin_dir
        self._run_as = run_as
        self._run = run

    def argv(self, node: str, state: str, reason: str | None = None) -> list[str]:
        if not _NAME.match(node):
            raise ValueError(f"not a node name: {node[:80]!r}")
        args = [os.path.join(self._bin, "scontrol") if self._bin else "scontrol", "update", f"nodename={node}"]
        args.append(f"state={state}")
        if reason is not None:
            args.append(f"reason={safe_reason(reason)}")
        return args

    def command(self, node: str, state: str, reason: str | None = None) -> str:
        return shlex.join(self.argv(node, state, reason))

    def set_state(self, node: str, state: str, reason: str | None, timeout_s: float) -> ControlResult:
        argv = self.argv(node, state, reason)
        shown = shlex.join(argv)
        extra = {"user": self._run_as} if self._run_as else {}
        try:
            done = self._run(argv, capture_output=True, text=True, timeout=timeout_s, check=False, **extra)
        except subprocess.TimeoutExpired:
            return ControlResult(False, shown, f"no answer in {timeout_s:g} s")
        except OSError as failed:
            return ControlResult(False, shown, f"could not run scontrol: {failed.strerror or failed}")
        said = (done.stderr or done.stdout or "").strip().splitlines()
        first = said[0][:300] if said else ""
        return ControlResult(done.returncode == 0, shown, f"exit {done.returncode}" + (f": {first}" if first else ""))

    def drain(self, node: str, reason: str, timeout_s: float) -> ControlResult:
        return self.set_state(node, "drain", reason, timeout_s)

    def resume(self, node: str, timeout_s: float) -> ControlResult:
        return self.set_state(node, "resume", None, timeout_s)
