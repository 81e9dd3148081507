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
from bot.library.safety import assumes_problems, safety_problems
from bot.model.case import PLACEHOLDERS, RUNBOOK_STAGES, SEVERITIES, Case, Localized

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
            found.extend(_applies_problems(case, number, path))
        if case.runbook and all(step.applies_when is not None for step in case.runbook):
            warn("runbook", "every step has applies_when: a paste that fits none of them gets no step to take")
    if case.severity not in SEVERITIES:
        shown = ", ".join(SEVERITIES)
        warn("severity", f"{case.severity!r} is not on the scale ({shown}): see the case library docs")
    if case.gist is None or len(case.gist.langs()) < 2:
        warn("gist", "no one-line cause in both languages (gist): the first reply's 'Why' falls back to the summary")
    return found


def _applies_problems(case: Case, number: int, path: str) -> list[Problem]:
    """An ``applies_when`` that can never hold: a signature index the case does not have, a code that is
    not an Xid (1-999), or neither list given (errors)."""
    when = case.runbook[number].applies_when
    if when is None:
        return []
    where = f"runbook[{number}].applies_when"
    found = [
        Problem(path, f"{where}.signatures", f"signature {index} does not exist (the case has {len(case.signatures)})")
        for index in when.signatures
        if not 0 <= index < len(case.signatures)
    ]
    found += [
        Problem(path, f"{where}.xid", f"{code} is not an Xid code (1-999)") for code in when.xid if not 0 < code < 1000
    ]
    if not when.signatures and not when.xid:
        found.append(Problem(path, where, "names no Xid code and no signature: the step would never be shown first"))
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


# A Korean particle or light verb set apart from the Latin word, number or code before it (`GPU 가`,
# `drain 한다`, `100% 인데`): Korean orthography attaches it (`GPU가`, `drain한다`, `100%인데`).
# (Search is not affected: it reads runs of two or more Hangul syllables.) tools/attach_particles.py fixes it.
DETACHED_PARTICLE = re.compile(
    r"(?<=[A-Za-z0-9%)\]}>`'\"]) ((?:가|이|를|을|은|는|의|에|에서|에게|로|으로|와|과|도|만|까지|부터|보다|처럼"
    r"|이나|나|라고|이라고|이다|인데|이며|이고|이면|이라|이라는|라는|이었다|였다|이지만|이므로|이어서|이어야|여야"
    r"|이든|든|마다|조차|밖에|한다|하고|하면|해서|했다|된다|되고|되면|되어|되지|할|하는|해야|하지|하여|하며|된"
    r"|되는|했고|해|하기|하려면|했는데|하다|하던|해도|되던|돼|됐다)(?:는|도|만|요)?)(?=[\s.,)!?:;]|$)"
)


def glossary_problems(case: Case, path: str) -> list[Problem]:
    found: list[Problem] = []
    for where, text in _korean(case):
        detached = DETACHED_PARTICLE.search(text)
        if detached:
            shown = text[max(detached.start() - 12, 0) : detached.end()]
            message = f"a particle set apart ({shown!r}): attach it as Korean orthography does"
            message += " (tools/attach_particles.py)"
            found.append(Problem(path, where, message, "warning"))
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
