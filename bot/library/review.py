"""Checks ``incident-bot cases validate`` runs beyond loading (they are slower, and advice for authors):

- every command template (a runbook step's ``command``, a remediation step's ``template``) names only the
  placeholders a paste can fill, and, filled with sample values, parses as shell (``bash -n``);
- every case has a bilingual runbook in stage order (confirm ... resume, with a confirm and a verify step) and a
  one-line ``gist``; commands that disturb a node follow the safety rules in ``SAFETY`` (a GPU reset only after
  a drain and a check that the node's jobs have left, ...);
- every step with a command says in ``assumes``, in both languages, what the command needs to be right
  (versions, where it runs, the node's state); what a rule's ``says`` asks for (``scontrol reboot`` waits for
  the node to go idle) is said in each language;
- Korean text that this project writes uses the glossary's terms (``bot/library/glossary.tsv``): the runbook
  and the signatures' ``note_ko`` of every case, and all text of the cases the incident library does not own
  (``IL-`` cases are the library's: their text is refreshed by ``sync``, and disagreements go in
  ``review_notes`` instead).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources

from bot.library.case_store import CaseLibrary, Problem
from bot.model.case import PLACEHOLDERS, RUNBOOK_STAGES, Case, Lang, Localized

SAMPLE_VALUES = {"node": "gpu-a17", "pci": "0000:3b:00.0", "gpu": "3", "rank": "5", "job": "682842"}
LIBRARY_OWNED = ("IL-",)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]{0,40})\}")


@dataclass(frozen=True, slots=True)
class Term:
    english: str
    korean: str
    avoid: tuple[str, ...]
    # Phrases in which an avoided variant is right because it means something else (데이터 손실 is data loss,
    # not the training loss): a variant inside one of them is not reported.
    fine_in: tuple[str, ...] = ()


def _cells(cell: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in cell.split(",") if v.strip())


@cache
def glossary() -> tuple[Term, ...]:
    """The rows of ``glossary.tsv``: english, korean, variants to avoid, and phrases where a variant is fine."""
    text = resources.files("bot.library").joinpath("glossary.tsv").read_text(encoding="utf-8")
    terms = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        english, korean, *rest = line.split("\t")
        avoid = _cells(rest[0]) if rest else ()
        fine_in = _cells(rest[1]) if len(rest) > 1 else ()
        terms.append(Term(english.strip(), korean.strip(), avoid, fine_in))
    return tuple(terms)


def commands(case: Case) -> Iterator[tuple[str, str]]:
    """(field path, template) of every command a case shows."""
    for number, step in enumerate(case.runbook):
        if step.command:
            yield f"runbook[{number}].command", step.command
    for number, remediation in enumerate(case.remediation):
        if remediation.template:
            yield f"remediation[{number}].template", remediation.template


def fill_sample(template: str) -> str:
    return _PLACEHOLDER.sub(lambda found: SAMPLE_VALUES.get(found.group(1), found.group(0)), template)


def command_problems(case: Case, path: str) -> list[Problem]:
    found: list[Problem] = []
    bash = shutil.which("bash")
    for where, template in commands(case):
        unknown = sorted({name for name in _PLACEHOLDER.findall(template) if name not in PLACEHOLDERS})
        if unknown:
            known = ", ".join("{" + name + "}" for name in PLACEHOLDERS)
            found.append(Problem(path, where, f"unknown placeholder {', '.join(unknown)} (known: {known})"))
            continue
        if bash is None:
            continue
        checked = subprocess.run(  # noqa: S603 - bash -n only parses, never runs the command
            [bash, "-n", "-c", fill_sample(template)], capture_output=True, text=True, timeout=10, check=False
        )
        if checked.returncode != 0:
            reason = (checked.stderr.strip().splitlines() or ["does not parse"])[-1]
            found.append(Problem(path, where, f"does not parse as shell with sample values: {reason[:200]}"))
    return found


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
        re.compile(r"\brm\s+-[a-zA-Z]*r[a-zA-Z]*f|\brm\s+-[a-zA-Z]*f[a-zA-Z]*r"),
        "no rm -rf in a runbook",
        never=True,
    ),
)


def safety_problems(case: Case, path: str) -> list[Problem]:
    """Commands that break a rule of ``SAFETY`` (errors)."""
    found: list[Problem] = []
    earlier: list[str] = []
    for number, step in enumerate(case.runbook):
        command = step.command or ""
        for rule in SAFETY if command else ():
            if not rule.command.search(command):
                continue
            missing = [p for p in rule.before if not any(p.search(done) for done in earlier)]
            if rule.never or missing:
                found.append(Problem(path, f"runbook[{number}].command", f"{rule.name}: {rule.why}"))
            elif rule.assumes and (step.assumes is None or len(step.assumes.langs()) < 2):
                found.append(Problem(path, f"runbook[{number}].assumes", f"{rule.name}: {rule.why}"))
        earlier.append(command)
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


def runbook_problems(case: Case, path: str) -> list[Problem]:
    """A missing or incomplete runbook or gist (warnings: ``cases validate --strict`` fails on them)."""
    found: list[Problem] = []

    def warn(where: str, message: str) -> None:
        found.append(Problem(path, where, message, "warning"))

    if not case.runbook:
        warn("runbook", "no runbook: add the steps for the next time (confirm, contain, fix, verify, resume)")
    else:
        stages = [RUNBOOK_STAGES.index(step.stage) for step in case.runbook]
        if stages != sorted(stages):
            warn("runbook", "steps out of stage order (confirm, contain, fix, verify, resume)")
        for needed in ("confirm", "verify"):
            if all(step.stage != needed for step in case.runbook):
                warn("runbook", f"no {needed} step")
        for number, step in enumerate(case.runbook):
            if len(step.text.langs()) < 2:
                warn(f"runbook[{number}].text", "a step needs both English and Korean")
    if case.gist is None or len(case.gist.langs()) < 2:
        warn("gist", "no one-line cause in both languages (gist): the first reply's 'Why' falls back to the summary")
    return found


def _korean(case: Case) -> Iterator[tuple[str, str]]:
    """(field path, Korean text) this project writes for ``case``."""
    for number, step in enumerate(case.runbook):
        yield f"runbook[{number}].text.ko", step.text.ko or ""
        if step.assumes is not None:
            yield f"runbook[{number}].assumes.ko", step.assumes.ko or ""
    for number, signature in enumerate(case.signatures):
        if signature.note_ko:
            yield f"signatures[{number}].note_ko", signature.note_ko
    if case.id.startswith(LIBRARY_OWNED):
        return
    for name in ("title", "summary", "trigger", "detection", "symptoms_text", "lessons"):
        text: Localized = getattr(case, name)
        yield f"{name}.ko", text.ko or ""
    for number, done in enumerate(case.remediation):
        yield f"remediation[{number}].text.ko", done.text.ko or ""


@cache
def _word(variant: str) -> re.Pattern[str]:
    """``variant`` where it starts a word (not inside one: 크로스 is not 로스)."""
    return re.compile(r"(?<![\uac00-\ud7a3A-Za-z0-9])" + re.escape(variant))


def _slips(text: str, variant: str, fine_in: tuple[str, ...]) -> bool:
    """Whether ``variant`` starts a word of ``text`` outside every phrase of ``fine_in``."""
    fine = [(m.start(), m.end()) for phrase in fine_in for m in re.finditer(re.escape(phrase), text)]
    return any(
        not any(start <= found.start() and found.end() <= end for start, end in fine)
        for found in _word(variant).finditer(text)
    )


def glossary_problems(case: Case, path: str) -> list[Problem]:
    found: list[Problem] = []
    for where, text in _korean(case):
        for term in glossary():
            for variant in term.avoid:
                if _slips(text, variant, term.fine_in):
                    message = f"uses {variant!r}: the glossary's Korean for {term.english!r} is {term.korean!r}"
                    found.append(Problem(path, where, message, "warning"))
    return found


def review_library(library: CaseLibrary) -> list[Problem]:
    """The extra problems of every loaded case, in file order."""
    found: list[Problem] = []
    for case_id, path in sorted(library.paths.items(), key=lambda item: item[1]):
        case = library.cases[case_id]
        found += command_problems(case, path)
        found += safety_problems(case, path)
        found += runbook_problems(case, path)
        found += assumes_problems(case, path)
        found += glossary_problems(case, path)
    return found
