"""The SAFETY rules of ``bot.library.review`` as a table: every rule has a planted violation, a planted
compliant runbook and, when it needs earlier steps, a planted wrong order and one runbook per missing earlier
step. A rule added to ``SAFETY`` without its examples here fails ``test_every_rule_has_examples``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.library.case_store import Problem
from bot.library.safety import SAFETY, Rule, assumes_problems, safety_problems
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
EMPTY = step('[ "$(sinfo -h -n {node} -o %T)" = drained ] && echo empty', "contain")


@dataclass(frozen=True)
class Planted:
    """``violation`` breaks the rule; ``compliant`` is the same command made right; ``wrong_order`` is the
    compliant steps in an order the rule forbids (only for rules with ``before``)."""

    violation: list[dict[str, Any]]
    compliant: list[dict[str, Any]]
    wrong_order: list[dict[str, Any]] | None = None


RESET = step("ssh {node} nvidia-smi -r -i {pci}")
FABRIC = step("ssh {node} sudo systemctl restart nvidia-fabricmanager")
RUNTIME = step("ssh {node} 'sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker'")
DIAG = step("ssh {node} dcgmi diag -r 3")
COPY = step("cp -a /ckpt/global_step900 /ckpt/global_step900.shrink", "contain")
SHRINK = step("python torch-checkpoint-shrink.py --checkpoint_dir /ckpt/global_step900.shrink")
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
    "reset-aim": Planted(
        violation=[step("ssh {node} sudo nvidia-smi -r -i {gpu}")],
        compliant=[step("ssh {node} sudo nvidia-smi -r -i {pci}")],
    ),
    "fail-open": Planted(
        violation=[step("squeue -w {node} -h | grep . || ssh {node} dcgmi diag -r 3")],
        compliant=[step("squeue -w {node} -h | grep . || echo 'no job seen'")],
    ),
    "runtime-restart": Planted(
        violation=[RUNTIME],
        compliant=[DRAIN, EMPTY, RUNTIME],
        wrong_order=[DRAIN, RUNTIME, EMPTY],
    ),
    "gpu-test": Planted(
        violation=[DIAG],
        compliant=[DRAIN, EMPTY, DIAG],
        wrong_order=[DIAG, DRAIN, EMPTY],
    ),
    "outside-scheduler": Planted(
        violation=[step("mpirun -np 16 -H {node}:8,gpu-b02:8 all_reduce_perf -b 8M -e 1G -f 2 -g 1")],
        compliant=[step("srun --reservation=nccltest -w {node},gpu-b02 -N2 --ntasks-per-node=8 all_reduce_perf -b 8M")],
    ),
    "in-place-rewrite": Planted(
        violation=[SHRINK],
        compliant=[COPY, SHRINK],
        wrong_order=[SHRINK, COPY],
    ),
    "unpinned-pip": Planted(
        violation=[step("pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu128")],
        compliant=[step("pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu128")],
    ),
    "dmesg-sudo": Planted(
        violation=[step("ssh {node} \"dmesg -T | grep 'NVRM: Xid' | tail -n 5\"")],
        compliant=[step("ssh {node} \"sudo dmesg -T | grep 'NVRM: Xid' | tail -n 5\"")],
    ),
    "debug-profile": Planted(
        violation=[step("kubectl debug node/{node} -it --image=ubuntu -- chroot /host nvidia-smi -q")],
        compliant=[step("kubectl debug node/{node} -it --profile=sysadmin --image=ubuntu -- chroot /host nvidia-smi")],
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
def test_the_violation_is_an_error_naming_the_file_and_the_step(rule: Rule) -> None:
    violation = EXAMPLES[rule.name].violation
    field = "command" if rule.never or rule.before else "assumes"  # an assumes-only rule: its assumes is wrong
    expected = Problem("x.json", f"runbook[{len(violation)}].{field}", f"{rule.name}: {rule.why}", "error")
    assert expected in safety_problems(case_with(violation), "x.json")


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
        expected = Problem("x.json", f"runbook[{len(planted)}].assumes", f"{rule.name}: {rule.why}", "error")
        assert expected in safety_problems(case_with(planted), "x.json"), assumes


@pytest.mark.parametrize(
    "command",
    ["rm -rf /data/ckpt", "rm -fr /data/ckpt", "rm -Rf /data/ckpt", "rm -r -f /data/ckpt", "rm --recursive /data"],
)
def test_every_spelling_of_a_recursive_rm_is_refused(command: str) -> None:
    (rule,) = [r for r in SAFETY if r.name == "rm-rf"]
    assert errors_of(rule, [step(f"ssh {{node}} {command}")]), command


REBOOT = "scontrol reboot ASAP nextstate=resume {node}"
IDLE = {
    "en": "root on the controller; the reboot waits until the node is idle",
    "ko": "노드가 유휴 상태가 되면 재부팅한다",
}
NEEDS_BOTH = (
    "a step with a command needs `assumes` in English and Korean: what the command needs to be right"
    " (tool and version where it matters, where it runs, the node's state: drained, jobs left, idle)"
)


def warnings_of(runbook: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """``assumes_problems`` of a runbook after the base case's one confirm step (index 0)."""
    return [(p.path, p.field, p.severity, p.message) for p in assumes_problems(case_with(runbook), "x.json")]


