"""The SAFETY rules of ``bot.library.review`` as a table: every rule has a planted violation, a planted
compliant runbook and, when it needs earlier steps, a planted wrong order and one runbook per missing earlier
step. A rule added to ``SAFETY`` without its examples here fails ``test_every_rule_has_examples``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.library.safety import SAFETY, Rule, safety_problems
from bot.model.case import Case

ROOT = Path(__file__).resolve().parent.parent
BASE = json.loads((ROOT / "cases" / "PUB-0009.json").read_text(encoding="utf-8"))
BOTH = {"en": "root on the node; the node is drained and empty", "ko": "노드의 root 권한. 노드는 drain 되어 비어 있다"}


def step(command: str, stage: str = "fix", assumes: dict[str, str] | None = BOTH) -> dict[str, Any]:
    made: dict[str, Any] = {"stage": stage, "text": {"en": "Do it.", "ko": "한다."}, "command": command}
    if assumes is not None:
        made["assumes"] = assumes
    return made


DRAIN = step("scontrol update nodename={node} state=drain reason=xid", "contain")
EMPTY = step("squeue -w {node} -h", "contain")


@dataclass(frozen=True)
class Planted:
    """``violation`` breaks the rule; ``compliant`` is the same command made right; ``wrong_order`` is the
    compliant steps in an order the rule forbids (only for rules with ``before``)."""

    violation: list[dict[str, Any]]
    compliant: list[dict[str, Any]]
    wrong_order: list[dict[str, Any]] | None = None


RESET = step("ssh {node} nvidia-smi -r -i {pci}")
FABRIC = step("ssh {node} sudo systemctl restart nvidia-fabricmanager")
EXAMPLES: dict[str, Planted] = {
    "gpu-reset": Planted(
        violation=[RESET],
        compliant=[DRAIN, EMPTY, RESET],
        wrong_order=[RESET, DRAIN, EMPTY],
    ),
    "fabric-manager": Planted(
        violation=[FABRIC],
        compliant=[DRAIN, EMPTY, FABRIC],
        wrong_order=[DRAIN, FABRIC, EMPTY],
    ),
    "reboot": Planted(
        violation=[step("scontrol reboot ASAP nextstate=resume {node}", assumes=None)],
        compliant=[step("scontrol reboot ASAP nextstate=resume {node}")],
    ),
    "nccl-async": Planted(
        violation=[step("export NCCL_ASYNC_ERROR_HANDLING=1")],
        compliant=[step("export TORCH_NCCL_ASYNC_ERROR_HANDLING=3")],
    ),
    "sbatch-per-node-output": Planted(
        violation=[step("echo '#SBATCH --output=%x-%j-%N.out' >> job.sbatch")],
        compliant=[step("srun --label --output=%x-%j-%N.out python train.py")],
    ),
    "srun-into-job": Planted(
        violation=[step("srun --jobid={job} -w {node} df -h /dev/shm")],
        compliant=[step("srun --jobid={job} --overlap -w {node} df -h /dev/shm")],
    ),
    "rm-rf": Planted(
        violation=[step("ssh {node} rm -rf /tmp/nccl-debug")],
        compliant=[step("ssh {node} rm -f /tmp/nccl-debug/core.1234")],
    ),
}


def case_with(runbook: list[dict[str, Any]]) -> Case:
    return Case.model_validate({**BASE, "runbook": [step("ssh {node} true", "confirm"), *runbook]})


def errors_of(rule: Rule, runbook: list[dict[str, Any]]) -> list[str]:
    return [p.message for p in safety_problems(case_with(runbook), "x.json") if p.message.startswith(f"{rule.name}:")]


RULES = [pytest.param(rule, id=rule.name) for rule in SAFETY]


def test_every_rule_has_examples() -> None:
    assert set(EXAMPLES) == {rule.name for rule in SAFETY}


@pytest.mark.parametrize("rule", RULES)
def test_the_violation_is_an_error(rule: Rule) -> None:
    problems = safety_problems(case_with(EXAMPLES[rule.name].violation), "x.json")
    assert any(p.message.startswith(f"{rule.name}:") and p.severity == "error" for p in problems), problems


@pytest.mark.parametrize("rule", RULES)
def test_the_compliant_runbook_passes(rule: Rule) -> None:
    assert errors_of(rule, EXAMPLES[rule.name].compliant) == []


@pytest.mark.parametrize("rule", RULES)
def test_the_steps_in_the_wrong_order_are_an_error(rule: Rule) -> None:
    planted = EXAMPLES[rule.name]
    assert (planted.wrong_order is not None) == bool(rule.before), "a rule with `before` needs a wrong order"
    if planted.wrong_order is not None:
        assert errors_of(rule, planted.wrong_order)


@pytest.mark.parametrize("rule", [r for r in RULES if r.values[0].before])
def test_each_earlier_step_is_needed(rule: Rule) -> None:
    """Leaving out the step that satisfies any one pattern of ``before`` is an error (the drain alone, or
    the jobs-left check alone, is not enough)."""
    compliant = EXAMPLES[rule.name].compliant
    for needed in rule.before:
        without = [s for s in compliant if not needed.search(s["command"])]
        assert len(without) < len(compliant), f"no compliant step satisfies {needed.pattern}"
        assert errors_of(rule, without), needed.pattern


@pytest.mark.parametrize("rule", [r for r in RULES if r.values[0].assumes])
def test_a_rule_that_needs_assumes_needs_both_languages(rule: Rule) -> None:
    compliant = EXAMPLES[rule.name].compliant
    last = compliant[-1]
    assert rule.command.search(last["command"])
    for assumes in (None, {"en": BOTH["en"]}, {"ko": BOTH["ko"]}):
        planted = [*compliant[:-1], step(last["command"], last["stage"], assumes)]
        assert errors_of(rule, planted), assumes


@pytest.mark.parametrize(
    "command",
    ["rm -rf /data/ckpt", "rm -fr /data/ckpt", "rm -Rf /data/ckpt", "rm -r -f /data/ckpt", "rm --recursive /data"],
)
def test_every_spelling_of_a_recursive_rm_is_refused(command: str) -> None:
    (rule,) = [r for r in SAFETY if r.name == "rm-rf"]
    assert errors_of(rule, [step(f"ssh {{node}} {command}")]), command
