"""Learning safely (the adversarial review's H2, M8 and lows): learning runs off the acknowledgement path,
examples can be deleted, retention holds without writes, node memory does not reach across channels,
drafts are one per form and one case per draft, and nothing from a paste or a draft reaches a log or a
terminal raw."""

from __future__ import annotations

import io
import json
import logging
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import NOW, run_cli_at
from slack_harness import HarnessSlack, SlackHarness, harness_settings

from bot.app.learning import Refresher
from bot.app.nodes import NodeMemory, Where
from bot.app.service import IncidentService
from bot.cli.main import main
from bot.library.case_store import CaseLibrary
from bot.model.case import Localized
from bot.model.results import Match, MatchResult, SuspectInfo, Tier
from bot.ops.clock import fixed
from bot.ops.logs import configure_logging
from bot.replies.stats import render_examples
from bot.storage import Storage
from bot.storage.base import ReplyRecord
from bot.storage.memory import MemoryStorage

NOVEL = "gpu-doctor: HBM bank 5 parity sweep failed on device 3, quarantine requested by node agent"


# -- the learner ------------------------------------------------------------------------------------------


def test_asking_for_a_refresh_returns_at_once_and_asks_fold_into_one_more_run() -> None:
    started, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def work() -> None:
        runs.append(len(runs))
        started.set()
        release.wait(10)

    learner = Refresher(work)
    before = time.monotonic()
    learner.request()
    assert started.wait(10)
    for _ in range(5):  # five votes while the first refresh runs
        learner.request()
    assert time.monotonic() - before < 1.0  # nobody waited for the work
    assert not learner.wait_idle(0.05)
    release.set()
    assert learner.wait_idle(10)
    assert len(runs) == 2  # the one running, and one more for everything asked meanwhile


def test_a_failing_refresh_is_logged_and_the_next_ask_runs_again(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []

    def work() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("storage went away")

    learner = Refresher(work)
    learner.request()
    assert learner.wait_idle(10)
    learner.request()
    assert learner.wait_idle(10)
    assert len(calls) == 2 and "example refresh failed" in caplog.text


def test_a_vote_stores_its_lines_and_the_index_follows_in_the_background(library: CaseLibrary) -> None:
    service = IncidentService(library, MemoryStorage(), now=fixed(NOW), deadline_s=20.0)
    service.refresh_examples(force=True)
    assert service.examples.confirm("IL-0414", [NOVEL], "U1", "C1", 1) == 1
    service.examples_changed()
    assert service.learner.wait_idle(15)
    assert [line.text for line in service.matcher.examples] == [NOVEL]


# -- deleting examples --------------------------------------------------------------------------------------


def test_forget_lists_and_deletes_for_reviewers_only(library: CaseLibrary) -> None:
    service = IncidentService(library, MemoryStorage(), now=fixed(NOW), deadline_s=20.0, reviewers=frozenset({"U7"}))
    service.examples.confirm("IL-0414", [NOVEL], "U1", "C1", 1)
    service.examples.confirm("IL-0414", [NOVEL], "U2", "C2", 2)
    service.refresh_examples(force=True)
    assert "REVIEWERS" in service.command("forget", user_id="U1", reviewer=False).plain
    listing = service.command("forget", user_id="U7", reviewer=True).plain
    [example] = service.examples.stored()[:1]
    assert f"#{example.id} IL-0414 (confirmed by 2)" in listing and NOVEL in listing
    assert "no confirmed example #999" in service.command("forget 999", user_id="U7", reviewer=True).plain.lower()
    done = service.command(f"forget {example.id}", user_id="U7", reviewer=True).plain
    assert f"Example #{example.id} of IL-0414 deleted (2 confirmation(s))" in done
    assert service.examples.stored() == []
    assert service.learner.wait_idle(15) and service.matcher.examples == []
    assert "Usage" in service.command("forget x1", user_id="U7", reviewer=True).plain


def test_examples_delete_on_the_command_line_reaches_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, library: CaseLibrary
) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DATABASE_URL", "CASES_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    run_cli_at(monkeypatch, NOW)
    from bot.storage import open_storage

    store = open_storage(f"sqlite:///{tmp_path / 'data' / 'incident-bot.sqlite3'}")
    store.migrate()
    store.add_examples("IL-0414", (NOVEL,), "U1", "C1", 1, NOW)
    [example] = store.list_examples(NOW - timedelta(days=1))
    store.close()
    capsys.readouterr()
    assert main(["examples", "delete", str(example.id)]) == 0
    assert f"deleted example #{example.id} of IL-0414" in capsys.readouterr().out
    assert main(["examples", "delete", str(example.id)]) == 1
    assert "no example" in capsys.readouterr().err


