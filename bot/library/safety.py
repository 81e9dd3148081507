"""The SAFETY rules: commands in a runbook that disturb a node, or are wrong whatever comes before, and the
checks ``cases validate`` (``bot.library.review``) and the draft form run with them.

A rule names a command; it is an error unless its ``before`` patterns each appear in an earlier step (a GPU
reset only after a drain and a check that the node's jobs have left); a ``never`` rule is an error wherever
it appears; an ``assumes`` rule needs the step's ``assumes`` in both languages, and ``says`` lists what that
text must mention (a warning). ``tests/test_safety_rules.py`` plants a violation, a compliant runbook and a
wrong order for every rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.library.case_store import Problem
from bot.model.case import Case, Lang


@dataclass(frozen=True, slots=True)
class Rule:
    """A command that is wrong or unsafe unless ``needs`` holds; ``why`` is the error's reason."""

    name: str
    command: re.Pattern[str]
    why: str
    # Patterns that must each appear in an earlier step's command (a drain before a reset), if any.
    before: tuple[re.Pattern[str], ...] = ()
    # Whether the command is wrong whatever comes before (a deprecated variable, a flag that misleads).
    never: bool = False
    # Whether the step must say what it assumes (versions, privileges, waiting for idle).
    assumes: bool = False
    # What ``assumes`` must say in each language (a warning otherwise): scontrol reboot waits for idle.
    says: tuple[tuple[Lang, re.Pattern[str]], ...] = ()


_DRAIN = re.compile(r"scontrol\s+update\s+node(?:name)?=\S+.*state=drain", re.IGNORECASE)
_JOBS_LEFT = re.compile(r"squeue\b.*(?:-w|--nodelist)")
SAFETY: tuple[Rule, ...] = (
    Rule(
        "gpu-reset",
        re.compile(r"nvidia-smi\b.*(?:\s-r\b|--gpu-reset)"),
        "a GPU reset needs an earlier drain (scontrol update ... state=drain) and a check that the node's jobs"
        " have left (squeue -w): draining stops new work, not running jobs",
        before=(_DRAIN, _JOBS_LEFT),
        assumes=True,
    ),
    Rule(
        "fabric-manager",
        re.compile(r"systemctl\s+restart\s+nvidia-fabricmanager"),
        "restart Fabric Manager only on a drained node whose jobs have left",
        before=(_DRAIN, _JOBS_LEFT),
        assumes=True,
    ),
    Rule(
        "reboot",
        re.compile(r"scontrol\s+reboot\b"),
        "say in `assumes` that scontrol reboot waits for the node to go idle",
        assumes=True,
        says=(("en", re.compile(r"\bidle\b", re.IGNORECASE)), ("ko", re.compile("유휴"))),
    ),
    Rule(
        "nccl-async",
        re.compile(r"(?<!TORCH_)NCCL_ASYNC_ERROR_HANDLING|(?<!TORCH_)NCCL_BLOCKING_WAIT"),
        "deprecated since PyTorch 2.2: use TORCH_NCCL_ASYNC_ERROR_HANDLING / TORCH_NCCL_BLOCKING_WAIT",
        never=True,
    ),
    Rule(
        "sbatch-per-node-output",
        re.compile(r"#SBATCH\s+--output=\S*%N"),
        "the batch script runs on the first node only: per-node files need srun --output=...%N... or srun --label",
        never=True,
    ),
    Rule(
        "srun-into-job",
        re.compile(r"srun\b(?=.*--jobid)(?!.*--overlap)"),
        "srun --jobid blocks behind a job that holds every resource: add --overlap",
        never=True,
    ),
    Rule(
        "rm-rf",
        # Any recursive rm (-r, -R, -rf, -fr, -r -f, --recursive): one wrong variable empties a directory tree.
        re.compile(r"\brm(?:\s+-[a-zA-Z]+|\s+--[a-z-]+)*\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\b"),
        "no recursive rm in a runbook: move the files aside, or name each file",
        never=True,
    ),
)


def safety_problems(case: Case, path: str) -> list[Problem]:
    """Commands that break a rule of ``SAFETY`` (errors). A step's text is held to the same rules as its
    command (a draft's runbook is text only, and a reader copies a command from the text as readily), except
    the ``assumes`` rule, which a command field carries."""
    found: list[Problem] = []
    earlier: list[str] = []
    for number, step in enumerate(case.runbook):
        command = step.command or ""
        texts = [(f"text.{lang}", step.text.get(lang) or "") for lang in step.text.langs()]
        for field, said in [("command", command), *texts]:
            for rule in SAFETY if said else ():
                if not rule.command.search(said):
                    continue
                missing = [p for p in rule.before if not any(p.search(done) for done in earlier)]
                if rule.never or missing:
                    found.append(Problem(path, f"runbook[{number}].{field}", f"{rule.name}: {rule.why}"))
                elif field == "command" and rule.assumes and (step.assumes is None or len(step.assumes.langs()) < 2):
                    found.append(Problem(path, f"runbook[{number}].assumes", f"{rule.name}: {rule.why}"))
        earlier += [command, *(said for _, said in texts)]
    return found


def assumes_problems(case: Case, path: str) -> list[Problem]:
    """A command without ``assumes`` in both languages, or whose ``assumes`` leaves out what a rule's ``says``
    asks for (warnings: ``cases validate --strict`` fails on them)."""
    found: list[Problem] = []
    for number, step in enumerate(case.runbook):
        if not step.command:
            continue
        where = f"runbook[{number}].assumes"
        if step.assumes is None or len(step.assumes.langs()) < 2:
            message = (
                "a step with a command needs `assumes` in English and Korean: what the command needs to be right"
                " (tool and version where it matters, where it runs, the node's state: drained, jobs left, idle)"
            )
            found.append(Problem(path, where, message, "warning"))
            continue
        for rule in SAFETY:
            if not rule.command.search(step.command):
                continue
            for lang, needed in rule.says:
                if not needed.search(step.assumes.get(lang) or ""):
                    message = f"{rule.name}: {rule.why} (assumes.{lang} does not say {needed.pattern!r})"
                    found.append(Problem(path, f"{where}.{lang}", message, "warning"))
    return found
