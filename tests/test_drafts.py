"""Unanswered pastes become case drafts; reviews reach the digest.

End to end over signed Slack requests and the fake Web API, on SQLite and PostgreSQL: a paste no case
explains → "Start a case draft" → ``views.open`` then ``views.update`` → ``view_submission`` → the draft is
stored and announced → exported as a case file that validates → reviewed by a reviewer (a non-reviewer is
refused) → the next digest names it, once. Hostile submissions store nothing.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import re2
from conftest import NOW
from slack_harness import HarnessSlack, SlackHarness, harness_settings
from test_slack_interactive import _interaction, buttons, click

from bot.app.drafts import Drafts
from bot.app.service import IncidentService
from bot.cli.main import main
from bot.library.case_store import CaseLibrary, load_library
from bot.library.drafts import draft_problems, next_local_id, propose_signatures, propose_title
from bot.library.review import review_library
from bot.matching.redaction import redact
from bot.matching.signatures import re2_options
from bot.ops.clock import fixed
from bot.ops.settings import BUNDLED_CASES
from bot.replies.buttons import ACTION_NOT_THIS
from bot.replies.drafts import ACTION_DRAFT, DRAFT_CALLBACK
from bot.storage import Storage

UNKNOWN = (
    "Nov 30 02:11:09 gpu-b07 fabricd[311]: FATAL: NVSwitch tray 4 lost heartbeat, partition 9 torn down "
    "after 3 retries\nRuntimeError: NCCL communicator 17 aborted: NVSwitch partition torn down\n"
)
# A paste a case explains (the Xid line) with a line no case knows: the answer can be wrong.
MATCHED = (
    "Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE (0x1)\n"
    "gpu-doctor on gpu-a17: HBM bank 5 parity sweep failed on device 3, quarantine requested by node agent\n"
)


class Clock:
    def __init__(self) -> None:
        # A Monday 10:00 KST, an hour after the digest slot (DIGEST_CRON: Mondays 09:00 Asia/Seoul).
        self.value = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.value


@pytest.fixture
async def loop(
    fake: HarnessSlack, storage: Storage, library: CaseLibrary, tmp_path: Path
) -> AsyncIterator[tuple[SlackHarness, Clock, Path]]:
    clock = Clock()
    cases = tmp_path / "cases"
    shutil.copytree(BUNDLED_CASES, cases)
    fake.usergroups["S0REVIEW"] = ["U8"]
    service = IncidentService(library, storage, deadline_s=20.0, now=clock, reviewers=frozenset({"U7", "S0REVIEW"}))
    async with SlackHarness(fake, service, harness_settings(fake, CASES_DIR=str(cases))) as h:
        yield h, clock, cases


async def no_match_answer(h: SlackHarness, text: str = UNKNOWN, user: str = "U1") -> dict[str, Any]:
    _, url = await h.command(text, user_id=user)
    await h.settle()
    [answer] = h.hook_calls(url)
    body: dict[str, Any] = answer.body
    return body


async def open_form(h: SlackHarness, answer: dict[str, Any], user: str = "U1", thread: str = "") -> dict[str, Any]:
    """Click "Start a case draft" (on an answer in ``thread``, when given); the form as views.update left it."""
    value = buttons(answer["blocks"])[ACTION_DRAFT]
    before = len(h.fake.calls("views.update"))
    container = {"type": "message", "message_ts": "1.2", "channel_id": "C1", "is_ephemeral": True}
    if thread:
        container["thread_ts"] = thread
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": "someone", "team_id": "T1"},
        "container": container,
        "trigger_id": "13345224609.738474920.8088930838d88f008e0",
        "channel": {"id": "C1", "name": "gpu-incidents"},
        "actions": [{"action_id": ACTION_DRAFT, "block_id": "b1", "value": value, "type": "button"}],
    }
    await _interaction(h, payload)
    await h.wait_for(lambda: len(h.fake.calls("views.update")) > before)
    [opened] = h.fake.calls("views.open")[-1:]
    assert opened.body["trigger_id"] == payload["trigger_id"]
    loading = json.loads(opened.body["view"]) if isinstance(opened.body["view"], str) else opened.body["view"]
    assert loading["callback_id"] == DRAFT_CALLBACK and "Reading" in json.dumps(loading)
    update = h.fake.calls("views.update")[-1].body
    view = json.loads(update["view"]) if isinstance(update["view"], str) else update["view"]
    assert update["view_id"] in h.fake.modals  # the view views.open made
    return dict(view)


async def submit(h: SlackHarness, view: dict[str, Any], fields: dict[str, str], user: str = "U1") -> dict[str, Any]:
    """A ``view_submission`` of ``view`` with ``fields``; the ack's JSON body ({} when it closed the form)."""
    values = {name: {name: {"type": "plain_text_input", "value": value}} for name, value in fields.items()}
    payload = {
        "type": "view_submission",
        "user": {"id": user, "username": "someone", "team_id": "T1"},
        "view": {
            "id": "V1",
            "type": "modal",
            "callback_id": view["callback_id"],
            "private_metadata": view.get("private_metadata", ""),
            "state": {"values": values},
        },
    }
    response, _ = await _interaction(h, payload)
    await h.settle()
    return dict(response.json()) if response.content else {}