# -- retention without writes ---------------------------------------------------------------------------


def test_expired_examples_and_node_events_go_on_the_next_refresh_without_any_write(
    storage: Storage, library: CaseLibrary
) -> None:
    """The review's L5: nothing written after the retention passed, yet the rows are deleted (at start and
    on every reload check, at most hourly)."""
    old = NOW - timedelta(days=214)
    storage.add_examples("IL-0414", (NOVEL,), "U1", "C1", 1, old)
    storage.reject_examples("IL-0414", (NOVEL,), "U2", False, old)
    from bot.model.results import NodeEvent

    storage.add_node_events((NodeEvent("gpu-a17", "IL-0414", "gpu-memory-ecc", True, "C1", "1.1", old),), old)
    service = IncidentService(library, storage, now=fixed(NOW), deadline_s=20.0)
    service.refresh_examples()
    since = NOW - timedelta(days=3650)
    assert storage.list_examples(since) == [] and storage.list_rejections(since) == []
    assert storage.node_events(since) == []


# -- node memory across channels ----------------------------------------------------------------------------


def _failed(host: str) -> MatchResult:
    best = Match(
        case_id="IL-0414",
        title=Localized(en="x"),
        failure_class="gpu-memory-ecc",
        score=90,
        tier=Tier.STRONG,
        evidence=[],
    )
    suspects = SuspectInfo(summary=host, failed=True, hosts={host: 1})
    return MatchResult(matches=[best], reply=True, suspects=suspects)


def test_one_crash_cross_posted_to_two_channels_is_one_failure_and_links_stay_in_their_channel() -> None:
    """The review's L6."""
    clock = [NOW]
    memory = NodeMemory(MemoryStorage(), timedelta(days=7), timedelta(days=30), {}, lambda: clock[0])
    memory.remember(_failed("gpu-a17"), Where("C1", "1.1"))
    clock[0] += timedelta(seconds=30)
    memory.remember(_failed("gpu-a17"), Where("C2", "2.2"))
    assert [e.channel for e in memory.storage.node_events(NOW - timedelta(days=1))] == ["C1"]
    clock[0] += timedelta(days=1)  # a later failure, pasted in C2: the earlier one counts, unlinked
    history = memory.history(_failed("gpu-a17"), where=Where("C2", "3.3"))
    assert [(e.channel, e.ts) for e in history["gpu-a17"]] == [("C1", "")]
    same_channel = memory.history(_failed("gpu-a17"), where=Where("C1", "4.4"))
    assert [(e.channel, e.ts) for e in same_channel["gpu-a17"]] == [("C1", "1.1")]


# -- App Home ---------------------------------------------------------------------------------------------


def test_the_cases_matched_most_are_counted_by_the_database(storage: Storage) -> None:
    """The review's M8: App Home's counts come from one GROUP BY, not from every reply read into Python."""
    for n, cases in enumerate([("IL-0414",), ("IL-0427", "IL-0414"), ("IL-0414",), ("IL-0427",), ()]):
        storage.log_reply(ReplyRecord("C1", f"{n}.1", f"{n}.0", cases, "strong", NOW - timedelta(days=n)))
    storage.log_reply(ReplyRecord("C1", "9.1", "9.0", ("IL-0125",), "strong", NOW - timedelta(days=40)))
    assert storage.best_case_counts(NOW - timedelta(days=30), 10) == [("IL-0414", 2), ("IL-0427", 2)]
    assert storage.best_case_counts(NOW - timedelta(days=30), 1) == [("IL-0414", 2)]


# -- stats, logs and drafts -----------------------------------------------------------------------------


def test_stats_list_a_rejected_line_once_whoever_confirmed_it() -> None:
    """The review's L13."""
    store = MemoryStorage()
    for user in ("U1", "U2", "U3"):
        store.add_examples("IL-0414", (NOVEL,), user, "C1", 1, NOW)
    store.reject_examples("IL-0414", (NOVEL,), "U4", False, NOW)
    shown = render_examples(store.list_examples(NOW - timedelta(days=1)))
    rejected = shown.split("Not this case")[1]
    assert rejected.count(NOVEL[:100]) == 1 and "×1" in rejected


