"""Drain and resume from the reply, on the real Slurm of ``deploy/slurm/dev-slurm.sh`` (slurmctld, slurmd,
slurmdbd on MariaDB): the bot's Slurm user ``incident-bot`` is an Administrator (Slurm 22.05 refuses node
updates from Operator), never root. Over signed Slack requests and the fake Web API, on SQLite and
PostgreSQL: paste → Drain → confirm → ``sinfo -R`` shows the reason and the user → a second drain refused →
a non-operator refused → the hourly limit asks for a second operator, who approves → resume; a forged
button value; the scheduler down mid-action; a dry run; an expired approval; an admin's drain."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_harness import HarnessSlack, SlackHarness, harness_settings, message_event
from test_drafts import submit
from test_slack_interactive import buttons, click

from bot.app.drains import DrainPolicy, Drains
from bot.app.nodestates import NodeStates
from bot.app.service import IncidentService
from bot.library.case_store import CaseLibrary
from bot.ops.metrics import Metrics
from bot.replies.drain import ACTION_APPROVE, ACTION_DRAIN, ACTION_RESUME
from bot.scheduler.slurm_cli import SlurmCli
from bot.scheduler.slurm_control import SlurmControl
from bot.storage import Storage
from bot.storage.memory import MemoryStorage

CONF = os.environ.get("TEST_SLURM_CONF", "")
BOT_USER = os.environ.get("TEST_SLURM_OPERATOR_USER") or "incident-bot"
NOW = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
pytestmark = pytest.mark.slurm


class Clock:
    def __init__(self) -> None:
        self.value = NOW

    def __call__(self) -> datetime:
        return self.value


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=30, check=False)


def _reason(node: str) -> tuple[str, str] | None:
    """(user, reason) that sinfo -R shows for ``node``, or None when it is not drained."""
    done = _run("sinfo", "-h", "-R", "-n", node, "-o", "%u|%E")
    line = done.stdout.strip()
    return None if not line else (line.split("|", 1)[0], line.split("|", 1)[1])


@pytest.fixture
def node(storage_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fake node of the dev cluster, one per storage backend (tests of the two backends run at once)."""
    monkeypatch.setenv("SLURM_CONF", CONF)
    name = "gpu-a18" if storage_url.startswith("postgresql") else "gpu-a20"
    _run("scontrol", "update", f"nodename={name}", "state=resume")
    yield name
    _run("scontrol", "update", f"nodename={name}", "state=resume")


def _drains(storage: Storage, clock: Clock, *, limit: int = 3, dry_run: bool = False) -> Drains:
    states = NodeStates(SlurmCli(accounting=False), 5.0, Metrics())
    return Drains(storage, states, SlurmControl(run_as=BOT_USER), DrainPolicy(limit, dry_run), clock)


@pytest.fixture
async def bot(
    fake: HarnessSlack, storage: Storage, library: CaseLibrary, node: str
) -> AsyncIterator[tuple[SlackHarness, Clock]]:
    clock = Clock()
    service = IncidentService(library, storage, deadline_s=20.0, now=clock)
    service.node_states = NodeStates(SlurmCli(accounting=False), 5.0, Metrics())
    service.drains = _drains(storage, clock)
    async with SlackHarness(fake, service, harness_settings(fake, OPERATORS="U1,U3")) as harness:
        yield harness, clock


def xid79(host: str) -> str:
    return (
        f"Mar  5 11:40:02 {host} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, "
        "GPU has fallen off the bus.\n"
    )


async def _reply_with_drain(h: SlackHarness, host: str, channel: str = "C1") -> tuple[dict[str, Any], str]:
    event = message_event(xid79(host), channel=channel)
    await h.event(event)
    await h.wait_for(lambda: h.fake.posted(channel))
    [posted] = h.fake.posted(channel)[-1:]
    await h.wait_for(lambda: any(c.body.get("ts") == posted["ts"] for c in h.fake.calls("chat.update")))
    [update] = [c.body for c in h.fake.calls("chat.update") if c.body.get("ts") == posted["ts"]]
    blocks = update["blocks"] if isinstance(update["blocks"], list) else json.loads(update["blocks"])
    return {**posted, "blocks": blocks, "thread": event["ts"]}, buttons(blocks).get(ACTION_DRAIN, "")


def _opened_view(h: SlackHarness) -> dict[str, Any]:
    view = h.fake.calls("views.open")[-1].body["view"]
    return dict(json.loads(view) if isinstance(view, str) else view)