FORM = {
    "title_en": "NVSwitch partition torn down",
    "title_ko": "NVSwitch 파티션 해제",
    "summary_en": "The fabric daemon tore down a partition after losing an NVSwitch tray.",
    "summary_ko": "fabric 데몬이 NVSwitch 트레이를 잃고 파티션을 해제했다.",
    "runbook_en": "Check the fabric daemon's log on the node.\nVerify the partition is back.",
    "runbook_ko": "노드에서 fabric 데몬 로그를 확인한다.\n파티션이 돌아왔는지 확인한다.",
}


async def test_a_paste_becomes_a_draft_a_case_a_review_and_a_digest(
    loop: tuple[SlackHarness, Clock, Path], tmp_path: Path
) -> None:
    h, clock, cases = loop
    answer = await no_match_answer(h)
    assert "No known case fits" in json.dumps(answer) and ACTION_DRAFT in buttons(answer["blocks"])
    view = await open_form(h, answer)
    proposed = next(b for b in view["blocks"] if b.get("block_id") == "signatures")["element"]["initial_value"]
    assert proposed.splitlines()[0].startswith("re:FATAL: NVSwitch tray \\d{1,20} lost heartbeat")
    assert "gpu-b07" not in json.dumps(view)  # hosts are redacted before anything is proposed
    title = next(b for b in view["blocks"] if b.get("block_id") == "title_en")["element"]["initial_value"]
    assert title == "FATAL: NVSwitch tray 4 lost heartbeat, partition 9 torn down after 3 retries"
    ack = await submit(h, view, {**FORM, "signatures": proposed})
    assert ack == {}
    [draft] = h.service.storage.list_drafts()
    assert draft.author == "U1" and draft.fields["title_en"] == FORM["title_en"]
    [note] = h.fake.calls("chat.postEphemeral")[-1:]
    assert f"D-{draft.id}" in note.body["text"]
    # Export: a case file with the next local id that validates (a missing gist is only a warning).
    assert draft.id is not None
    path, case_id = h.service.drafts.export(draft.id, cases, list(h.service.library.cases))
    assert case_id == "LOC-0001" and path == cases / "LOC-0001.json"
    fresh = load_library(cases)
    assert not fresh.errors and not [p for p in review_library(fresh) if p.severity == "error"]
    h.service.reload(fresh)
    assert h.service.match(UNKNOWN.replace("tray 4", "tray 2")).best.case_id == "LOC-0001"  # type: ignore[union-attr]
    # A non-reviewer is refused; a reviewer (by user id, or through a user group) records the review.
    refused = await no_match_answer(h, "review LOC-0001 looks right", user="U2")
    assert "Only the reviewers listed in REVIEWERS" in json.dumps(refused)
    assert h.service.storage.list_reviews() == []
    clock.value += timedelta(hours=1)
    saved = await no_match_answer(h, "review LOC-0001 checked against the thread", user="U8")
    assert "LOC-0001 reviewed by U8" in json.dumps(saved)
    [review] = h.service.storage.list_reviews("LOC-0001")
    assert review.note == "checked against the thread"
    shown = await no_match_answer(h, "LOC-0001", user="U3")
    assert "Reviewed by U8 on 2026-11-30" in json.dumps(shown)
    # The next digest (Monday 7 December, 09:00 KST) names it; once done, never again.
    clock.value = datetime(2026, 12, 7, 1, 0, tzinfo=UTC)
    plan = h.service.digest_plan()
    assert plan.due and [c.id for c in plan.cases] == ["LOC-0001"]
    storage = h.service.storage
    claim = storage.claim_digest(plan.key, "test", clock(), 600)
    assert claim is not None
    storage.record_digest_cases(plan.key, "test", ("LOC-0001",))
    assert storage.complete_digest(plan.key, "test", ("1.1",), clock())
    clock.value = datetime(2026, 12, 14, 1, 0, tzinfo=UTC)
    assert "LOC-0001" not in [c.id for c in h.service.digest_plan().cases]