def test_the_sdks_request_bodies_are_not_logged_at_debug() -> None:
    """The review's L9: with LOG_LEVEL=DEBUG our debug lines appear; slack_sdk's request bodies do not."""
    stream = io.StringIO()
    configure_logging("DEBUG", "json")
    root = logging.getLogger()
    handler = root.handlers[0]
    handler.setStream(stream)  # type: ignore[attr-defined]
    try:
        logging.getLogger("slack_sdk.web.async_base_client").debug("Sending a request - json: {'text': 'SECRETLINE'}")
        logging.getLogger("incident_bot.test").debug("our own debug line")
    finally:
        configure_logging("INFO", "json")
    assert "our own debug line" in stream.getvalue() and "SECRETLINE" not in stream.getvalue()


def test_control_sequences_never_reach_a_draft(library: CaseLibrary) -> None:
    """The review's L14: a title that would retitle the terminal, move the cursor and hide text is stored
    as its words only."""
    service = IncidentService(library, MemoryStorage(), now=fixed(NOW), deadline_s=20.0)
    fields = {
        "title_en": "\x1b]0;owned-title\x07\x1b[1A\x1b[2KNVSwitch fails \x1b[8mhidden\x9b",
        "summary_en": "A summary\x00 with a NUL",
        "signatures": "NVSwitch fatal error on tray 4",
    }
    outcome = service.drafts.submit(fields, "U1", "C1", "", NOW, "form-1")
    assert outcome.draft_id is not None
    stored = service.storage.get_draft(outcome.draft_id)
    assert stored is not None
    assert (
        stored.fields["title_en"] == "NVSwitch fails hidden" and stored.fields["summary_en"] == "A summary with a NUL"
    )


def test_one_form_is_one_draft_and_one_draft_is_one_case(
    storage: Storage, library: CaseLibrary, tmp_path: Path
) -> None:
    """The review's L3: the same submission replayed stores one draft; a second export is refused."""
    service = IncidentService(library, storage, now=fixed(NOW), deadline_s=20.0)
    fields = {
        "title_en": "NVSwitch tray lost",
        "summary_en": "A tray lost heartbeat.",
        "signatures": "NVSwitch tray 4 lost heartbeat",
    }
    first = service.drafts.submit(fields, "U1", "C1", "", NOW, "form-abc")
    again = service.drafts.submit(fields, "U1", "C1", "", NOW, "form-abc")
    other = service.drafts.submit(fields, "U1", "C1", "", NOW, "form-def")
    assert first.draft_id is not None and again.draft_id == first.draft_id and other.draft_id != first.draft_id
    assert len(storage.list_drafts()) == 2
    path, case_id = service.drafts.export(first.draft_id, tmp_path / "cases", list(library.cases))
    assert path.exists()
    with pytest.raises(FileExistsError, match=f"already exported as {case_id}"):
        service.drafts.export(first.draft_id, tmp_path / "cases", list(library.cases))
    assert [p.name for p in (tmp_path / "cases").iterdir()] == [path.name]


# -- auto replies off, told to the channel --------------------------------------------------------------


async def test_turning_automatic_replies_off_is_told_to_the_channel(fake: HarnessSlack, library: CaseLibrary) -> None:
    """The review's L4: the channel sees who turned them off and how to turn them back on."""
    service = IncidentService(library, MemoryStorage(), now=fixed(NOW), deadline_s=20.0)
    async with SlackHarness(fake, service, harness_settings(fake)) as h:
        _, url = await h.command("auto off", user_id="U1ABC", channel_id="C1")
        await h.settle()
        [answer] = h.hook_calls(url)
        body: dict[str, Any] = answer.body
        assert body["response_type"] == "in_channel"
        said = json.dumps(body["blocks"])
        assert "<@U1ABC> turned automatic replies to pasted errors off" in said and "/incident auto on" in said
        assert service.storage.get_channel_auto("C1") is False
        _, url = await h.command("auto maybe", user_id="U1ABC", channel_id="C1")
        await h.settle()
        [usage] = h.hook_calls(url)
        assert usage.body["response_type"] == "ephemeral"  # a mistake stays private
