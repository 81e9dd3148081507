"""The node, now: the scheduler's view of the suspect node in the reply, read from a real Slurm (slurmctld,
slurmd, slurmrestd with JWT: ``deploy/slurm/dev-slurm.sh``, started by ``.ci/run`` and ``make dev-slurm``).

The loop runs over signed Slack requests and the fake Web API on SQLite and PostgreSQL: the reply is posted
first, then updated with one line per named node. A stopped, slow or garbage-answering scheduler gives
"scheduler not reachable" and a metric, never an error and never a later reply.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from slack_harness import HarnessSlack, SlackHarness, harness_settings, message_event

from bot.app.nodestates import NodeStates
from bot.app.service import IncidentService
from bot.library.case_store import CaseLibrary
from bot.model.nodestate import Lookup, NodeState, SchedulerError
from bot.ops.metrics import Metrics
from bot.replies.nodestate import node_lines
from bot.scheduler.hostlist import expand
from bot.scheduler.slurm_cli import SlurmCli
from bot.scheduler.slurm_rest import SlurmRest, TokenFile
from bot.scheduler.slurm_state import from_words
from bot.storage import Storage

CONF = os.environ.get("TEST_SLURM_CONF", "")
REST_URL = os.environ.get("TEST_SLURM_REST_URL", "")
REST_USER = os.environ.get("TEST_SLURM_REST_USER", "root")
TOKEN = os.environ.get("TEST_SLURM_TOKEN_FILE", "")
NOW = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
slurm = pytest.mark.slurm


def xid79(host: str) -> str:
    return (
        f"Mar  5 11:40:02 {host} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, "
        "GPU has fallen off the bus.\n"
    )


# -- pure parts ---------------------------------------------------------------------------------------------


def test_slurm_state_words_map_to_the_reply_states() -> None:
    assert from_words("idle") == ("idle", False)
    assert from_words("drained*") == ("drained", True)
    assert from_words("draining") == ("draining", False)
    assert from_words("IDLE+DRAIN") == ("drained", False)
    assert from_words("mixed", ["DRAIN"]) == ("draining", False)  # jobs still on it
    assert from_words("idle", ["DRAIN"], jobs=1) == ("draining", False)
    assert from_words("unknown", ["DRAIN", "NOT_RESPONDING"]) == ("drained", True)
    assert from_words("down*") == ("down", True)
    assert from_words("allocated") == ("allocated", False)
    assert from_words("mixed-") == ("mixed", False)
    assert from_words("") == ("unknown", False)


def test_host_lists_expand_bounded() -> None:
    assert expand("gpu-a[17-18,20],gpu-b01") == ["gpu-a17", "gpu-a18", "gpu-a20", "gpu-b01"]
    assert expand("n[001-003]") == ["n001", "n002", "n003"]
    assert len(expand("n[0-99999999]")) == 10_000
    assert expand("n[x-y]") == ["n[x-y]"]


def test_node_lines_escape_what_people_wrote() -> None:
    state = NodeState(
        name="gpu-a17",
        state="drained",
        reason="<!channel> bad GPU",
        reason_by="alice",
        jobs=0,
    )
    [line] = node_lines(["gpu-a17"], Lookup(states={"gpu-a17": state}), "en")
    assert line.startswith("gpu-a17: drained · reason: <!channel> bad GPU (set by alice)")
    assert node_lines(["gpu-a17"], Lookup(error="timeout"), "ko") == ["gpu-a17: 스케줄러에 연결할 수 없음"]
    assert node_lines(["gpu-zz"], Lookup(states={"gpu-zz": None}), "en") == ["gpu-zz: not a node the scheduler knows"]


class _Raising:
    name = "broken"

    def nodes(self, names: Any, timeout_s: float) -> dict[str, NodeState | None]:
        raise RuntimeError("an adapter bug")


def test_a_lookup_never_raises_and_counts_its_outcome() -> None:
    metrics = Metrics()
    found = NodeStates(_Raising(), 1.0, metrics).lookup(["gpu-a17"])
    assert found.error == "garbage" and not found.states
    sample = metrics.scheduler_lookups.labels(source="broken", outcome="garbage")._value.get()
    assert sample == 1


def _script(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_cli_adapter_refuses_garbage_and_slowness(tmp_path: Path) -> None:
    """Stand-ins for the scheduler's commands (the bot's own code runs unchanged): garbage, slow, missing."""
    garbage, slow = tmp_path / "garbage", tmp_path / "slow"
    garbage.mkdir()
    slow.mkdir()
    _script(garbage, "sinfo", "echo '<html>proxy error</html>'")
    _script(slow, "sinfo", "sleep 5")
    with pytest.raises(SchedulerError) as wrong:
        SlurmCli(bin_dir=str(garbage)).nodes(["gpu-a17"], 1.0)
    assert wrong.value.kind == "garbage"
    started = time.monotonic()
    with pytest.raises(SchedulerError) as late:
        SlurmCli(bin_dir=str(slow)).nodes(["gpu-a17"], 0.5)
    assert late.value.kind == "timeout" and time.monotonic() - started < 2.0
    with pytest.raises(SchedulerError) as missing:
        SlurmCli(bin_dir=str(tmp_path / "none")).nodes(["gpu-a17"], 1.0)
    assert missing.value.kind == "unreachable"
    # A name that is not a host name is never passed to a command.
    assert SlurmCli(bin_dir=str(garbage)).nodes(["-h", "a;b"], 1.0) == {"-h": None, "a;b": None}


# -- a real Slurm -------------------------------------------------------------------------------------------


@pytest.fixture
def slurm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_CONF", CONF)


@pytest.fixture
def stopped_conf(tmp_path: Path) -> Path:
    """The cluster's slurm.conf with the controller's port pointing where nothing listens."""
    conf = tmp_path / "slurm.conf"
    text = Path(CONF).read_text(encoding="utf-8")
    conf.write_text(text.replace("SlurmctldPort=", "SlurmctldPort=1#"), encoding="utf-8")
    return conf


def _scheduler(kind: str) -> SlurmCli | SlurmRest:
    if kind == "cli":
        return SlurmCli()
    return SlurmRest(REST_URL, REST_USER, TokenFile(TOKEN))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=30, check=False)


def _until(predicate: Any, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)


@pytest.fixture
def drained(slurm_env: None) -> Iterator[str]:
    """gpu-a19 drained by an admin with a reason (the fake node no slurmd answers for)."""
    done = _run("scontrol", "update", "nodename=gpu-a19", "state=drain", "reason=bad GPU 3 (ticket 42)")
    assert done.returncode == 0, done.stderr
    yield "gpu-a19"
    _run("scontrol", "update", "nodename=gpu-a19", "state=resume")  # clears the drain (exit 1: no slurmd)


@pytest.fixture
def busy(slurm_env: None) -> Iterator[str]:
    """gpu-a17 running a job."""
    done = _run("sbatch", "--parsable", "-w", "gpu-a17", "-o", "/dev/null", "--wrap", "sleep 300")
    assert done.returncode == 0, done.stderr
    job = done.stdout.strip().split(";")[0]
    _until(lambda: "R" in _run("squeue", "-h", "-j", job, "-o", "%t").stdout)
    yield "gpu-a17"
    _run("scancel", job)


@slurm
@pytest.mark.parametrize("kind", ["cli", "rest"])
def test_the_adapters_read_real_nodes(kind: str, slurm_env: None) -> None:
    found = _scheduler(kind).nodes(["gpu-a17", "gpu-a18", "gpu-zz"], 5.0)
    assert found["gpu-zz"] is None  # not a node the scheduler knows
    real, fake = found["gpu-a17"], found["gpu-a18"]
    assert real is not None and not real.not_responding and real.state not in ("down", "unknown")
    assert fake is not None and fake.not_responding  # no slurmd answers for it


@slurm
@pytest.mark.parametrize("kind", ["cli", "rest"])
def test_an_admins_drain_shows_its_reason_and_who_set_it(kind: str, drained: str) -> None:
    state = _scheduler(kind).nodes([drained], 5.0)[drained]
    assert state is not None and state.state == "drained"
    assert state.reason == "bad GPU 3 (ticket 42)" and state.reason_by == "root" and state.reason_at is not None


@slurm
@pytest.mark.parametrize("kind", ["cli", "rest"])
def test_a_busy_node_shows_its_jobs(kind: str, busy: str) -> None:
    state = _scheduler(kind).nodes([busy], 5.0)[busy]
    assert state is not None and state.jobs >= 1 and "root" in state.users
    assert state.state in ("mixed", "allocated")


# -- over Slack ---------------------------------------------------------------------------------------------


def _cli_states(bin_dir: str | None = None) -> NodeStates:
    return NodeStates(SlurmCli(bin_dir=bin_dir, accounting=False), 1.5, Metrics())


@pytest.fixture
async def bot(fake: HarnessSlack, storage: Storage, library: CaseLibrary) -> AsyncIterator[SlackHarness]:
    service = IncidentService(library, storage, deadline_s=20.0, now=lambda: NOW)
    async with SlackHarness(fake, service, harness_settings(fake)) as harness:
        yield harness


async def _paste(h: SlackHarness, text: str, channel: str = "C1") -> tuple[dict[str, Any], float]:
    sent = time.monotonic()
    await h.event(message_event(text, channel=channel))
    await h.wait_for(lambda: h.fake.posted(channel))
    posted_after = time.monotonic() - sent
    [posted] = h.fake.posted(channel)[-1:]
    return posted, posted_after


async def _updated(h: SlackHarness, ts: str, within: float = 5.0) -> str:
    await h.wait_for(lambda: any(c.body.get("ts") == ts for c in h.fake.calls("chat.update")), within)
    [update] = [c for c in h.fake.calls("chat.update") if c.body.get("ts") == ts]
    return json.dumps(update.body.get("blocks"), ensure_ascii=False)


@slurm
async def test_a_paste_naming_a_drained_node_shows_the_admins_reason(bot: SlackHarness, drained: str) -> None:
    bot.service.node_states = _cli_states()
    posted, _ = await _paste(bot, xid79(drained))
    assert "Scheduler, now" not in json.dumps(posted["blocks"])  # posted first, without waiting
    shown = await _updated(bot, posted["ts"])
    assert f"{drained}: drained · not responding · reason: bad GPU 3 (ticket 42) (set by root, at " in shown
    assert "Scheduler, now" in shown


@slurm
async def test_a_paste_naming_a_busy_node_shows_its_job_count(bot: SlackHarness, busy: str) -> None:
    rest = SlurmRest(REST_URL, REST_USER, TokenFile(TOKEN))
    bot.service.node_states = NodeStates(rest, 1.5, Metrics())
    posted, _ = await _paste(bot, xid79(busy))
    shown = await _updated(bot, posted["ts"])
    assert f"{busy}: " in shown and "job(s) running, 1 user(s)" in shown


@slurm
async def test_a_stopped_scheduler_is_not_reachable(
    bot: SlackHarness, stopped_conf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real client commands against a controller that is not there (its port closed)."""
    monkeypatch.setenv("SLURM_CONF", str(stopped_conf))
    metrics = Metrics()
    bot.service.node_states = NodeStates(SlurmCli(accounting=False), 1.5, metrics)
    posted, _ = await _paste(bot, xid79("gpu-a17"))
    shown = await _updated(bot, posted["ts"], within=8.0)
    assert "gpu-a17: scheduler not reachable" in shown