def _thread_texts(h: SlackHarness, channel: str = "C1") -> list[str]:
    return [str(m.get("text")) for m in h.fake.posted(channel)]


async def test_drain_confirm_refusals_limit_approval_and_resume(
    bot: tuple[SlackHarness, Clock], node: str, storage: Storage
) -> None:
    h, clock = bot
    posted, value = await _reply_with_drain(h, node)
    assert value, "the reply offers a Drain button for a node that is not drained"
    # A non-operator is told who can; nothing opens.
    [refused] = await click(h, ACTION_DRAIN, value, user="U2", message_ts=posted["ts"], ephemeral=False)
    assert "Only operators can drain nodes: <@U1>, <@U3>" in json.dumps(refused)
    # A forged value (the node changed, the seal kept) and a value moved to another channel: refused.
    forged = value.replace(node, "gpu-a17", 1)
    [bad] = await click(h, ACTION_DRAIN, forged, user="U1", message_ts=posted["ts"], ephemeral=False)
    [moved] = await click(h, ACTION_DRAIN, value, user="U1", channel="C9", message_ts=posted["ts"], ephemeral=False)
    assert "not valid" in json.dumps(bad) and "not valid" in json.dumps(moved)
    assert not h.fake.calls("views.open")
    # An operator gets the form: the node, a reason from the case, the exact command, what it does.
    await click(h, ACTION_DRAIN, value, user="U1", message_ts=posted["ts"], ephemeral=False)
    view = _opened_view(h)
    shown = json.dumps(view)
    assert f"nodename={node}" in shown and "state=drain" in shown and "keep running" in shown and "IL-0415" in shown
    await submit(h, view, {"reason": f"Xid 79 on {node} — IL-0415 — test"}, user="U1")
    assert _reason(node) == (BOT_USER, f"Xid 79 on {node} — IL-0415 — test")
    said = _thread_texts(h)
    assert any(text.startswith(f"Drained {node} by <@U1> at ") for text in said), said
    # A drained node is never drained again.
    ack = await submit(h, view, {"reason": "again"}, user="U1")
    assert ack == {} and _reason(node) == (BOT_USER, f"Xid 79 on {node} — IL-0415 — test")
    assert any("already" in json.dumps(c.body) for c in h.fake.calls("chat.postEphemeral"))
    # Resume a drain the bot made.
    record = next(m for m in h.fake.posted("C1") if str(m.get("text")).startswith(f"Drained {node}"))
    resume_value = buttons(record["blocks"])[ACTION_RESUME]
    [nope] = await click(h, ACTION_RESUME, resume_value, user="U2", message_ts=record["ts"], ephemeral=False)
    assert "Only operators can resume" in json.dumps(nope)
    await click(h, ACTION_RESUME, resume_value, user="U1", message_ts=record["ts"], ephemeral=False)
    resume_view = _opened_view(h)
    assert resume_view["callback_id"] == "resume_view" and "override" not in json.dumps(resume_view["blocks"])
    # A form opened by one operator cannot be submitted by another (its metadata is sealed to the opener).
    moved = await submit(h, resume_view, {"note": "verify step passed"}, user="U3")
    assert moved.get("response_action") == "errors" and _reason(node) is not None
    await submit(h, resume_view, {"note": "verify step passed: dcgmi diag -r 2"}, user="U1")
    assert _reason(node) is None
    assert any(text.startswith(f"Resumed {node} by <@U1>") for text in _thread_texts(h))
    # Past the hourly limit a second operator must approve; the one who asked cannot.
    h.service.drains = _drains(storage, clock, limit=1)
    await click(h, ACTION_DRAIN, value, user="U1", message_ts=posted["ts"], ephemeral=False)
    await submit(h, _opened_view(h), {"reason": "second drain this hour"}, user="U1")
    assert _reason(node) is None
    request = next(m for m in h.fake.posted("C1") if "asks to drain" in str(m.get("text")))
    approve = buttons(request["blocks"])[ACTION_APPROVE]
    [same] = await click(h, ACTION_APPROVE, approve, user="U1", message_ts=request["ts"], ephemeral=False)
    assert "another operator must approve" in json.dumps(same) and _reason(node) is None
    [other] = await click(h, ACTION_APPROVE, approve, user="U2", message_ts=request["ts"], ephemeral=False)
    assert "Only operators can approve" in json.dumps(other)
    await click(h, ACTION_APPROVE, approve, user="U3", message_ts=request["ts"], ephemeral=False)
    assert _reason(node) == (BOT_USER, "second drain this hour")
    [twice] = await click(h, ACTION_APPROVE, approve, user="U3", message_ts=request["ts"], ephemeral=False)
    assert "already decided" in json.dumps(twice)
    # The audit lists every action the test took, who and what the scheduler said.
    actions = storage.list_actions(NOW - timedelta(days=1), node)
    kinds = [(a.kind, a.status, a.user_id, a.approved_by) for a in reversed(actions)]
    assert kinds == [
        ("drain", "done", "U1", ""),
        ("drain", "refused", "U1", ""),
        ("resume", "done", "U1", ""),
        ("drain", "done", "U1", "U3"),
    ], kinds
    assert all(a.command.startswith("scontrol update nodename=") for a in actions)