async def test_hostile_submissions_store_nothing(loop: tuple[SlackHarness, Clock, Path]) -> None:
    h, _, _ = loop
    view = await open_form(h, await no_match_answer(h))
    metadata = json.loads(view["private_metadata"])
    forged = {**view, "private_metadata": json.dumps({**metadata, "c": "C999"})}
    for bad_view, user in [(forged, "U1"), (view, "U2"), ({**view, "private_metadata": "{"}, "U1")]:
        # another channel, another user's form, metadata that is not ours
        ack = await submit(h, bad_view, FORM, user=user)
        assert ack["response_action"] == "errors" and "not yours" in json.dumps(ack)
    cases = [
        ({**FORM, "signatures": "re:(unclosed"}, "signatures"),
        ({**FORM, "signatures": "saving checkpoint at iteration"}, "signatures"),  # healthy training chatter
        ({**FORM, "title_en": "x" * 5000}, "title_en"),
        ({**FORM, "title_en": "", "title_ko": ""}, "title_en"),
    ]
    for fields, block in cases:
        ack = await submit(h, view, fields)
        assert ack["response_action"] == "errors" and block in ack["errors"], (fields, ack)
    assert h.service.storage.list_drafts() == []
    # Markup in every field is stored as written and echoed escaped.
    hostile = {name: "<!channel> <@U123> <https://evil.example|x>" for name in FORM}
    ack = await submit(h, view, {**hostile, "signatures": ""})
    assert ack == {}
    text = h.fake.calls("chat.postEphemeral")[-1].body["text"]
    assert "<!channel>" not in text and "&lt;!channel&gt;" in text and "<https://evil" not in text


async def test_not_this_case_offers_a_draft_of_the_paste(loop: tuple[SlackHarness, Clock, Path]) -> None:
    h, _, _ = loop
    answer = await no_match_answer(h, MATCHED)  # answered with a case, privately, with its buttons
    values = buttons(answer["blocks"])
    assert ACTION_DRAFT not in values and ACTION_NOT_THIS in values
    [said] = await click(h, ACTION_NOT_THIS, values[ACTION_NOT_THIS], ephemeral=True)
    assert ACTION_DRAFT in buttons(said["blocks"])  # none of the answer fits: start a case from the paste
    view = await open_form(h, said)
    fields = {b["block_id"]: b.get("element", {}).get("initial_value", "") for b in view["blocks"] if "block_id" in b}
    proposed = fields["signatures"].splitlines()
    assert any("gpu-doctor on \\S{1,100}: HBM bank \\d{1,20} parity sweep" in p for p in proposed), proposed
    assert "NVRM: Xid (PCI:0000:3b:00): 48" in fields["title_en"] and "gpu-a17" not in json.dumps(view)
    for pattern in (p.removeprefix("re:") for p in proposed if p.startswith("re:")):
        program = re2.compile(pattern, re2_options())
        assert any(program.search(line) for line in MATCHED.splitlines()), pattern  # the unredacted paste
    ack = await submit(h, view, {**FORM, "signatures": fields["signatures"]})
    assert ack == {}
    [draft] = h.service.storage.list_drafts()
    assert draft.author == "U1" and draft.fields["signatures"] == fields["signatures"]
    assert draft.permalink == ""  # a private answer outside a thread has no message to link