@pytest.mark.parametrize("behaviour", ["slow", "garbage"])
async def test_a_slow_or_garbled_scheduler_never_delays_the_reply(
    bot: SlackHarness, tmp_path: Path, behaviour: str
) -> None:
    """The same paste, with no scheduler and with one whose answer takes 10 s (or is garbage): the reply is
    posted as fast either way, and the node line says the scheduler is not reachable within its bound."""
    plain, plain_after = await _paste(bot, xid79("gpu-a17"), channel="C1")
    await bot.settle()  # its handler is done (it saw no scheduler)
    _script(tmp_path, "sinfo", "sleep 10" if behaviour == "slow" else "echo 'garbage|'")
    bot.service.node_states = _cli_states(str(tmp_path))
    started = time.monotonic()
    posted, posted_after = await _paste(bot, xid79("gpu-a17"), channel="C2")
    assert posted_after < plain_after + 1.0  # not later than without a scheduler
    shown = await _updated(bot, posted["ts"])
    assert time.monotonic() - started < 1.5 + 0.4 + 2.0  # the timeout, the thread hop, a margin
    assert "gpu-a17: scheduler not reachable" in shown
    assert not [c for c in bot.fake.calls("chat.update") if c.body.get("ts") == plain["ts"]]


def test_ci_starts_the_dev_cluster_the_tests_read() -> None:
    root = Path(__file__).resolve().parent.parent
    script = root / "deploy" / "slurm" / "dev-slurm.sh"
    assert script.stat().st_mode & stat.S_IXUSR and "REST_API=v0.0.38" in script.read_text(encoding="utf-8")
    ci = (root / ".ci" / "run").read_text(encoding="utf-8")
    assert "deploy/slurm/dev-slurm.sh" in ci and "TEST_SLURM_CONF" in ci
    assert "dev-slurm" in (root / "Makefile").read_text(encoding="utf-8") and shutil.which("bash")


