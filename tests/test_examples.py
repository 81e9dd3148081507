"""Confirmed answers teach the matcher: a Helpful vote (or "It was …") stores the paste's lines, redacted;
a near-copy of them is then a hint for that case, and proof once two people (or a reviewer) confirmed it.

End to end over signed Slack requests and the fake Web API, two replicas (two apps, one database) on
SQLite and PostgreSQL; pure parts (redaction, screening, strengths) below.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_harness import HarnessSlack, SlackHarness, harness_settings, message_event
from test_slack_interactive import buttons, click

from bot.app.service import IncidentService
from bot.cli.main import main
from bot.library.case_store import CaseLibrary
from bot.library.ordinary import ordinary_text
from bot.matching.examples import Confirmed, Ordinary, example_lines, redact, refusal
from bot.model.case import Strength
from bot.replies.buttons import ACTION_HELPFUL, ACTION_KEEP, ACTION_NOT_THIS, ACTION_OTHERS, ACTION_PICK
from bot.storage import Storage, open_storage

XID = "Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE (0x1)"
NOVEL = "gpu-doctor: HBM bank 5 parity sweep failed on device 3, quarantine requested by node agent"
PARAPHRASE = "gpu-doctor: HBM bank 2 parity sweep failed on device 7, quarantine requested by node agent"
PASTE = f"{XID}\n{NOVEL}\nok thanks\nKilled\n"
ORDINARY = Ordinary("\n".join(ordinary_text()))


class Clock:
    def __init__(self) -> None:
        self.value = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.value


class Replicas:
    """Two bots on one database: ``a`` and ``b``, each with its own service, app and port."""

    def __init__(self, a: SlackHarness, b: SlackHarness, clock: Clock) -> None:
        self.a, self.b, self.clock = a, b, clock

    def both(self) -> tuple[SlackHarness, SlackHarness]:
        return self.a, self.b


@pytest.fixture
async def replicas(fake: HarnessSlack, storage: Storage, library: CaseLibrary) -> AsyncIterator[Replicas]:
    clock = Clock()
    second = open_storage(storage.url)  # type: ignore[attr-defined]  # the SQL backend's URL: the same database
    settings = harness_settings(fake, CASES_RELOAD_SECONDS=1)

    def service(store: Storage) -> IncidentService:
        return IncidentService(library, store, deadline_s=20.0, now=clock)

    try:
        async with (
            SlackHarness(fake, service(storage), settings) as a,
            SlackHarness(fake, service(second), settings) as b,
        ):
            yield Replicas(a, b, clock)
    finally:
        second.close()


async def paste_and_vote(h: SlackHarness, channel: str, user: str, action: str = ACTION_HELPFUL) -> dict[str, Any]:
    """Paste ``PASTE`` in ``channel`` (the bot answers in the thread), click ``action`` as ``user``."""
    await h.event(message_event(PASTE, channel=channel, user=user))
    await h.settle()
    posted = h.fake.posted(channel)[-1]
    await h.wait_for(lambda: h.service.storage.reply_for_message(channel, posted["ts"]) is not None)
    [answer] = await click(
        h,
        action,
        buttons(posted["blocks"])[action],
        user=user,
        channel=channel,
        message_ts=posted["ts"],
        ephemeral=False,
    )
    return answer


async def explicit(h: SlackHarness, text: str, user: str = "U9") -> dict[str, Any]:
    _, url = await h.command(text, user_id=user)
    await h.settle()
    [answer] = h.hook_calls(url)
    body: dict[str, Any] = answer.body
    return body


def best_of(body: dict[str, Any]) -> str:
    return json.dumps(body["blocks"][0], ensure_ascii=False)


async def test_confirmations_teach_both_replicas(replicas: Replicas) -> None:
    a, b = replicas.both()
    before = await explicit(b, PARAPHRASE)
    assert "IL-0414" not in best_of(before) or "weak" in json.dumps(before)
    # U1 says the answer was right: the paste's lines are stored, redacted; chat and bare words are not.
    answer = await paste_and_vote(a, "C1", "U1")
    assert "now help recognise" in json.dumps(answer)
    stored = a.service.storage.list_examples(replicas.clock() - timedelta(days=1))
    lines = {e.line for e in stored}
    assert NOVEL in lines and not {"ok thanks", "Killed"} & lines
    assert all("gpu-a17" not in line for line in lines) and any("<host>" in line for line in lines)
    case_id = stored[0].case_id
    # Within the reload interval the other replica has it: a paraphrase is now a candidate, not a reply.
    await b.wait_for(lambda: bool(b.service.matcher.examples), within=15)  # the watcher's interval: 1 s
    result = b.service.match(PARAPHRASE)
    assert result.best is not None and result.best.case_id == case_id
    assert result.best.tier.value == "weak" and not result.reply
    assert result.best.evidence[0].kind == "example" and result.best.evidence[0].strength is Strength.SUPPORTING
    await b.event(message_event(PARAPHRASE, channel="C3", user="U3"))
    await b.settle()
    assert b.fake.posted("C3") == []  # one person's word is a hint: no unprompted reply
    # A second person confirms on the other replica: the line is proof now, on both (strong, never exact).
    await paste_and_vote(b, "C2", "U2")
    for h in (a, b):
        await h.wait_for(lambda h=h: h.service.match(PARAPHRASE).reply, within=15)  # type: ignore[misc]
        again = h.service.match(PARAPHRASE)
        assert again.best is not None and again.best.tier.value == "strong" and again.best.case_id == case_id
    await a.event(message_event(PARAPHRASE, channel="C4", user="U4"))
    await a.settle()
    [reply] = a.fake.posted("C4")
    assert case_id in reply["text"] and "close to a line people confirmed" in json.dumps(reply["blocks"])


async def test_not_this_case_withdraws_a_confirmation(replicas: Replicas) -> None:
    a, _ = replicas.both()
    await paste_and_vote(a, "C1", "U1")
    await paste_and_vote(a, "C2", "U2")
    since = replicas.clock() - timedelta(days=1)
    assert {e.user_id for e in a.service.storage.list_examples(since)} == {"U1", "U2"}
    assert a.service.match(PARAPHRASE).reply  # two people: proof
    posted = a.fake.posted("C1")[0]
    [again] = await click(
        a, ACTION_NOT_THIS, buttons(posted["blocks"])[ACTION_NOT_THIS], message_ts=posted["ts"], ephemeral=False
    )
    assert "withdrawn" in json.dumps(again)
    left = a.service.storage.list_examples(since)
    assert {e.user_id for e in left} == {"U2"} and all(e.rejections == 1 for e in left if e.line == NOVEL)
    assert not a.service.match(PARAPHRASE).reply  # back to one person's word: a hint


async def test_examples_expire(replicas: Replicas) -> None:
    a, _ = replicas.both()
    await paste_and_vote(a, "C1", "U1")
    assert a.service.matcher.examples
    replicas.clock.value += timedelta(days=91)
    assert a.service.refresh_examples()
    assert not a.service.matcher.examples and a.service.examples.stored() == []


async def test_nothing_is_kept_from_a_dm_unless_asked(replicas: Replicas) -> None:
    a, _ = replicas.both()
    answer = await paste_and_vote(a, "D123", "U1")
    assert "Nothing from a direct message is kept" in json.dumps(answer)
    assert a.service.examples.stored() == []
    [kept] = await click(a, ACTION_KEEP, buttons(answer["blocks"])[ACTION_KEEP], channel="D123", ephemeral=True)
    assert "now help recognise" in kept["text"]
    assert {e.channel for e in a.service.examples.stored()} == {"D123"}


async def test_it_was_this_one_confirms_a_runner_up(replicas: Replicas) -> None:
    a, _ = replicas.both()
    await a.event(message_event(PASTE, channel="C1", user="U1"))
    await a.settle()
    posted = a.fake.posted("C1")[-1]
    await a.wait_for(lambda: a.service.storage.reply_for_message("C1", posted["ts"]) is not None)
    [others] = await click(
        a, ACTION_OTHERS, buttons(posted["blocks"])[ACTION_OTHERS], message_ts=posted["ts"], ephemeral=False
    )
    picks = buttons(others["blocks"])
    assert ACTION_PICK in picks
    [picked] = await click(a, ACTION_PICK, picks[ACTION_PICK], ephemeral=True)
    assert "noted as the answer" in picked["text"]
    chosen = {e.case_id for e in a.service.examples.stored()}
    best = a.service.storage.reply_for_message("C1", posted["ts"])
    assert best is not None and chosen and chosen.isdisjoint(best.case_ids[:1])
    # Forged or moved values store nothing.
    before = len(a.service.examples.stored())
    for forged in [
        '{"v":1,"c":"IL-0427","l":"en","r":1,"x":["forged line that failed badly here"]}',
        picks[ACTION_PICK],
    ]:
        [answer] = await click(a, ACTION_PICK, forged, channel="C9", user="U5", ephemeral=True)
        assert "no longer valid" in answer["text"]
    assert len(a.service.examples.stored()) == before


# -- pure parts -------------------------------------------------------------------------------------------


def test_redaction_removes_credentials_addresses_and_hosts() -> None:
    line = (
        "POST https://bob:hunter2@repo.example.com/x Authorization: Bearer abcdefghijklmnop from alice@corp.com"
        " on gpu-a17.cluster.corp.com 10.1.2.3 token=s3cr3t xoxb-1234567890-abcdef ghp_" + "a" * 36
    )
    clean = redact(line, ["gpu-b07"])
    for secret in (
        "hunter2",
        "abcdefghijklmnop",
        "alice@corp.com",
        "gpu-a17.cluster",
        "10.1.2.3",
        "s3cr3t",
        "xoxb-",
        "ghp_",
    ):
        assert secret not in clean, secret
    assert redact("NCCL WARN on gpu-b07: timeout", ["gpu-b07"]) == "NCCL WARN on <host>: timeout"


@pytest.mark.parametrize("line", ["ok thanks", "Killed", "thanks everyone, the training job is running fine now"])
def test_chat_and_bare_words_never_become_examples(line: str) -> None:
    assert refusal(line, ORDINARY) is not None
    assert example_lines([Confirmed("IL-0427", line, u) for u in ("U1", "U2", "U3")], ORDINARY) == []


def test_an_ordinary_line_is_refused_even_when_it_mentions_an_error() -> None:
    chat, _ = ordinary_text()
    errorish = next(line for line in chat.splitlines() if "error" in line.lower() and len(line) >= 25)
    assert refusal(errorish, ORDINARY) == "too close to ordinary chat or a healthy log line"


def test_two_people_or_a_reviewer_make_a_line_decisive() -> None:
    one = example_lines([Confirmed("IL-0427", NOVEL, "U1")], ORDINARY)
    two = example_lines([Confirmed("IL-0427", NOVEL, "U1"), Confirmed("IL-0427", NOVEL, "U2")], ORDINARY)
    staff = example_lines([Confirmed("IL-0427", NOVEL, "U7")], ORDINARY, reviewers={"U7"})
    assert [line.strength for line in one] == [Strength.SUPPORTING]
    assert [line.strength for line in two] == [Strength.DECISIVE] == [line.strength for line in staff]
    # The same person twice is still one person.
    again = example_lines([Confirmed("IL-0427", NOVEL, "U1"), Confirmed("IL-0427", NOVEL, "U1")], ORDINARY)
    assert [line.strength for line in again] == [Strength.SUPPORTING]


def test_examples_list_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DATABASE_URL", "CASES_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    store = open_storage(f"sqlite:///{tmp_path / 'data' / 'incident-bot.sqlite3'}")
    store.migrate()
    now = datetime.now(UTC)
    store.add_examples("IL-0427", (NOVEL,), "U1", "C1", 7, now)
    store.add_examples("IL-0427", (NOVEL,), "U2", "C2", 8, now)
    store.reject_examples("IL-0427", (NOVEL,))
    store.close()
    assert main(["examples", "list", "--case", "IL-0427", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [e["user_id"] for e in listed] == ["U1", "U2"] and listed[0]["rejections"] == 1
    assert main(["examples", "export", "--dir", str(tmp_path / "review")]) == 0
    manifest = (tmp_path / "review" / "manifest.tsv").read_text(encoding="utf-8").splitlines()
    assert len(manifest) == 3 and manifest[1].startswith("confirmed-il-0427-reply7.txt\tIL-0427\tdev")
    assert (tmp_path / "review" / "pastes" / "confirmed-il-0427-reply7.txt").read_text() == NOVEL + "\n"
    assert main(["stats"]) == 0
    report = capsys.readouterr().out
    assert "Confirmed examples: 2 line(s) for 1 case(s)" in report and "×2" not in report
    assert "Examples that keep getting Not this case" in report and "IL-0427" in report