def test_a_dry_run_an_expired_request_and_an_admins_drain(node: str) -> None:
    storage, clock = MemoryStorage(), Clock()
    dry = _drains(storage, clock, dry_run=True).request("U1", node, "dry", "C1", "1.1")
    assert dry.status == "dry-run" and dry.message.startswith(f"would run: scontrol update nodename={node}")
    assert _reason(node) is None
    drains = _drains(storage, clock, limit=0)
    pending = drains.request("U1", node, "needs approval", "C1", "1.1")
    assert pending.status == "pending" and pending.action_id is not None
    clock.value += timedelta(minutes=16)
    expired = drains.approve(pending.action_id, "U3")
    assert expired.status == "expired" and _reason(node) is None
    # An admin's own drain: a resume needs the override and a note.
    assert _run("scontrol", "update", f"nodename={node}", "state=drain", "reason=admin: bad PSU").returncode == 0
    refused = drains.resume("U1", node, "C1", "1.1", override=False, note="")
    assert refused.status == "refused" and "someone else" in refused.message and _reason(node) is not None
    done = drains.resume("U1", node, "C1", "1.1", override=True, note="PSU replaced, verify passed")
    assert done.status in ("done", "failed") and _reason(node) is None  # a fake node's resume exits 1


def test_the_scheduler_down_mid_action_changes_nothing(
    node: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        Path(CONF).read_text(encoding="utf-8").replace("SlurmctldPort=", "SlurmctldPort=1#"), encoding="utf-8"
    )
    storage, clock = MemoryStorage(), Clock()
    drains = _drains(storage, clock)
    monkeypatch.setenv("SLURM_CONF", str(conf))
    out = drains.request("U1", node, "while down", "C1", "1.1")
    monkeypatch.setenv("SLURM_CONF", CONF)
    assert out.status == "refused" and "could not be asked" in out.message and _reason(node) is None
    [stored] = storage.list_actions(NOW - timedelta(days=1))
    assert stored.status == "refused" and "could not be asked" in stored.answer


@pytest.mark.parametrize("as_json", [True, False])
def test_the_audit_export_lists_every_action(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    from conftest import run_cli_at

    from bot.cli.main import main
    from bot.model.nodestate import ActionRecord
    from bot.storage import open_storage

    url = f"sqlite:///{tmp_path / 'bot.sqlite3'}"
    store = open_storage(url)
    store.migrate()
    store.add_action(ActionRecord("drain", "gpu-a17", "Xid 79 — IL-0415", "U1", "C1", "1.1", "done", NOW, "exit 0"))
    store.add_action(
        ActionRecord("drain", "gpu-a18", "limit", "U1", "C1", "1.2", "pending", NOW + timedelta(minutes=1))
    )
    store.close()
    monkeypatch.setenv("DATABASE_URL", url)
    run_cli_at(monkeypatch, NOW + timedelta(hours=1))
    assert main(["actions", *(["--json"] if as_json else [])]) == 0
    out = capsys.readouterr().out
    if as_json:
        rows = json.loads(out)
        assert [(r["node"], r["status"], r["user_id"]) for r in rows] == [
            ("gpu-a18", "pending", "U1"),
            ("gpu-a17", "done", "U1"),
        ]
        assert rows[1]["answer"] == "exit 0" and rows[1]["created_at"] == NOW.isoformat()
    else:
        assert "drain gpu-a17  done  by U1" in out and "drain gpu-a18  pending" in out