def test_incident_nodes_carries_the_state_line() -> None:
    from bot.model.results import NodeEvent
    from bot.replies.nodes import nodes_reply

    event = NodeEvent(
        host="gpu-a17",
        case_id="IL-0415",
        failure_class="gpu-lost-gsp-nvlink",
        failed=True,
        channel="C1",
        ts="1.2",
        created_at=NOW,
    )
    state = NodeState(name="gpu-a17", state="draining", reason="Xid 79", reason_by="alice", jobs=2, users=("a", "b"))
    reply = nodes_reply([("gpu-a17", [event, event])], 14, ["en"], "C1", Lookup(states={"gpu-a17": state}))
    assert "gpu-a17: draining (jobs still running) · reason: Xid 79 (set by alice) · 2 job(s) running, 2 user(s)" in (
        reply.plain
    )
    down = nodes_reply([("gpu-a17", [event, event])], 14, ["en"], "C1", Lookup(error="unreachable"))
    assert "gpu-a17: scheduler not reachable" in down.plain
    assert "Scheduler" not in nodes_reply([("gpu-a17", [event, event])], 14, ["en"], "C1").plain


def test_actions_show_in_incident_nodes_app_home_and_the_digest_lines() -> None:
    from bot.model.nodestate import ActionRecord
    from bot.replies.drain import action_lines
    from bot.replies.nodes import nodes_reply

    done = ActionRecord("drain", "gpu-a17", "<!here> Xid 79", "U1", "C1", "1.1", "done", NOW, approved_by="U3")
    waiting = ActionRecord("drain", "gpu-a18", "limit", "U1", "C1", "1.2", "pending", NOW)
    [(md, plain)] = action_lines([done, waiting])
    assert plain == "gpu-a17: drained from Slack by U1 at 2026-11-30 01:00 UTC, approved by U3 (reason: <!here> Xid 79)"
    assert "<@U1>" in md and "<!here>" not in md and "&lt;!here&gt;" in md
    reply = nodes_reply([], 14, ["en"], "C1", None, [done, waiting])
    assert "Actions from Slack" in reply.plain and "gpu-a18" not in reply.plain