async def test_a_draft_started_in_a_thread_links_the_paste(loop: tuple[SlackHarness, Clock, Path]) -> None:
    h, _, _ = loop
    view = await open_form(h, await no_match_answer(h), thread="1796125528.000100")
    assert await submit(h, view, FORM) == {}
    [draft] = h.service.storage.list_drafts()
    assert draft.permalink == "https://test.slack.com/archives/C1/p1796125528000100"  # the paste, not the answer


async def test_a_signature_with_markup_is_refused_or_kept_inert(loop: tuple[SlackHarness, Clock, Path]) -> None:
    h, _, cases = loop
    view = await open_form(h, await no_match_answer(h))
    # RE2 cannot read it: refused on the signatures field, nothing stored.
    ack = await submit(h, view, {**FORM, "signatures": "re:<!channel> NVSwitch <@U123> torn down (["})
    assert ack["response_action"] == "errors" and list(ack["errors"]) == ["signatures"]
    assert "line 1" in ack["errors"]["signatures"] and h.service.storage.list_drafts() == []
    # A valid one is a log string: kept as written (a paste must still contain it), shown nowhere live.
    markup = "<!channel> NVSwitch tray torn down by <@U123> <https://evil.example|fabricd>"
    ack = await submit(h, view, {**FORM, "title_en": "<!here> torn down", "signatures": markup})
    assert ack == {}
    [draft] = h.service.storage.list_drafts()
    assert draft.fields["signatures"] == markup
    note = h.fake.calls("chat.postEphemeral")[-1].body["text"]
    assert "<!here>" not in note and "&lt;!here&gt;" in note
    assert draft.id is not None
    path, _ = h.service.drafts.export(draft.id, cases, list(h.service.library.cases))
    assert json.loads(path.read_text(encoding="utf-8"))["signatures"][0]["pattern"] == markup
    assert not load_library(cases).errors


async def test_a_megabyte_paste_still_opens_a_bounded_form(loop: tuple[SlackHarness, Clock, Path]) -> None:
    h, _, _ = loop
    big = ("unexpected fabric fault code 0x1f on tray 3, retrying\n" * 20_000)[: 1 << 20]
    answer = await no_match_answer(h, UNKNOWN + big)
    value = buttons(answer["blocks"])[ACTION_DRAFT]
    assert len(value) <= 2000
    view = await open_form(h, answer)
    assert len(json.dumps(view)) < 20_000 and len(view["private_metadata"]) <= 3000


# -- pure parts ---------------------------------------------------------------------------------------------


def test_proposals_drop_prefixes_free_numbers_and_pass_the_signature_checks() -> None:
    lines = [
        "2026-11-30T02:11:09Z <host> fabricd[311]: FATAL: NVSwitch tray 4 lost heartbeat",
        "[rank3]: RuntimeError: NCCL communicator 17 aborted",
        "ok thanks",
        "Saving checkpoint to /ckpt/step_100",
    ]
    proposed = propose_signatures(lines)
    assert proposed == [
        r"re:RuntimeError: NCCL communicator \d{1,20} aborted",  # the most literal text first
        r"re:FATAL: NVSwitch tray \d{1,20} lost heartbeat",
    ]
    assert not any("ok thanks" in p or "Saving checkpoint" in p for p in proposed)


