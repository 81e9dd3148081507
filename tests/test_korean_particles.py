"""Korean particles attach to a preceding Latin word, number or code, as Korean orthography does (the
runbook review's Korean table): ``cases validate`` warns on one set apart, and tools/attach_particles.py
fixes them in place without touching anything else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import copy_bundled_cases

from bot.library.merge import dump_case
from bot.library.review import DETACHED_PARTICLE, glossary_problems
from bot.model.case import Case

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("text", "fixed"),
    [
        ("GPU 가 버스에서 떨어졌다.", "GPU가 버스에서 떨어졌다."),
        ("노드를 drain 한다.", "노드를 drain한다."),
        ("사용률이 100% 인데 멈췄다", "사용률이 100%인데 멈췄다"),
        ("`nvidia-smi -q` 로 확인한다", "`nvidia-smi -q`로 확인한다"),
        ("rank 0 에서도 실패했다", "rank 0에서도 실패했다"),
        ("Slurm 이 노드를 내렸다, NCCL 과 CUDA 의 버전", "Slurm이 노드를 내렸다, NCCL과 CUDA의 버전"),
    ],
)
def test_a_particle_set_apart_is_found_and_attached(text: str, fixed: str) -> None:
    assert DETACHED_PARTICLE.search(text)
    assert DETACHED_PARTICLE.sub(r"\1", text) == fixed


@pytest.mark.parametrize(
    "text",
    ["GPU 한 개가 멈췄다", "GPU가 멈췄다", "노드 이름을 적는다", "Xid 79 오류", "drain 상태", "CUDA 할당자"],
)
def test_what_is_not_a_detached_particle_is_left_alone(text: str) -> None:
    assert DETACHED_PARTICLE.sub(r"\1", text) == text


def test_validate_warns_on_the_field_that_sets_a_particle_apart() -> None:
    base = json.loads((ROOT / "cases" / "PUB-0035.json").read_text(encoding="utf-8"))
    runbook = [{"stage": "confirm", "text": {"en": "Check the GPU.", "ko": "GPU 를 확인한다."}}]
    case = Case.model_validate({**base, "runbook": runbook})
    found = [p for p in glossary_problems(case, "x.json") if "particle set apart" in p.message]
    assert ("runbook[0].text.ko", "warning") in [(p.field, p.severity) for p in found]
    runbook[0]["text"]["ko"] = "GPU를 확인한다."
    case = Case.model_validate({**base, "runbook": runbook})
    assert not [p for p in glossary_problems(case, "x.json") if p.field.startswith("runbook")]


def test_the_tool_attaches_only_korean_particles_and_keeps_the_file_format(tmp_path: Path) -> None:
    cases = copy_bundled_cases(tmp_path, "PUB-0035")
    path = cases / "PUB-0035.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["summary"] = {"en": "The GPU 가 stays English.", "ko": "GPU 가 멈추고 NCCL 이 기다린다."}
    path.write_bytes(dump_case(data))
    run = [sys.executable, str(ROOT / "tools" / "attach_particles.py"), str(cases)]
    first = subprocess.run(run, capture_output=True, text=True, check=True, cwd=ROOT)
    assert first.stdout.startswith("PUB-0035.json: ")
    after = json.loads(path.read_text(encoding="utf-8"))
    assert after["summary"] == {"en": "The GPU 가 stays English.", "ko": "GPU가 멈추고 NCCL이 기다린다."}
    assert path.read_bytes() == dump_case(after)
    again = subprocess.run(run, capture_output=True, text=True, check=True, cwd=ROOT)
    assert again.stdout == ""  # nothing left to attach