@pytest.mark.parametrize("assumes", [None, {"en": BOTH["en"]}, {"ko": BOTH["ko"]}], ids=["none", "en", "ko"])
def test_a_command_without_assumes_in_both_languages_is_a_warning_naming_the_step(
    assumes: dict[str, str] | None,
) -> None:
    got = warnings_of([step("ssh {node} nvidia-smi -q -d ECC", "confirm", assumes)])
    assert got == [("x.json", "runbook[1].assumes", "warning", NEEDS_BOTH)]


def test_a_step_without_a_command_needs_no_assumes_and_every_step_is_checked() -> None:
    bare = {"stage": "contain", "text": {"en": "Tell the job's owner.", "ko": "작업 소유자에게 알린다."}}
    assert warnings_of([bare, step("squeue -w {node} -h")]) == []
    bare_first = [bare, step("ssh {node} dmesg -T", "confirm", None), step("ssh {node} nvidia-smi -q", "confirm", None)]
    assert [field for _, field, _, _ in warnings_of(bare_first)] == ["runbook[2].assumes", "runbook[3].assumes"]


@pytest.mark.parametrize(
    ("assumes", "missing"),
    [
        ({"en": BOTH["en"], "ko": IDLE["ko"]}, ["en"]),
        ({"en": IDLE["en"], "ko": BOTH["ko"]}, ["ko"]),
        ({"en": BOTH["en"], "ko": BOTH["ko"]}, ["en", "ko"]),
        (IDLE, []),
    ],
    ids=["en-silent", "ko-silent", "both-silent", "both-say-it"],
)
def test_what_a_rule_says_assumes_must_mention_is_checked_in_each_language(
    assumes: dict[str, str], missing: list[str]
) -> None:
    (rule,) = [r for r in SAFETY if r.name == "reboot"]
    said = dict(rule.says)
    expected = [
        (
            "x.json",
            f"runbook[2].assumes.{lang}",
            "warning",
            f"reboot: {rule.why} (assumes.{lang} does not say {said[lang].pattern!r})",
        )
        for lang in missing
    ]
    assert warnings_of([step("sinfo -h -n {node} -o %T"), step(REBOOT, assumes=assumes)]) == expected


def test_only_the_rule_whose_command_matches_asks_for_its_words() -> None:
    """A step that is not a reboot is not asked to mention idle, whatever it assumes."""
    assert warnings_of([step("ssh {node} nvidia-smi -q -d ECC", "confirm")]) == []


@pytest.mark.parametrize("rule", [r for r in RULES if r.values[0].never], ids=lambda r: r.name)
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_never_rule_holds_for_a_steps_text_in_either_language(rule: Rule, lang: str) -> None:
    """A draft's runbook is text only: the command a reader would copy from it is held to the same rules."""
    [bad] = EXAMPLES[rule.name].violation
    text = {"en": "Run it.", "ko": "실행한다.", lang: f"Run `{bad['command']}` on the node."}
    step_text = {"stage": "fix", "text": text}
    expected = Problem("x.json", f"runbook[1].text.{lang}", f"{rule.name}: {rule.why}", "error")
    assert expected in safety_problems(case_with([step_text]), "x.json")
    calm = {"stage": "fix", "text": {"en": "Tell the job's owner.", "ko": "작업 소유자에게 알린다."}}
    assert [p for p in safety_problems(case_with([calm]), "x.json") if p.message.startswith(rule.name)] == []


def test_an_earlier_steps_text_satisfies_a_later_command_and_assumes_is_the_commands_alone() -> None:
    drain_in_text = {
        "stage": "contain",
        "text": {"en": "Drain it: scontrol update nodename={node} state=drain", "ko": "drain"},
    }
    jobs_left = 'Check: [ "$(sinfo -h -n {node} -o %T)" = drained ]'
    jobs_in_text = {"stage": "contain", "text": {"en": jobs_left, "ko": "확인"}}
    assert errors_of(SAFETY[0], [drain_in_text, jobs_in_text, RESET]) == []
    reboot_text = {"stage": "fix", "text": {"en": "Then scontrol reboot ASAP nextstate=resume {node}", "ko": "재부팅"}}
    assert safety_problems(case_with([reboot_text]), "x.json") == []  # no command: nothing to assume


