"""Remember the nodes: a host that failed before is named, with its earlier threads, before the next job lands
on it; a host that only reported a collective timeout is never counted; ``nodes``, App Home and the digest.

End to end over signed Slack requests and the fake Web API, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli_at
from fake_slack import FakeSlack
from instants import Instant, every_instant
from slack_harness import HarnessSlack, SlackHarness, harness_settings, message_event
from test_slack_interactive import buttons, click

from bot.app.nodes import NodeMemory, Where, parse_aliases
from bot.app.service import IncidentService
from bot.cli.main import main
from bot.digest.runner import DigestParams, DigestRunner, RetryPolicy, digest_client
from bot.library.case_store import CaseLibrary
from bot.model.results import MatchResult, NodeEvent, SuspectInfo
from bot.replies.buttons import ACTION_LANG
from bot.storage import Storage
from bot.storage.memory import MemoryStorage

ECC = (
    "Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE (0x1)\n"
    "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
)
XID79 = (
    "Mar  5 11:40:02 GPU-A17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, "
    "GPU has fallen off the bus.\n"
)
WATCHDOG = (
    "gpu-a17: [rank3]:[E1120 14:02:11.123 ProcessGroupNCCL.cpp:1595] [PG 0 Rank 3] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
    "600012 milliseconds before timing out.\n"
)


class Clock:
    def __init__(self) -> None:
        self.value = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)  # Monday 10:00 KST

    def __call__(self) -> datetime:
        return self.value


@pytest.fixture
async def h(fake: HarnessSlack, storage: Storage, library: CaseLibrary) -> AsyncIterator[tuple[SlackHarness, Clock]]:
    clock = Clock()
    service = IncidentService(library, storage, deadline_s=20.0, now=clock)
    async with SlackHarness(fake, service, harness_settings(fake)) as harness:
        yield harness, clock


async def paste(h: SlackHarness, text: str, channel: str, user: str = "U1") -> dict[str, Any]:
    event = message_event(text, channel=channel, user=user)
    await h.event(event)
    await h.settle()
    [posted] = h.fake.posted(channel)[-1:]
    return {**posted, "answered": event["ts"]}


async def test_a_node_that_failed_before_is_named_with_its_thread(
    h: tuple[SlackHarness, Clock], storage: Storage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    harness, clock = h
    first = await paste(harness, ECC, "C1")
    assert "failed 2 times" not in json.dumps(first["blocks"])
    clock.value += timedelta(days=1)
    second = await paste(harness, XID79, "C2")
    shown = json.dumps(second["blocks"], ensure_ascii=False)
    link = f"https://slack.com/archives/C1/p{first['answered'].replace('.', '')}"
    # Counted, but not linked: C2's readers get no link into C1 (it may be private).
    assert "gpu-a17 failed 2 times since Mon 30 Nov" in shown and "slack.com/archives/C1" not in shown
    assert "gpu-memory-ecc ×1" in shown and "gpu-lost-gsp-nvlink ×1" in shown
    do_now = next(b["text"]["text"] for b in second["blocks"] if "Do now" in b.get("text", {}).get("text", ""))
    assert do_now.split("\n")[1].lower().startswith("1. drain") or "state=drain" in do_now.split("\n")[2]
    # The language switch draws it again Korean first: the same repeat line (not counting itself), the drain
    # step still first.
    await harness.wait_for(lambda: storage.reply_for_message("C2", second["ts"]) is not None)
    value = buttons(second["blocks"])[ACTION_LANG]
    [switched] = await click(harness, ACTION_LANG, value, channel="C2", message_ts=second["ts"], ephemeral=False)
    again = json.dumps(switched["blocks"], ensure_ascii=False)
    assert "gpu-a17: 11월 30일 이후 2번 실패" in again and link not in again and "3번 실패" not in again
    sections = [b["text"]["text"] for b in switched["blocks"] if b["type"] == "section"]
    assert any(text.lower().startswith("실패 노드 gpu-a17") for text in sections), sections  # in Korean too
    korean_do_now = next(
        b["text"]["text"] for b in switched["blocks"] if "지금 할 일" in b.get("text", {}).get("text", "")
    )
    assert "state=drain" in korean_do_now.split("\n")[2]
    # A third paste where the host only reports a collective timeout: answered, but not counted.
    clock.value += timedelta(hours=1)
    third = await paste(harness, WATCHDOG, "C3")
    said_third = json.dumps(third["blocks"])
    assert "failed 3 times" not in said_third and "gpu-a17 failed 2 times" in said_third  # named, not counted
    events = storage.node_events(clock() - timedelta(days=7), ("gpu-a17",))
    assert [e.failed for e in events] == [False, True, True]
    # incident-bot nodes --json reads the same database.
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "CASES_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATABASE_URL", storage.url)  # type: ignore[attr-defined]
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    run_cli_at(monkeypatch, clock())  # the CLI at the harness's instant
    assert main(["nodes", "--json", "--days", "3650"]) == 0
    [host] = json.loads(capsys.readouterr().out)
    assert host["host"] == "gpu-a17" and host["failures"] == 2
    assert set(host["cases"]) == {second_case(second), first_case(first)}
    assert host["events"][-1]["link"] == link
    # /incident nodes and App Home show it too.
    _, url = await harness.command("nodes")
    await harness.settle()
    [answer] = harness.hook_calls(url)
    said = json.dumps(answer.body, ensure_ascii=False)
    assert "gpu-a17* ×2 · IL-0415, IL-0414" in said and link in said
    # A later failure of the same node, then the second answer drawn again: it shows the history as it was
    # when that answer was made, not what happened after it.
    clock.value += timedelta(days=1)
    await paste(harness, XID79, "C4")
    [redrawn] = await click(harness, ACTION_LANG, value, channel="C2", message_ts=second["ts"], ephemeral=False)
    later = json.dumps(redrawn["blocks"], ensure_ascii=False)
    assert "gpu-a17: 11월 30일 이후 2번 실패" in later and "3번 실패" not in later and "C4" not in later


def first_case(posted: dict[str, Any]) -> str:
    return str(posted["text"].split(" ")[0])


second_case = first_case


def test_window_aliases_and_reporters(tmp_path: Path) -> None:
    clock = Clock()
    storage = MemoryStorage()
    aliases = parse_aliases("n7=gpu-b07,gpu-b07.cluster.example.com=gpu-b07")
    memory = NodeMemory(storage, timedelta(days=14), timedelta(days=90), aliases, clock)
    assert memory.canonical("GPU-B07.cluster.example.com") == "gpu-b07" and memory.canonical("n7") == "gpu-b07"
    assert memory.canonical("gpu-b07.other.example") == "gpu-b07.other.example"  # as written, unless aliased
    assert memory.canonical("10.0.0.7") == "10.0.0.7"
    apart = NodeMemory(
        storage, timedelta(days=14), timedelta(days=90), parse_aliases("gpu-a1.dc2.example=gpu-a1-dc2"), clock
    )
    assert (
        apart.canonical("gpu-a1.dc2.example") == "gpu-a1-dc2"
        and apart.canonical("gpu-a1.dc1.example") == "gpu-a1.dc1.example"
    )

    result = _result
    memory.remember(result("n7"), Where("C1", "1.1"))
    clock.value += timedelta(days=15)  # outside the 14-day window
    assert memory.history(result("gpu-b07")) == {}
    memory.remember(result("gpu-b07.cluster.example.com"), Where("C2", "2.2"))
    clock.value += timedelta(days=1)
    assert [e.channel for e in memory.history(result("GPU-B07"))["gpu-b07"]] == ["C2"]
    # A reporter is looked up (its earlier failures are named), and its own paste never counts.
    assert [e.channel for e in memory.history(result("gpu-b07", failed=False))["gpu-b07"]] == ["C2"]
    memory.remember(result("gpu-b07", failed=False), Where("C3", "3.3"))
    assert [e.channel for e in memory.history(result("gpu-b07"))["gpu-b07"]] == ["C2"]


async def test_the_digest_names_repeat_nodes_once(
    fake_slack: FakeSlack, storage: Storage, library: CaseLibrary
) -> None:
    slot = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)  # Monday 09:00 KST
    clock = Clock()
    clock.value = slot + timedelta(minutes=5)
    service = IncidentService(library, storage, now=clock)
    in_week = slot - timedelta(days=2)

    def event(host: str, at: datetime, failed: bool = True) -> NodeEvent:
        ts = f"{at.timestamp():.0f}.{len(host)}{int(failed)}"  # one message per failure
        return NodeEvent(host, "IL-0414", "gpu-memory-ecc", failed, "C1", ts, at)

    storage.add_node_events(
        (
            event("gpu-a17", in_week),
            event("gpu-a17", in_week + timedelta(hours=3)),
            event("gpu-b01", in_week),  # once: not repeated
            event("gpu-c02", in_week),
            event("gpu-c02", in_week, failed=False),  # a reporter does not count
            event("gpu-d03", slot - timedelta(days=8)),  # the week before
            event("gpu-d03", in_week),
        ),
        slot - timedelta(days=90),
    )
    params = DigestParams(lease_seconds=30, retry=RetryPolicy(attempts=2, base_seconds=0.01, max_seconds=0.02))

    def runner() -> DigestRunner:
        return DigestRunner(
            storage,
            digest_client("xoxb-test", fake_slack.base_url),
            "CDIGEST",
            params,
            cases=list,
            clock=clock,
            nodes=service.digest_nodes,
        )

    first = await runner().run_due(clock())
    again = await runner().run_due(clock())
    posts = fake_slack.posted("CDIGEST")
    assert first.status == "posted" and again.status != "posted" and len(posts) == 1
    text = json.dumps(posts[0]["blocks"])
    assert "Nodes that failed more than once this week" in text and "gpu-a17" in text
    assert "gpu-b01" not in text and "gpu-c02" not in text and "gpu-d03" not in text
    # A week with no repeated node posts nothing (no case either).
    clock.value += timedelta(days=7)
    quiet = await runner().run_due(clock())
    assert quiet.status != "posted" and len(fake_slack.posted("CDIGEST")) == 1
    await asyncio.sleep(0)


def test_app_home_lists_repeat_nodes(library: CaseLibrary) -> None:
    from bot.app.feedback import FeedbackService

    clock = Clock()
    service = IncidentService(library, MemoryStorage(), now=clock)
    at = clock() - timedelta(days=1)
    events = tuple(NodeEvent("gpu-a17", "IL-0414", "gpu-memory-ecc", True, "C1", f"{n}.1", at) for n in (1, 2))
    service.storage.add_node_events(events, at - timedelta(days=90))
    view = json.dumps(FeedbackService(service).home_view(("en", "ko")), ensure_ascii=False)
    assert "Nodes that failed more than once" in view and "gpu-a17* ×2" in view


def test_the_digest_preview_shows_the_nodes_part_the_runner_will_post(library: CaseLibrary) -> None:
    clock = Clock()  # Monday 10:00 KST: the 09:00 slot's digest is due
    service = IncidentService(library, MemoryStorage(), now=clock)
    at = clock() - timedelta(days=2)
    events = tuple(NodeEvent("gpu-a17", "IL-0414", "gpu-memory-ecc", True, "C1", f"{n}.1", at) for n in (1, 2))
    service.storage.add_node_events(events, at - timedelta(days=90))
    plan = service.digest_plan()
    assert plan.due and plan.nodes[0][1].startswith("gpu-a17 ×2")
    [part] = plan.messages(("en", "ko"), post_empty=False)  # no case this week: the nodes part alone
    assert "Nodes that failed more than once this week" in json.dumps(part.blocks)


def test_a_message_answered_again_counts_once() -> None:
    """A mention in the thread of an answered paste, or the shortcut on it, answers the same message again:
    still one failure of that host, and rows stored twice by an older version are counted once."""
    clock = Clock()
    storage = MemoryStorage()
    memory = NodeMemory(storage, timedelta(days=14), timedelta(days=90), {}, clock)
    failed = _result("gpu-c01")
    memory.remember(failed, Where("C1", "1.1"))
    memory.remember(failed, Where("C1", "1.1"))
    assert len(storage.node_events(clock() - timedelta(days=1))) == 1
    assert [e.ts for e in memory.history(failed)["gpu-c01"]] == ["1.1"]
    assert memory.history(failed, where=Where("C1", "1.1")) == {}  # answering 1.1 again: not an earlier one
    assert memory.repeated() == []
    [event] = storage.node_events(clock() - timedelta(days=1))
    storage.add_node_events((event,), clock() - timedelta(days=90))  # as an older version stored it
    assert len(memory.history(failed)["gpu-c01"]) == 1 and memory.repeated() == []
    clock.value += timedelta(hours=1)
    memory.remember(failed, Where("C1", "2.2"))  # a new paste: a second failure
    assert [h for h, _ in memory.repeated()] == ["gpu-c01"]


def _result(host: str, failed: bool = True) -> MatchResult:
    """An exact IL-0414 match whose suspects name ``host`` (as failed, or as a reporter)."""
    from bot.model.case import Localized
    from bot.model.results import Match, Tier

    best = Match(
        case_id="IL-0414",
        title=Localized(en="x"),
        failure_class="gpu-memory-ecc",
        score=90,
        tier=Tier.EXACT,
        evidence=[],
    )
    return MatchResult(matches=[best], reply=True, suspects=SuspectInfo(failed=failed, summary="", hosts={host: 1}))


def test_old_events_are_purged_and_days_must_be_positive(tmp_path: Path, capsys: Any) -> None:
    clock = Clock()
    storage = MemoryStorage()
    memory = NodeMemory(storage, timedelta(days=14), timedelta(days=30), {}, clock)
    memory.remember(_result("gpu-e05"), Where("C1", "1.1"))
    clock.value += timedelta(days=31)  # past NODE_RETENTION_DAYS: the next write purges it
    memory.remember(_result("gpu-e06"), Where("C1", "2.2"))
    assert [e.host for e in storage.node_events(clock() - timedelta(days=365))] == ["gpu-e06"]
    with pytest.raises(SystemExit) as exited:
        main(["nodes", "--days", "0"])
    assert exited.value.code == 2 and "must be from 1 to 3650" in capsys.readouterr().err


def test_a_kubernetes_cordon_comes_first_for_a_node_that_failed_before(library: CaseLibrary) -> None:
    from bot.replies.first import chosen_steps

    for case in library.cases.values():
        drains = [s for s in case.runbook if s.command and "kubectl cordon" in s.command]
        if drains and case.runbook[0] is not drains[0]:
            assert chosen_steps(case, {"node": "n1"}, drain_first=True)[0] is drains[0]
            return
    pytest.fail("no case with a kubectl cordon step after its first step")


async def test_a_repeat_inside_the_noise_window_is_answered_and_asking_again_counts_once(
    h: tuple[SlackHarness, Clock], storage: Storage
) -> None:
    """IL-0427's own story: the next job lands on the same node and dies twenty minutes later. The noise
    window would keep the same case quiet in that channel; a host that failed before is news, so it is
    answered. Another host's paste kept quiet by the window is still remembered, and asking about a paste
    again with /incident is not a new failure."""
    harness, clock = h
    await paste(harness, ECC, "C1")
    clock.value += timedelta(minutes=2)  # someone else pastes the same crash: one failure, kept quiet
    await harness.event(message_event(ECC, channel="C1", user="U2"))
    await harness.settle()
    assert len(harness.fake.posted("C1")) == 1
    clock.value += timedelta(minutes=18)
    await harness.event(message_event(ECC, channel="C1"))
    await harness.settle()
    again = harness.fake.posted("C1")
    assert len(again) == 2 and "gpu-a17 failed 2 times" in json.dumps(again[-1]["blocks"])
    other = ECC.replace("gpu-a17", "gpu-b01")
    await harness.event(message_event(other, channel="C1"))
    await harness.settle()
    assert len(harness.fake.posted("C1")) == 2  # kept quiet by the window…
    assert [e.host for e in storage.node_events(clock() - timedelta(days=1), ("gpu-b01",))] == ["gpu-b01"]  # …kept
    for _ in range(2):  # the same paste asked about privately, twice: one failure, never "2 times"
        _, url = await harness.command(other.replace("\n", " "))
        await harness.settle()
        [answer] = harness.hook_calls(url)
        assert "gpu-b01 failed" not in json.dumps(answer.body)
    assert len(storage.node_events(clock() - timedelta(days=1), ("gpu-b01",))) == 1


@pytest.mark.parametrize("instant", every_instant())
def test_nodes_json_lists_the_gpu_and_hosts_newest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, instant: Instant
) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "CASES_DIR", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    from bot.storage import open_storage

    store = open_storage(f"sqlite:///{tmp_path / 'data' / 'incident-bot.sqlite3'}")
    store.migrate()
    now = run_cli_at(monkeypatch, instant.at)

    def failed(host: str, ts: str, hours_ago: int) -> NodeEvent:
        at = now - timedelta(hours=hours_ago)
        return NodeEvent(host, "IL-0414", "gpu-memory-ecc", True, "C1", ts, at, "0000:3b:00", "5")

    events = (failed("gpu-old", "1.1", 50), failed("gpu-old", "1.2", 40), failed("gpu-new", "2.1", 3))
    store.add_node_events((*events, failed("gpu-new", "2.2", 1)), now - timedelta(days=90))
    store.close()
    assert main(["nodes", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [h["host"] for h in listed] == ["gpu-new", "gpu-old"]
    assert listed[0]["events"][0]["pci"] == "0000:3b:00" and listed[0]["events"][0]["gpu"] == "5"