def test_proposals_free_what_redaction_hid_and_hit_the_original_line() -> None:
    raw = [
        "2026-11-30T02:11:09Z gpu-a17.cluster.corp.com fabricd[311]: FATAL: NVSwitch tray 4 lost heartbeat "
        "reported by the watchdog on dgx-b07.lab.internal",
        "node042:81234:81790 [3] NCCL WARN NET/IB : Got completion from peer 10.0.12.7<40527> with error 12, "
        "vendor err 129 on mlx5_0",
        "RuntimeError: checkpoint upload to https://bob:hunter2@s3.example.com/ckpt failed (HTTP 403) on "
        "tray 7 of the NVSwitch fabric",
    ]
    lines = [redact(line) for line in raw]
    assert all("<host>" in line or "<ip>" in line for line in lines)
    proposed = propose_signatures(lines)
    assert len(proposed) == 3 and all(p.startswith("re:") for p in proposed)
    for pattern in proposed:
        assert not any(p in pattern for p in ("<host>", "<ip>", "<user>", "<redacted>")), pattern
        program = re2.compile(pattern.removeprefix("re:"), re2_options())
        assert sum(program.search(line) is not None for line in raw) == 1, pattern
    assert "hunter2" not in "".join(proposed) and "gpu-a17" not in "".join(proposed)
    # The form's title: the top error line without its prefixes, what redaction hid shown as "…", cut.
    title = propose_title(lines)
    assert title == "FATAL: NVSwitch tray 4 lost heartbeat reported by the watchdog on …"
    assert Drafts.initial_fields(lines)["title_en"] == title
    long = propose_title(["ERROR: " + "NVSwitch fabric partition manager lost every tray heartbeat " * 3])
    assert len(long) <= 80 and long.endswith("…") and " " not in long[-2:]
    assert propose_title(["ok thanks", "Saving checkpoint to /ckpt/step_100"]) == ""


def test_proposals_escape_every_pattern_character() -> None:
    line = "fabric error: tray[4] (a|b) lost $HOME ^x *y+ z? {1} \\d a.b on <host> after 3 retries, NVSwitch down"
    [pattern] = propose_signatures([line])
    program = re2.compile(pattern.removeprefix("re:"), re2_options())
    assert program.search(line.replace("<host>", "gpu-a17.cluster.corp.com").replace("3 retries", "12 retries"))
    assert not program.search(line.replace("a.b", "axb").replace("<host>", "h1"))  # "." is a dot, not any character


def test_draft_problems_name_the_line() -> None:
    problems = draft_problems({"title_en": "t", "summary_en": "s", "signatures": "a fine line about NVSwitch\nre:(a"})
    assert [p.field for p in problems] == ["signatures (line 2)"]


def test_the_next_local_id_skips_every_taken_one() -> None:
    assert next_local_id(["IL-0427", "LOC-0002", "loc-7", "PUB-0009"], "LOC") == "LOC-0008"
    assert next_local_id([], "loc") == "LOC-0001"