@pytest.mark.parametrize(
    "command",
    [
        "squeue -w {node} -h | grep . || ssh {node} sudo nvidia-smi -r -i {pci}",
        "squeue -w {node} -h | grep -q . || sudo systemctl restart docker",
        "pgrep -f train.py || scontrol reboot ASAP nextstate=resume {node}",
        'test -z "$(squeue -h -w {node})" || true; squeue -h -w {node} || kubectl drain {node}',
    ],
)
def test_every_fail_open_fallback_to_a_disturbing_command_is_refused(command: str) -> None:
    (rule,) = [r for r in SAFETY if r.name == "fail-open"]
    assert errors_of(rule, [step(command)]), command


@pytest.mark.parametrize(
    ("command", "refused"),
    [
        ("ssh {node} nvidia-smi -r", True),  # without -i: every GPU
        ("ssh {node} nvidia-smi --gpu-reset -i {gpu}", True),
        ("ssh {node} nvidia-smi -i {rank} -r", True),
        ("ssh {node} sudo nvidia-smi -r -i 0000:4e:00.0", False),
        ("ssh {node} sudo nvidia-smi --gpu-reset --id={pci}", False),
        ("ssh {node} nvidia-smi -q -i {gpu}", False),  # a query by ordinal resets nothing
        ("ssh {node} 'timeout 60 nvidia-smi -q; dcgmi diag -r 3'", False),  # dcgmi's -r is not nvidia-smi's
    ],
)
def test_a_reset_is_aimed_by_bus_id(command: str, refused: bool) -> None:
    (rule,) = [r for r in SAFETY if r.name == "reset-aim"]
    assert bool(errors_of(rule, [step(command)])) is refused, command


@pytest.mark.parametrize(
    ("command", "refused"),
    [
        ("ssh {node} dcgmi diag -r 3", True),
        ("kubectl debug node/{node} -it --profile=sysadmin --image=ubuntu -- chroot /host dcgmi diag -r 3", True),
        ("ssh {node} gpu-burn 600", True),
        ("ssh {node} dcgmi diag -r 1", False),  # the quick deployment check stresses nothing
        ("srun -N 2 --ntasks-per-node=8 --gpus-per-node=8 all_reduce_perf -b 8M -e 1G -f 2 -g 1", False),
        ("NCCL_DEBUG=WARN srun -w {node} --exclusive -N1 dcgmi diag -r 3", False),
        ("srun --jobid={job} --overlap -w {node} dcgmi diag -r 3", True),  # inside someone's job
    ],
)
def test_a_test_outside_the_scheduler_needs_an_empty_drained_node(command: str, refused: bool) -> None:
    (rule,) = [r for r in SAFETY if r.name == "gpu-test"]
    assert bool(errors_of(rule, [step(command)])) is refused, command


@pytest.mark.parametrize(
    ("command", "refused"),
    [
        ("pip install --upgrade 'deepspeed>=0.5.10'", True),
        ("pip3 install -U torch", True),
        ("pip install --upgrade deepspeed==0.14.4", False),
        ("pip install deepspeed", False),  # no upgrade of what is there: a new environment's install
    ],
)
def test_an_upgrade_in_place_must_be_pinned(command: str, refused: bool) -> None:
    (rule,) = [r for r in SAFETY if r.name == "unpinned-pip"]
    assert bool(errors_of(rule, [step(command)])) is refused, command


@pytest.mark.parametrize(
    ("command", "refused"),
    [
        ("ssh {node} dmesg -T", True),
        ("ssh {node} 'dmesg | tail'", True),
        ("ssh {node} sudo dmesg -T", False),
        ("ssh {node} sudo journalctl -k -b", False),
    ],
)
def test_dmesg_runs_with_sudo(command: str, refused: bool) -> None:
    (rule,) = [r for r in SAFETY if r.name == "dmesg-sudo"]
    assert bool(errors_of(rule, [step(command)])) is refused, command


def test_a_prose_mention_of_dmesg_is_not_a_command() -> None:
    text = {"en": "Look for Xid lines in dmesg on the node.", "ko": "dmesg에서 Xid를 찾는다."}
    prose = {"stage": "confirm", "text": text}
    assert safety_problems(case_with([prose]), "x.json") == []
