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
    # A command this matches is outside the rule (a test run by srun inside a maintenance reservation).
    unless: re.Pattern[str] | None = None


# Containment: a drain (Slurm) or a drain or cordon (Kubernetes), and a check that fails closed that the
# node's jobs have left: Slurm says `drained` (not `draining`) only once no job is left, and sinfo is not
# filtered by PrivateData=jobs as squeue is; a failed sinfo or `drained*` (not responding) fails the test.
_DRAIN = re.compile(r"scontrol\s+update\s+node(?:name)?=\S+.*state=drain|kubectl\s+(?:drain|cordon)\b", re.IGNORECASE)
_JOBS_LEFT = re.compile(
    r"sinfo\b[^\n]*-o\s*['\"]?%T\b[^\n]*=\s*['\"]?drained\b|kubectl\s+get\s+pods\b[^\n]*spec\.nodeName="
)
_CONTAINED = (
    "an earlier drain (scontrol update ... state=drain, or kubectl drain) and a check that fails closed that the"
    ' node\'s jobs have left ([ "$(sinfo -h -n NODE -o %T)" = drained ] && ...; squeue fails open)'
)
# Commands that disturb a node or a job on it: never the fallback of a check that failed.
_DISTURBING = (
    r"nvidia-smi\b[^\n|]*(?:\s-r\b|--gpu-reset)|dcgmi\s+diag|systemctl\s+(?:restart|stop)|scontrol\s+(?:reboot|update)"
    r"|\breboot\b|modprobe\s+-r|\brmmod\b|_perf\b|gpu-burn|kubectl\s+(?:drain|delete)|ipmitool"
)
SAFETY: tuple[Rule, ...] = (
    Rule(
        "gpu-reset",
        re.compile(r"nvidia-smi\b[^\n;&|]*(?:\s-r\b|--gpu-reset)"),
        f"a GPU reset needs {_CONTAINED}",
        before=(_DRAIN, _JOBS_LEFT),
        assumes=True,
    ),
    Rule(
        "reset-aim",
        re.compile(
            r"nvidia-smi\b(?=[^\n;&|]*(?:\s-r\b|--gpu-reset))"
            r"(?:(?=[^\n;&|]*\{(?:gpu|rank)\})|(?![^\n;&|]*(?:\s-i\b|--id\b)))"
        ),
        "aim a GPU reset by PCI bus id (nvidia-smi -r -i {pci}): {gpu} is a CUDA ordinal inside the job, renumbered by"
        " CUDA_VISIBLE_DEVICES, so it resets another GPU; without -i nvidia-smi resets every GPU",
        never=True,
    ),
    Rule(
        "fail-open",
        re.compile(rf"\|\|(?=[^\n]*(?:{_DISTURBING}))"),
        "a disturbing command after || runs when the check before it fails (slurmctld slow, a hidden job):"
        ' make the check fail closed and join with && ([ "$(sinfo -h -n NODE -o %T)" = drained ] && ...)',
        never=True,
    ),
    Rule(
        "fabric-manager",
        re.compile(r"systemctl\s+restart\s+nvidia-fabricmanager"),
        f"restart Fabric Manager only after {_CONTAINED}",
        before=(_DRAIN, _JOBS_LEFT),
        assumes=True,
    ),
    Rule(
        "runtime-restart",
        re.compile(r"systemctl\s+(?:restart|stop)\s+(?:docker|containerd|crio|cri-o|kubelet)\b"),
        f"restarting the container runtime or kubelet stops or orphans running containers: it needs {_CONTAINED}",
        before=(_DRAIN, _JOBS_LEFT),
        assumes=True,
    ),
    Rule(
        "gpu-test",
        re.compile(
            r"dcgmi\s+diag\s+(?:-r|--run)\s*['\"]?(?:[234]\b|medium|long)|\bgpu-burn\b"
            r"|\b(?:all_reduce|all_gather|broadcast|reduce_scatter|alltoall|sendrecv|reduce|gather|scatter)_perf\b"
        ),
        "a stress or diagnostic test started outside the scheduler competes with any job on those GPUs: run it"
        f" by srun or sbatch (the scheduler allocates its GPUs), or after {_CONTAINED}",
        before=(_DRAIN, _JOBS_LEFT),
        assumes=True,
        unless=re.compile(r"^(?:\w+=\S*\s+)*(?:srun|sbatch)\b(?![^\n]*(?:--jobid|--overlap))"),
    ),
    Rule(
        "outside-scheduler",
        re.compile(r"\bmpirun\b|\bmpiexec\b"),
        "mpirun starts processes outside the scheduler, which can place another job on the same GPUs meanwhile"
        " (and pam_slurm_adopt refuses its ssh): run tests by srun inside a maintenance reservation",
        never=True,
    ),
    Rule(
        "in-place-rewrite",
        re.compile(r"\bsed\s+(?:-[a-zA-Z]+\s+)*-[a-zA-Z]*i|\bperl\s+-[a-zA-Z]*i|\btruncate\s|torch-checkpoint-shrink"),
        "a rewrite in place leaves a truncated file when it is interrupted, and may hit a file a job is using:"
        " work on a copy made in an earlier step (cp -a X X.new), check it, then swap with mv",
        before=(re.compile(r"\bcp\s+-[a-zA-Z]*a|\brsync\s+-[a-zA-Z]*a"),),
    ),
    Rule(
        "unpinned-pip",
        re.compile(r"\bpip3?\s+install\b(?=[^\n]*(?:--upgrade\b|\s-U\b|--force-reinstall\b))(?![^\n]*==)"),
        "pip install --upgrade or --force-reinstall without a pinned version (pkg==X.Y.Z) replaces the newest"
        " release and its dependencies in the job's environment: pin it, in a new venv or image",
        never=True,
    ),
    Rule(
        "dmesg-sudo",
        re.compile(r"(?<!sudo )(?<!sudo -n )\bdmesg\b(?=\s*(?:-|\||;|&|'|\"|$))"),
        "dmesg is restricted to root on most distributions (kernel.dmesg_restrict=1): use sudo dmesg",
        never=True,
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
        "debug-profile",
        re.compile(r"kubectl\s+debug\b(?![^\n]*--profile[= ]sysadmin)(?=[^\n]*chroot\s+/host)"),
        "kubectl debug's default pod is not privileged, so chroot /host fails: add --profile=sysadmin",
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
                if not rule.command.search(said) or (rule.unless is not None and rule.unless.search(said)):
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
