"""Steps that fit the paste (issue 33, item 3): a runbook step with ``applies_when`` is on the first screen
only when the paste names one of its Xid codes or hits one of its signatures; the Details view keeps every
step. ``cases validate`` refuses an ``applies_when`` that can never hold, and warns on a severity off the
scale."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import NOW, copy_bundled_cases

from bot.app.service import IncidentService
from bot.library.case_store import load_library
from bot.library.review import runbook_problems
from bot.model.case import Case
from bot.ops.clock import fixed
from bot.replies.render import case_reply, match_reply
from bot.storage.memory import MemoryStorage

XID_79 = "NVRM: Xid (PCI:0000:4e:00): 79, pid=2112, name=python, GPU has fallen off the bus."
XID_119 = "NVRM: Xid (PCI:0000:4e:00): 119, pid=2112, name=python, Timeout waiting for RPC from GSP0!"


def _step(stage: str, en: str, when: dict[str, Any] | None = None) -> dict[str, Any]:
    made: dict[str, Any] = {"stage": stage, "text": {"en": en, "ko": f"{en} (ko)"}}
    if when is not None:
        made["applies_when"] = when
    return made


def _case(tmp_path: Path) -> Path:
    """PUB-0999: two decisive signatures (Xid 79, Xid 119) and steps of which two fit only some pastes."""
    cases = copy_bundled_cases(tmp_path, "PUB-0035")
    data = json.loads((cases / "PUB-0035.json").read_text(encoding="utf-8"))
    data["id"] = "PUB-0999"
    data["signatures"] = [
        {"kind": "exact", "pattern": "GPU has fallen off the bus", "strength": "decisive", "examples": [XID_79]},
        {"kind": "exact", "pattern": "Timeout waiting for RPC from GSP", "strength": "decisive", "examples": [XID_119]},
    ]
    data["runbook"] = [
        _step("confirm", "Read the node's Xid lines."),
        _step("confirm", "Check the GSP firmware mode.", {"xid": [119, 120]}),
        _step("contain", "Collect the bug report.", {"signatures": [0]}),
        _step("contain", "Drain the node."),
        _step("verify", "Run the health check."),
    ]
    (cases / "PUB-0999.json").write_text(json.dumps(data), encoding="utf-8")
    return cases


def _first_screen(service: IncidentService, paste: str) -> str:
    result = service.match(paste)
    assert result.best is not None and result.best.case_id == "PUB-0999"
    return match_reply(result, service.library.cases, ("en",), explicit=True).plain  # type: ignore[arg-type]


def test_the_paste_names_its_xid_codes_in_order(tmp_path: Path) -> None:
    service = IncidentService(load_library(_case(tmp_path)), MemoryStorage(), now=fixed(NOW))
    result = service.match(f"{XID_119}\nkernel: Xid 154, something\n{XID_79}\n{XID_119}")
    assert result.xids == [119, 154, 79]


def test_only_the_steps_that_fit_the_paste_are_on_the_first_screen(tmp_path: Path) -> None:
    service = IncidentService(load_library(_case(tmp_path)), MemoryStorage(), now=fixed(NOW))
    on_79 = _first_screen(service, XID_79)
    assert "Read the node's Xid lines." in on_79 and "Collect the bug report." in on_79
    assert "GSP firmware" not in on_79  # an Xid 119 step on an Xid 79 paste
    on_119 = _first_screen(service, XID_119)
    assert "Check the GSP firmware mode." in on_119 and "Collect the bug report." not in on_119


def test_the_details_view_keeps_every_step(tmp_path: Path) -> None:
    library = load_library(_case(tmp_path))
    case = library.cases["PUB-0999"]
    details = case_reply(case, ("en",)).plain
    assert all(step.text.en in details for step in case.runbook if step.text.en)


def _problems(runbook: list[dict[str, Any]], severity: str = "node") -> list[tuple[str, str, str]]:
    base = json.loads((Path(__file__).resolve().parent.parent / "cases" / "PUB-0035.json").read_text("utf-8"))
    case = Case.model_validate({**base, "runbook": runbook, "severity": severity})
    return [(p.field, p.severity, p.message) for p in runbook_problems(case, "x.json")]


def test_an_applies_when_that_can_never_hold_is_an_error() -> None:
    steps = [
        _step("confirm", "a"),
        _step("confirm", "b", {"signatures": [99]}),
        _step("contain", "c", {"xid": [0, 1000]}),
        _step("verify", "d", {}),
    ]
    found = {(field, severity) for field, severity, _ in _problems(steps)}
    assert ("runbook[1].applies_when.signatures", "error") in found
    assert ("runbook[2].applies_when.xid", "error") in found
    assert ("runbook[3].applies_when", "error") in found
    fine = [_step("confirm", "a"), _step("confirm", "b", {"xid": [79], "signatures": [0]}), _step("verify", "d")]
    assert [p for p in _problems(fine) if p[0].startswith("runbook")] == []


def test_a_runbook_of_only_conditional_steps_and_a_severity_off_the_scale_are_warned() -> None:
    only = [_step("confirm", "a", {"xid": [79]}), _step("verify", "b", {"xid": [79]})]
    assert ("runbook", "warning") in {(f, s) for f, s, _ in _problems(only)}
    for severity, warned in (("sev1", True), ("node", False), ("job", False), ("fleet", False), ("unknown", False)):
        fields = {(f, s) for f, s, _ in _problems([_step("confirm", "a")], severity)}
        assert (("severity", "warning") in fields) is warned