def test_cli_drafts_export_and_review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    cases = tmp_path / "cases"
    shutil.copytree(BUNDLED_CASES, cases)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CASES_DIR", str(cases))
    monkeypatch.chdir(tmp_path)
    assert main(["cases", "drafts"]) == 0
    assert "No drafts" in capsys.readouterr().out
    from bot.cli.compose import build_service, load_settings

    service = build_service(load_settings({}))
    outcome = service.drafts.submit(
        {**FORM, "signatures": "!FATAL: NVSwitch tray lost heartbeat"}, "console", "console", "", service.now()
    )
    service.storage.close()
    assert outcome.draft_id == 1
    assert main(["cases", "drafts"]) == 0
    assert "D-1" in capsys.readouterr().out
    assert main(["cases", "draft", "export", "D-1"]) == 0
    assert (cases / "LOC-0001.json").exists()
    assert main(["cases", "validate", str(cases)]) == 0
    capsys.readouterr()
    (cases / "PUB-0009.json").write_text("{ broken", encoding="utf-8")
    assert main(["cases", "review", "PUB-0009", "--by", "Jiwoo"]) == 1  # not in the library: refused
    assert main(["cases", "review", "LOC-0001", "--by", "Jiwoo", "--note", "ok"]) == 0
    assert "LOC-0001 reviewed by Jiwoo" in capsys.readouterr().out
    assert main(["cases", "review", "LOC-0001", "--by", "  "]) == 1
    assert "needs the reviewer's name" in capsys.readouterr().err
    # Once a digest carried it, a further review says so rather than promise the next digest.
    service = build_service(load_settings({}))
    now = service.now()
    assert service.storage.claim_digest("2026-11-30T09:00+09:00", "t", now, 600) is not None
    service.storage.record_digest_cases("2026-11-30T09:00+09:00", "t", ("LOC-0001",))
    service.storage.close()
    assert main(["cases", "review", "LOC-0001", "--by", "Mina"]) == 0
    said = capsys.readouterr().out
    assert "already in an earlier digest" in said and "next weekly digest" not in said
    # A case that fails validation is refused with the reason: a GPU reset without a drain.
    unsafe = json.loads((cases / "IL-0427.json").read_text(encoding="utf-8"))
    unsafe["runbook"].append({"stage": "fix", "text": {"en": "Reset.", "ko": "리셋한다."}, "command": "nvidia-smi -r"})
    (cases / "IL-0427.json").write_text(json.dumps(unsafe, ensure_ascii=False), encoding="utf-8")
    assert main(["cases", "review", "IL-0427", "--by", "Jiwoo"]) == 1
    said = capsys.readouterr()
    assert "not marked reviewed" in said.out + said.err and "reset" in (said.out + said.err).lower()
    # The review is a record, not a file edit: a sync that rewrites the case file keeps it.
    from library_server import LibraryServer

    synced = json.loads((cases / "LOC-0001.json").read_text(encoding="utf-8"))
    synced["summary"] = {"en": "Rewritten upstream.", "ko": "상류에서 다시 썼다."}
    with LibraryServer() as server:
        server.put(synced)
        assert main(["sync", "--api-url", server.base_url]) == 0
    assert "Rewritten upstream." in (cases / "LOC-0001.json").read_text(encoding="utf-8")
    capsys.readouterr()
    service = build_service(load_settings({}))
    assert service.latest_reviews()["LOC-0001"].reviewer == "Mina"
    service.storage.close()


def test_app_home_shows_who_reviewed_a_case(library: CaseLibrary) -> None:
    from bot.model.results import ReviewRecord
    from bot.replies.home import FeedbackSummary, build_home_view

    case = library.cases["IL-0427"]
    review = ReviewRecord("IL-0427", "U8", datetime(2026, 11, 30, tzinfo=UTC), "ok")
    view = build_home_view([case], [], FeedbackSummary(()), ("en", "ko"), {"IL-0427": review})
    assert "Reviewed by U8 on 2026-11-30" in json.dumps(view)


def test_the_console_starts_a_draft_from_the_last_paste(tmp_path: Path, library: CaseLibrary) -> None:
    from bot.cli.console import Console
    from bot.storage.memory import MemoryStorage

    out: list[str] = []
    service = IncidentService(library, MemoryStorage(), now=fixed(NOW))
    console = Console(service, out.append)
    console.run([":draft too early", *UNKNOWN.splitlines(), ".", ":draft NVSwitch torn down | it tore down", ":quit"])
    text = "\n".join(out)
    assert "Paste a log first" in text and "Saved draft D-1 with 2 proposed signature(s)" in text
    [draft] = service.storage.list_drafts()
    assert draft.fields["title_en"] == "NVSwitch torn down" and "gpu-b07" not in json.dumps(draft.fields)
