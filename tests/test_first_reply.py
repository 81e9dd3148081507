"""The first reply an on-call engineer reads at 3 am: one screen, action first, commands safe and filled.

* For every fixture and real-corpus paste the first reply has at most 15 non-empty lines of visible text
  (section, context and header texts, split on newlines; buttons excluded) and at most 2,000 characters.
* When the paste names the node, the first command shown has it, shell-quoted.
* The evidence says what it matched in words, never as a regular expression; the other language sits in
  context blocks under the reader's.
* ``cases validate`` checks runbooks, command templates, command safety and the glossary; the bundled
  library passes ``--strict``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import NOW

from bench.quality import load_pastes, load_real
from bot.library.case_store import load_library
from bot.library.review import review_library
from bot.matching.matcher import Matcher
from bot.model.case import Case
from bot.model.results import Reply
from bot.replies.first import MAX_CHARS, MAX_LINES, fill_command
from bot.replies.render import case_reply, match_reply

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = load_library(ROOT / "cases")
MATCHER = Matcher(LIBRARY.cases, LIBRARY.signatures, sets=LIBRARY.sets)
PASTES = [*load_pastes(), *load_real("dev"), *load_real("test")]


def visible(reply: Reply) -> list[str]:
    """The non-empty lines of visible text: section, context and header texts (buttons excluded)."""
    texts: list[str] = []
    for block in reply.blocks:
        if block["type"] in {"section", "header"}:
            texts.append(block["text"]["text"])
            texts += [field["text"] for field in block.get("fields", [])]
        elif block["type"] == "context":
            texts += [element.get("text", "") for element in block["elements"]]
    return [line for text in texts for line in text.split("\n") if line.strip()]


def first_reply(text: bytes, langs: tuple[str, str] = ("en", "ko")) -> tuple[Reply, dict[str, str]]:
    result = MATCHER.match(text)
    fills = result.suspects.fills if result.suspects is not None else {}
    return match_reply(result, LIBRARY.cases, langs, explicit=True, fills=fills), fills  # type: ignore[arg-type]


@pytest.mark.parametrize("paste", PASTES, ids=lambda p: p.name)
def test_the_first_reply_fits_one_screen(paste: Any) -> None:
    for langs in (("en", "ko"), ("ko", "en")):
        reply, _ = first_reply(paste.text, langs)
        lines = visible(reply)
        assert len(lines) <= MAX_LINES, "\n".join(lines)
        assert sum(len(line) for line in lines) <= MAX_CHARS


def test_most_replies_show_what_to_do_first() -> None:
    shown = [first_reply(p.text)[0] for p in PASTES if MATCHER.match(p.text).reply]
    with_steps = [r for r in shown if "Do now" in r.plain]
    assert len(shown) >= 290 and len(with_steps) == len(shown)
    assert all("\nWhy: " in r.plain for r in shown)  # and the cause in one line, always


def test_the_why_stays_when_a_node_failed_before() -> None:
    """The repeat-node warnings take room; a step goes before the one-line cause does."""
    from bot.model.results import NodeEvent

    paste = b"gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE (0x1)\n"
    result = MATCHER.match(paste)
    assert result.best is not None
    earlier = [NodeEvent("gpu-a17", "IL-0427", "gpu-memory-ecc", True, "C1", f"{i}.1", NOW) for i in range(3)]
    history = {"gpu-a17": earlier, "gpu-a17.other": earlier}
    fills = result.suspects.fills if result.suspects else {}
    for langs in (("en", "ko"), ("ko", "en")):
        reply = match_reply(result, LIBRARY.cases, langs, explicit=True, fills=fills, history=history)  # type: ignore[arg-type]
        assert "Why: " in reply.plain or "원인: " in reply.plain
        assert len(visible(reply)) <= MAX_LINES


def test_the_node_a_paste_names_is_filled_in_the_first_command() -> None:
    checked = 0
    for paste in PASTES:
        reply, fills = first_reply(paste.text)
        node = fills.get("node")
        commands = [line.strip()[2:] for line in reply.plain.splitlines() if line.strip().startswith("$ ")]
        case = LIBRARY.cases[reply.case_ids[0]] if reply.case_ids else None
        uses_node = case is not None and any("{node}" in (step.command or "") for step in case.runbook)
        if not node or not commands or not uses_node or "Do now" not in reply.plain:
            continue
        checked += 1
        first_host = node.split(",")[0]
        assert first_host in commands[0], (paste.name, node, commands)
        for command in commands:  # several failing hosts: a list only where Slurm takes one
            if node != first_host and command.startswith(("ssh ", "kubectl ")):
                assert node not in command, (paste.name, command)
        assert all("{node}" not in c for c in commands), (paste.name, commands)
    assert checked >= 20


def test_a_two_line_ecc_paste_gets_the_verdict_the_line_and_a_filled_drain_first() -> None:
    paste = (
        "Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE (0x1)\n"
        "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    )
    reply, fills = first_reply(paste.encode())
    lines = visible(reply)
    assert fills["node"] == "gpu-a17"
    # Line 1 names the failure in words, then the case and how sure; the title comes after, in small type.
    assert lines[0].startswith("🔴 *Xid 48: uncorrectable double-bit ECC error")
    assert "· IL-0414 — _exact match_" in lines[0]
    assert lines[2].startswith("> Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid")  # the line, once
    assert lines[3].startswith("_line 1_")  # what it means is already line 1
    assert not any("\\(" in line or "[0-9" in line for line in lines)  # never a regular expression
    assert any("Failed on gpu-a17" in line for line in lines)
    do_now = lines.index(next(line for line in lines if line.startswith("*Do now")))
    assert "gpu-a17" in "\n".join(lines[do_now : do_now + 7])
    assert len(lines) <= MAX_LINES
    # The reader's language first, the other under it in a context block.
    kinds = [block["type"] for block in reply.blocks]
    assert kinds[:2] == ["section", "context"]
    korean = reply.blocks[1]["elements"][0]["text"]
    assert any("\uac00" <= ch <= "\ud7a3" for ch in korean)


def test_a_korean_reader_gets_korean_first_with_the_english_under_it() -> None:
    """Korean first: the verdict, what the line matched (the signature's Korean note), the steps and the
    notes on what was skipped are Korean; the English sits in context blocks under them."""
    paste = ("INFO step ok\n" * 400_000 + "RuntimeError: CUDA error: uncorrectable ECC error encountered\n").encode()
    result = MATCHER.match(paste)
    assert result.best is not None and result.truncated
    case = LIBRARY.cases[result.best.case_id]
    note = result.best.evidence[0].note
    signatures = [
        s.model_copy(update={"note_ko": "PyTorch가 GPU 메모리의 정정 불가능한 ECC 오류를 알리는 메시지"})
        if " ".join((s.note or "").split()) == note
        else s
        for s in case.signatures
    ]
    cases = {**LIBRARY.cases, case.id: case.model_copy(update={"signatures": signatures})}
    reply = match_reply(result, cases, ("ko", "en"), explicit=True)
    sections = [b["text"]["text"] for b in reply.blocks if b["type"] == "section"]
    contexts = [e["text"] for b in reply.blocks if b["type"] == "context" for e in b["elements"]]
    assert "정정 불가능한 ECC 오류를 알리는" in sections[0]  # line 1: the failure, in Korean
    assert "번째 줄" in sections[1]
    assert any(note in text for text in contexts)  # the English note, in small type
    do_now = next(text for text in sections if text.startswith("*지금 할 일"))
    assert "Do now" not in do_now and all(" · _" not in line for line in do_now.splitlines())
    assert any(text.startswith("Do now: 1.") for text in contexts)
    assert any("건너뛰었습니다" in text for text in contexts)  # what was skipped, in Korean
    assert len(visible(reply)) <= MAX_LINES


def test_a_collective_timeout_quotes_the_line_once() -> None:
    line = (
        "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, "
        "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out."
    )
    reply, _ = first_reply(line.encode())
    assert reply.plain.count("Watchdog caught collective operation timeout") == 1


def test_several_failing_hosts_fill_a_list_only_where_slurm_takes_one() -> None:
    hosts = {"node": "dgx-040,dgx-041,dgx-047"}
    assert fill_command("ssh {node} ibstat", hosts) == "ssh dgx-040 ibstat"
    assert fill_command("kubectl cordon {node}", hosts) == "kubectl cordon dgx-040"
    assert fill_command("scontrol update nodename={node} state=drain", hosts).endswith(
        "=dgx-040,dgx-041,dgx-047 state=drain"
    )
    assert (
        fill_command("sbatch --exclude={node} job.sbatch", hosts)
        == "sbatch --exclude=dgx-040,dgx-041,dgx-047 job.sbatch"
    )
    assert fill_command("squeue -w {node} -h", hosts) == "squeue -w dgx-040,dgx-041,dgx-047 -h"
    # A step that acts on one node gets the first; the others stay drained. A GPU may be any host's.
    assert fill_command("scontrol update nodename={node} state=resume", hosts).endswith("=dgx-040 state=resume")
    assert fill_command("srun -w {node} -N1 -n1 sh -c 'ulimit -l'", hosts).startswith("srun -w dgx-040 -N1")
    assert fill_command("scontrol reboot ASAP nextstate=DOWN {node}", hosts).endswith(" dgx-040")
    with_gpu = {**hosts, "gpu": "3", "pci": "0000:3b:00.0"}
    # With several hosts a GPU may be any host's: the reader writes it (shown as what to write there).
    assert fill_command("ssh {node} nvidia-smi -r -i {pci}", with_gpu) == "ssh dgx-040 nvidia-smi -r -i PCI"


def test_filled_values_are_shell_quoted_and_unsafe_ones_shown_as_what_to_write() -> None:
    template = "scontrol update nodename={node} state=drain reason=xid; ssh {node} nvidia-smi -i {gpu}"
    assert fill_command(template, {"node": "gpu-a17", "gpu": "3"}) == (
        "scontrol update nodename=gpu-a17 state=drain reason=xid; ssh gpu-a17 nvidia-smi -i 3"
    )
    hostile = fill_command(template, {"node": "a;rm -rf /", "gpu": "$(reboot)"})
    assert hostile == "scontrol update nodename=NODE state=drain reason=xid; ssh NODE nvidia-smi -i GPU"
    assert fill_command("ssh {node} true", {"node": "n-1:2"}) == "ssh n-1:2 true"


def test_the_full_case_shows_the_runbook_filled_and_the_record() -> None:
    case = LIBRARY.cases["IL-0414"]
    reply = case_reply(case, ("en", "ko"), fills={"node": "gpu-b07", "gpu": "2"})
    assert "Next time: what to do" in reply.plain and "What was done then" in reply.plain
    assert "gpu-b07" in reply.plain and "{node}" not in reply.plain
    assert "다음에 할 일" in reply.plain


# -- the library's runbooks ----------------------------------------------------------------------------


@pytest.mark.parametrize("case_id", sorted(LIBRARY.cases))
def test_every_case_has_a_bilingual_runbook_and_gist(case_id: str) -> None:
    case = LIBRARY.cases[case_id]
    assert len(case.runbook) >= 3
    assert all(step.text.langs() == ("en", "ko") for step in case.runbook)
    assert {"confirm", "verify"} <= {step.stage for step in case.runbook}
    assert case.gist is not None and case.gist.langs() == ("en", "ko")
    assert not any(step.template for step in case.remediation)  # commands live in the runbook


def test_the_bundled_library_passes_strict_validation() -> None:
    problems = [*LIBRARY.problems, *review_library(LIBRARY)]
    assert problems == [], "\n".join(str(p) for p in problems)


def _planted(tmp_path: Path, edit: dict[str, Any], case_id: str = "PUB-0009") -> list[str]:
    case = json.loads((ROOT / "cases" / f"{case_id}.json").read_text(encoding="utf-8"))
    case.update(edit)
    (tmp_path / f"{case_id}.json").write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")
    library = load_library(tmp_path)
    return [str(p) for p in [*library.problems, *review_library(library)]]


def _step(command: str, stage: str = "fix", assumes: bool = True) -> dict[str, Any]:
    step: dict[str, Any] = {"stage": stage, "text": {"en": "Do it.", "ko": "한다."}, "command": command}
    if assumes:
        step["assumes"] = {"en": "root on the node", "ko": "노드의 root 권한"}
    return step


def test_a_planted_glossary_slip_is_reported(tmp_path: Path) -> None:
    case = json.loads((ROOT / "cases" / "PUB-0009.json").read_text(encoding="utf-8"))
    case["summary"]["ko"] += " 랭크 3 의 로스가 튀었다."
    problems = _planted(tmp_path, {"summary": case["summary"]})
    assert any("'랭크'" in p and "'rank'" in p and "summary.ko" in p for p in problems)
    assert any("'로스'" in p for p in problems)


def test_unknown_placeholders_and_unparseable_templates_are_errors(tmp_path: Path) -> None:
    assert shutil.which("bash") is not None  # the template check parses with bash -n
    runbook = [_step("ssh {host} true", "confirm"), _step("sbatch --exclude={node} <job script>", "verify")]
    problems = _planted(tmp_path, {"runbook": runbook})
    assert any("runbook[0].command: unknown placeholder host" in p for p in problems)
    assert any("runbook[1].command: does not parse as shell" in p for p in problems)


@pytest.mark.parametrize(
    ("steps", "rule"),
    [
        ([_step("ssh {node} nvidia-smi -r -i {gpu}")], "gpu-reset"),
        (
            [_step("scontrol update nodename={node} state=drain reason=x", "contain"), _step("nvidia-smi -r")],
            "gpu-reset",
        ),
        ([_step("systemctl restart nvidia-fabricmanager")], "fabric-manager"),
        ([_step("scontrol reboot ASAP {node}", assumes=False)], "reboot"),
        ([_step("export NCCL_ASYNC_ERROR_HANDLING=1")], "nccl-async"),
        ([_step("echo '#SBATCH --output=%x-%j-%N.out' >> job.sbatch")], "sbatch-per-node-output"),
        ([_step("srun --jobid={job} -w {node} df -h /dev/shm")], "srun-into-job"),
    ],
)
def test_unsafe_commands_are_errors(tmp_path: Path, steps: list[dict[str, Any]], rule: str) -> None:
    problems = _planted(tmp_path, {"runbook": [_step("ssh {node} true", "confirm"), *steps]})
    assert any(f"{rule}:" in p and p.startswith("error") for p in problems), problems


def test_a_reset_after_a_drain_and_a_jobs_left_check_is_accepted(tmp_path: Path) -> None:
    runbook = [
        _step("scontrol update nodename={node} state=drain reason=xid", "contain"),
        _step('[ "$(sinfo -h -n {node} -o %T)" = drained ] && echo empty', "contain"),
        _step("ssh {node} nvidia-smi -r -i {pci}"),
        _step("srun --jobid={job} --overlap -w {node} nvidia-smi", "verify"),
    ]
    problems = _planted(tmp_path, {"runbook": runbook})
    assert not [p for p in problems if p.startswith("error")], problems


def test_a_missing_runbook_or_gist_is_a_warning(tmp_path: Path) -> None:
    problems = _planted(tmp_path, {"runbook": [], "gist": None})
    assert any("warning" in p and "no runbook" in p for p in problems)
    assert any("warning" in p and "gist" in p for p in problems)


def test_library_owned_text_is_not_checked_but_review_notes_are_kept(tmp_path: Path) -> None:
    case = json.loads((ROOT / "cases" / "IL-0414.json").read_text(encoding="utf-8"))
    case["summary"]["ko"] += " 랭크"
    problems = _planted(tmp_path, {"summary": case["summary"]}, "IL-0414")
    assert not any("summary.ko" in p for p in problems)
    assert load_library(tmp_path).cases["IL-0414"].review_notes


def test_review_notes_never_reach_a_reply() -> None:
    for case in LIBRARY.cases.values():
        if not case.review_notes:
            continue
        shown = case_reply(case, ("en", "ko")).plain
        assert not any(note[:40] in shown for note in case.review_notes), case.id


def test_case_model_round_trips_the_local_fields() -> None:
    case = LIBRARY.cases["IL-0427"]
    again = Case.model_validate(case.model_dump(mode="json"))
    assert again.runbook == case.runbook and again.gist == case.gist


def test_the_first_command_on_a_node_memory_knows_is_preceded_by_its_count_and_threads() -> None:
    """Issue 34, item 5: node memory is said again right before the first command that acts on the node."""
    from bot.model.results import NodeEvent

    paste = b"Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE (0x1)\n"
    result = MATCHER.match(paste)
    assert result.suspects is not None
    earlier = [NodeEvent("gpu-a17", "IL-0427", "gpu-memory-ecc", True, "C1", f"{i}.1", NOW) for i in range(2)]
    reply = match_reply(
        result, LIBRARY.cases, ("en",), explicit=True, fills=result.suspects.fills, history={"gpu-a17": earlier}
    )  # type: ignore[arg-type]
    plain = reply.plain.splitlines()
    do_now = plain.index("Do now")
    first_command = next(
        n for n in range(do_now, len(plain)) if plain[n].lstrip().startswith("$ ") and "gpu-a17" in plain[n]
    )
    assert plain[first_command - 1].lstrip().startswith("↳ gpu-a17 failed 3 times since")
    assert sum("↳ gpu-a17" in line for line in plain) == 1  # once, not on every step
