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
from conftest import NOW, run_cli_at
from instants import Instant, every_instant
from slack_harness import HarnessSlack, SlackHarness, harness_settings, message_event
from test_slack_interactive import buttons, click

from bot.app.service import IncidentService
from bot.cli.main import main
from bot.library.case_store import CaseLibrary
from bot.library.ordinary import ordinary_text
from bot.matching.examples import (
    Confirmed,
    Ordinary,
    example_lines,
    lines_to_keep,
    looks_like_error,
    refusal,
    resembles,
)
from bot.matching.redaction import redact
from bot.model.case import Localized, Strength
from bot.model.results import Evidence, Match, MatchResult, Tier
from bot.ops.clock import fixed
from bot.replies.buttons import ACTION_HELPFUL, ACTION_KEEP, ACTION_NOT_THIS, ACTION_OTHERS, ACTION_PICK
from bot.storage import Storage, open_storage
from bot.storage.memory import MemoryStorage

XID = "Mar  4 10:12:01 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE (0x1)"
NOVEL = "gpu-doctor: HBM bank 5 parity sweep failed on device 3, quarantine requested by node agent"
PARAPHRASE = "gpu-doctor: HBM bank 2 parity sweep failed on device 7, quarantine requested by node agent"
PASTE = f"{XID}\n{NOVEL}\nok thanks\nKilled\n"
# NOVEL in other words (not a byte-identical line): the matcher still takes it as a near-copy.
REWORDED = "gpu-doctor: HBM bank 2 parity sweep failed on device 7, quarantine requested by the node agent"
ORDINARY = Ordinary("\n".join(ordinary_text()))


def SCREEN(line: str) -> bool:
    return refusal(line, ORDINARY) is None


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


async def answered_paste(h: SlackHarness, channel: str, user: str, text: str = PASTE) -> dict[str, Any]:
    """Paste ``text`` in ``channel``; the bot's answer once the reply log holds it."""
    await h.event(message_event(text, channel=channel, user=user))
    await h.settle()
    posted: dict[str, Any] = h.fake.posted(channel)[-1]
    await h.wait_for(lambda: h.service.storage.reply_for_message(channel, posted["ts"]) is not None)
    return posted


async def paste_and_vote(
    h: SlackHarness, channel: str, user: str, action: str = ACTION_HELPFUL, text: str = PASTE
) -> dict[str, Any]:
    """Paste ``text`` in ``channel`` (the bot answers in the thread), click ``action`` as ``user``; then wait
    until the example index has caught up (votes refresh it in the background)."""
    posted = await answered_paste(h, channel, user, text)
    [answer] = await click(
        h,
        action,
        buttons(posted["blocks"])[action],
        user=user,
        channel=channel,
        message_ts=posted["ts"],
        ephemeral=False,
    )
    assert h.service.learner.wait_idle(15)
    return answer


async def teach(h: SlackHarness, channel: str, user: str, line: str = NOVEL) -> None:
    """``user`` answers PASTE in ``channel`` and ``line`` is confirmed for IL-0414 on that reply, as a
    confirmation stores a line that proved its answer (a vote stores only those: PASTE's NOVEL is not one)."""
    posted = await answered_paste(h, channel, user)
    record = h.service.storage.reply_for_message(channel, posted["ts"])
    assert record is not None and record.id is not None
    assert h.service.examples.confirm("IL-0414", [line], user, channel, record.id) == 1
    h.service.examples_changed()
    assert h.service.learner.wait_idle(15)


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
    # U1 says the answer was right: only the line that proved it is stored, redacted; NOVEL, the chat and
    # the bare words in the same paste are not (they proved nothing).
    answer = await paste_and_vote(a, "C1", "U1")
    assert "now help recognise" in json.dumps(answer)
    stored = a.service.storage.list_examples(replicas.clock() - timedelta(days=1))
    assert [e.line for e in stored] == [XID.replace("gpu-a17", "<host>")]
    case_id = stored[0].case_id
    # A line that proved an answer (here NOVEL, confirmed for that reply) teaches both replicas.
    record = a.service.storage.reply_for_message("C1", a.fake.posted("C1")[-1]["ts"])
    assert record is not None and record.id is not None
    assert a.service.examples.confirm(case_id, [NOVEL], "U1", "C1", record.id) == 1
    a.service.examples_changed()
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
    await teach(b, "C2", "U2")
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
    await teach(a, "C1", "U1")
    await teach(a, "C2", "U2")
    since = replicas.clock() - timedelta(days=1)
    assert {e.user_id for e in a.service.storage.list_examples(since)} == {"U1", "U2"}
    assert a.service.match(PARAPHRASE).reply  # two people: proof
    posted = a.fake.posted("C1")[0]
    [again] = await click(
        a, ACTION_NOT_THIS, buttons(posted["blocks"])[ACTION_NOT_THIS], message_ts=posted["ts"], ephemeral=False
    )
    assert "withdrawn" in json.dumps(again)
    assert a.service.learner.wait_idle(15)
    left = a.service.storage.list_examples(since)
    # Matched now, the rejected paste's NOVEL is example evidence for the case: U1's rejection counts.
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
    posted = await answered_paste(a, "C1", "U1")
    [others] = await click(
        a, ACTION_OTHERS, buttons(posted["blocks"])[ACTION_OTHERS], message_ts=posted["ts"], ephemeral=False
    )
    picks = buttons(others["blocks"])
    pick = f"{ACTION_PICK}:0"  # one per runner-up: pick_case:0, pick_case:1, …
    assert pick in picks
    [picked] = await click(a, pick, picks[pick], ephemeral=True)
    assert "noted as the answer" in picked["text"]
    chosen = {e.case_id for e in a.service.examples.stored()}
    best = a.service.storage.reply_for_message("C1", posted["ts"])
    assert best is not None and chosen and chosen.isdisjoint(best.case_ids[:1])
    # Forged or moved values store nothing.
    before = len(a.service.examples.stored())
    for forged in [
        '{"v":1,"c":"IL-0427","l":"en","r":1,"x":["forged line that failed badly here"]}',
        picks[pick],
    ]:
        [answer] = await click(a, pick, forged, channel="C9", user="U5", ephemeral=True)
        assert "no longer valid" in answer["text"]
    assert len(a.service.examples.stored()) == before


async def test_not_this_case_counts_against_the_example_that_made_the_answer(replicas: Replicas) -> None:
    a, _ = replicas.both()
    await teach(a, "C1", "U1")
    await teach(a, "C2", "U2")
    # A reworded paste is answered unprompted because of the confirmed line (its evidence is the example) ...
    await a.event(message_event(REWORDED, channel="C4", user="U3"))
    await a.settle()
    [posted] = a.fake.posted("C4")
    await a.wait_for(lambda: a.service.storage.reply_for_message("C4", posted["ts"]) is not None)
    result = a.service.match(REWORDED)
    assert result.best is not None and result.best.evidence[0].kind == "example"
    assert not resembles(XID, REWORDED) and REWORDED not in {e.line for e in a.service.examples.stored()}
    # ... and U3 says it is not that case: the rejection counts against that example (NOVEL, confirmed by
    # U1 and U2), though the paste never had the stored line byte for byte; the other stored line is spared.
    [ack] = await click(
        a,
        ACTION_NOT_THIS,
        buttons(posted["blocks"])[ACTION_NOT_THIS],
        user="U3",
        channel="C4",
        message_ts=posted["ts"],
        ephemeral=False,
    )
    assert "not this case" in json.dumps(ack).lower()
    rejected = {(e.user_id, e.line): e.rejections for e in a.service.examples.stored()}
    assert rejected == {("U1", NOVEL): 1, ("U2", NOVEL): 1}


async def rejected_by(h: SlackHarness, channel: str, user: str) -> bool:
    """REWORDED pasted in ``channel``: True when it was answered unprompted; then ``user`` says "Not this
    case" on that answer."""
    await h.event(message_event(REWORDED, channel=channel, user=user))
    await h.settle()
    posted = h.fake.posted(channel)
    if not posted:
        return False
    await h.wait_for(lambda: h.service.storage.reply_for_message(channel, posted[0]["ts"]) is not None)
    await click(
        h,
        ACTION_NOT_THIS,
        buttons(posted[0]["blocks"])[ACTION_NOT_THIS],
        user=user,
        channel=channel,
        message_ts=posted[0]["ts"],
        ephemeral=False,
    )
    assert h.service.learner.wait_idle(15)
    return True


async def test_rejections_by_different_people_demote_then_drop_an_example(replicas: Replicas) -> None:
    """The review's H1: an example two people confirmed answers unprompted until people say it is wrong.
    One rejection is one person's word; two people's make it a hint (no unprompted reply); three drop it."""
    a, b = replicas.both()
    await teach(a, "C1", "U1")
    await teach(a, "C2", "U2")
    assert await rejected_by(a, "C4", "U3")  # one person: still proof
    assert await rejected_by(a, "C5", "U3")  # the same person again is still one person
    assert await rejected_by(a, "C6", "U4")  # a second person: a hint from now on
    assert not await rejected_by(a, "C7", "U5")  # no unprompted reply any more
    hint = a.service.match(REWORDED).best
    assert hint is not None and hint.tier.value == "weak" and hint.evidence[0].kind == "example"
    # The other replica sees it too, on its next check.
    await b.wait_for(lambda: not b.service.match(REWORDED).reply, within=15)
    # A third person's rejection (of an answer the hint helped make, elsewhere) drops it: not even a hint.
    assert any(line.text == NOVEL for line in a.service.matcher.examples)
    a.service.examples.withdraw("IL-0414", [REWORDED], "U5", 1)
    a.service.examples_changed()
    assert a.service.learner.wait_idle(15)
    assert all(line.text != NOVEL for line in a.service.matcher.examples)
    assert {e.rejections for e in a.service.examples.stored()} == {3}  # people, each counted once


async def test_one_reviewers_rejection_drops_an_example(
    fake: HarnessSlack, storage: Storage, library: CaseLibrary
) -> None:
    service = IncidentService(library, storage, now=fixed(NOW), deadline_s=20.0, reviewers=frozenset({"U7"}))
    async with SlackHarness(fake, service, harness_settings(fake, CASES_RELOAD_SECONDS=1)) as h:
        await teach(h, "C1", "U1")
        await teach(h, "C2", "U2")
        assert service.match(REWORDED).reply
        assert await rejected_by(h, "C4", "U7")
        assert all(line.text != NOVEL for line in service.matcher.examples)
        assert not service.match(REWORDED).reply


async def test_forged_or_moved_helpful_values_store_nothing(replicas: Replicas) -> None:
    a, _ = replicas.both()
    posted = await answered_paste(a, "C1", "U1")
    value = buttons(posted["blocks"])[ACTION_HELPFUL]
    body, _, tag = value.rpartition("~")
    forged = json.loads(body)
    other = "IL-0427" if forged["c"] != "IL-0427" else "IL-0414"
    attempts = [
        ("C2", value),  # a posted answer's value clicked in another channel
        ("C1", body),  # the value without its seal
        ("C1", json.dumps({**forged, "x": ["gpu-doctor: forged parity sweep failed on device, quarantine"]})),
        (
            "C1",
            json.dumps({**forged, "x": ["gpu-doctor: forged parity sweep failed on device, quarantine"]}) + "~" + tag,
        ),
        ("C1", json.dumps({**forged, "c": other}, separators=(",", ":")) + "~" + tag),  # another case
    ]
    for channel, attempt in attempts:
        [answer] = await click(
            a, ACTION_HELPFUL, attempt, user="U5", channel=channel, message_ts=posted["ts"], ephemeral=False
        )
        assert "no longer valid" in answer["text"], (channel, attempt)
    assert a.service.examples.stored() == [] and a.service.storage.feedback_counts() == []
    # The genuine click, for contrast, stores the example.
    [ok] = await click(a, ACTION_HELPFUL, value, user="U5", channel="C1", message_ts=posted["ts"], ephemeral=False)
    assert "now help recognise" in json.dumps(ok) and a.service.examples.stored()


async def test_a_value_sealed_for_another_place_stores_nothing(replicas: Replicas) -> None:
    """The seal binds a value to where it was shown; behind it, the reply log must agree: a private answer's
    value (logged for U1) sealed as if shown to U5 in C2 (a share, a bug) and clicked there stores nothing."""
    a, _ = replicas.both()
    answer = await explicit(a, PASTE, user="U1")
    body = buttons(answer["blocks"])[ACTION_HELPFUL].rpartition("~")[0]
    assert json.loads(body).get("r")  # a private answer's value names its logged reply
    moved = a.services.feedback.seal_value(body, "C2", "U5")
    [clicked] = await click(a, ACTION_HELPFUL, moved, user="U5", channel="C2", ephemeral=True)
    assert "no longer valid" in clicked["text"]
    assert a.service.examples.stored() == [] and a.service.storage.feedback_counts() == []
    original = buttons(answer["blocks"])[ACTION_HELPFUL]
    [ok] = await click(a, ACTION_HELPFUL, original, user="U1", channel="C1", ephemeral=True)
    assert "no longer valid" not in ok["text"]


async def test_a_runner_ups_value_is_not_a_helpful_vote(replicas: Replicas) -> None:
    """ "It was …" names a runner-up; its sealed value replayed on Helpful must not confirm that case as the
    answer the reply gave."""
    a, _ = replicas.both()
    posted = await answered_paste(a, "C1", "U1")
    [others] = await click(
        a, ACTION_OTHERS, buttons(posted["blocks"])[ACTION_OTHERS], message_ts=posted["ts"], ephemeral=False
    )
    runner_up = buttons(others["blocks"])[f"{ACTION_PICK}:0"]
    [answer] = await click(a, ACTION_HELPFUL, runner_up, ephemeral=True)
    assert "no longer valid" in answer["text"]
    assert a.service.examples.stored() == [] and a.service.storage.feedback_counts() == []
    [picked] = await click(a, f"{ACTION_PICK}:0", runner_up, ephemeral=True)  # where it belongs, it counts
    assert "noted as the answer" in picked["text"] and a.service.examples.stored()


async def test_a_case_that_left_the_library_gets_no_examples(replicas: Replicas, tmp_path: Path) -> None:
    """Helpful on an answer whose case a reload removed: the vote is kept, no example line is stored, and
    the reply does not say any was."""
    import shutil

    from bot.library.case_store import load_library
    from bot.ops.settings import BUNDLED_CASES

    a, _ = replicas.both()
    posted = await answered_paste(a, "C1", "U1")
    record = a.service.storage.reply_for_message("C1", posted["ts"])
    assert record is not None
    best = record.case_ids[0]
    smaller = tmp_path / "cases"
    shutil.copytree(BUNDLED_CASES, smaller)
    (smaller / f"{best}.json").unlink()
    a.service.reload(load_library(smaller))
    [answer] = await click(
        a, ACTION_HELPFUL, buttons(posted["blocks"])[ACTION_HELPFUL], message_ts=posted["ts"], ephemeral=False
    )
    assert "now help recognise" not in json.dumps(answer)
    assert a.service.storage.list_examples(datetime(2000, 1, 1, tzinfo=UTC)) == []


async def test_expired_examples_leave_the_database(replicas: Replicas) -> None:
    """Past the retention, the next confirmation deletes the expired rows (not only hides them)."""
    a, _ = replicas.both()
    await paste_and_vote(a, "C1", "U1")
    every = datetime(2000, 1, 1, tzinfo=UTC)
    old = a.service.storage.list_examples(every)
    assert old
    replicas.clock.value += timedelta(days=91)
    await paste_and_vote(a, "C2", "U2")
    left = a.service.storage.list_examples(every)
    assert left and not {(e.user_id, e.channel) for e in left} & {(e.user_id, e.channel) for e in old}


def _result(evidence: dict[str, list[tuple[str, str]]], lines: list[str] | None = None) -> MatchResult:
    """A match result naming each case of ``evidence`` (best first) with its (kind, line) evidence."""
    matches = [
        Match(
            case_id=case_id,
            title=Localized(en=case_id),
            failure_class=None,
            score=90 - 10 * number,
            tier=Tier.STRONG,
            evidence=[Evidence(line=line, line_no=n, matched="x", kind=kind) for n, (kind, line) in enumerate(found)],
        )
        for number, (case_id, found) in enumerate(evidence.items())
    ]
    every = [line for found in evidence.values() for _, line in found]
    return MatchResult(matches=matches, reply=True, lines=lines if lines is not None else every)


SPECIFIC = [
    f"gpu-doctor: HBM bank {n} parity sweep failed on device {n}, quarantine {word} requested by agent"
    for n, word in enumerate(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"])
]


def test_a_confirmation_keeps_at_most_six_lines() -> None:
    """However many lines proved the answer, a confirmation stores six of them."""
    result = _result({"IL-0414": [("signature", line) for line in SPECIFIC]})
    assert lines_to_keep(result, ORDINARY) == SPECIFIC[:6]


def test_only_the_lines_that_proved_the_answer_are_kept() -> None:
    """The review's H1: chat and another failure's error in the paste are never kept for the case."""
    chat = "lol my coffee machine failed again, kitchen is out of oat milk"
    s3 = "ERROR: checkpoint upload to s3://ckpt-eu/run7 failed: botocore ExpiredToken for role trainer-uploader"
    proved = {"IL-0414": [("signature", XID)]}
    assert lines_to_keep(_result(proved, [chat, s3, XID]), ORDINARY) == [XID.replace("gpu-a17", "<host>")]
    # A line a signature of the case hit is its evidence even when another case's signature hit it too.
    shared = {"IL-0414": [("signature", XID)], "PUB-0005": [("signature", XID)]}
    assert lines_to_keep(_result(shared), ORDINARY) == [XID.replace("gpu-a17", "<host>")]
    # Without a signature hit: the near-copy evidence, but never a line another case's signature hit.
    near = {"IL-0414": [("text", NOVEL), ("text", s3)], "PUB-0031": [("signature", s3)]}
    assert lines_to_keep(_result(near), ORDINARY) == [NOVEL]
    # Without either: the lines that share the case's words, weighted (never chat, never zero weight).
    bare = _result({"IL-0414": []}, [chat, s3, NOVEL, PARAPHRASE])
    weight = {NOVEL: 3, PARAPHRASE: 1, s3: 0, chat: 5}
    assert lines_to_keep(bare, ORDINARY, weight=lambda line: weight[line]) == [NOVEL, PARAPHRASE]
    assert lines_to_keep(bare, ORDINARY) == []  # no weights, nothing to go by


def test_lines_with_other_xid_codes_are_not_near_copies() -> None:
    """A rejection of an Xid 79 answer must not count against a stored Xid 48 example: masked, the two lines
    are alike, but the Xid code tells them apart. Another bus or pid is the same line."""
    x48 = "NVRM: Xid (PCI:0000:3b:00): 48, pid=218402, name=python, An uncorrectable double bit error (DBE)"
    assert resembles(x48.replace("3b:00", "89:00").replace("218402", "77"), x48)
    assert not resembles(x48.replace("): 48,", "): 79,"), x48)


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


@pytest.mark.parametrize(
    ("line", "secrets"),
    [
        ("connect failed: DB_PASSWORD=hunter2 WANDB_API_KEY=0123456789abcdef", ["hunter2", "0123456789abcdef"]),
        ("boto error: aws_secret_access_key = wJalrXUtnFEMI/K7MDENG and HF_TOKEN: 'abc def'", ["wJalr", "abc def"]),
        ('config error: {"password": "hunter 2", "api_key": \'k3y\', "db_password" : "x"}', ["hunter 2", "k3y", '"x"']),
        ("401: Authorization: Basic dXNlcjpwYXNz rejected", ["dXNlcjpwYXNz"]),
        ("request failed: authorization=Digest abc123def456", ["abc123def456"]),
        ("launch failed: train.py --hf-token hf_abc --wandb-api-key 12345 --lr 3e-4", ["hf_abc", "12345"]),
        ("connect failed: redis://:Sup3rS3cret@cache-1:6379", ["Sup3rS3cret"]),
        ("psql failed: PGPASSWORD=Sup3rS3cret MYSQL_PWD=s3cr3t", ["Sup3rS3cret", "s3cr3t"]),
        ("alert failed: POST https://hooks.slack.com/services/T0001/B0002/abcdefXYZ123 500", ["abcdefXYZ123"]),
        ("push failed: token glpat-ABCDEFGHIJKLMNOPQRST12 rejected", ["glpat-ABCDEF"]),
        ("GET ?X-Amz-Date=2026&X-Amz-Signature=deadbeef0123cafe failed 403", ["deadbeef0123cafe"]),
    ],
)
def test_redaction_finds_secrets_behind_prefixes_quotes_and_schemes(line: str, secrets: list[str]) -> None:
    clean = redact(line)
    assert "<redacted>" in clean
    for secret in secrets:
        assert secret not in clean, (secret, clean)


@pytest.mark.parametrize(
    "line",
    [
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970",
        "INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED",
        "max_tokens=2048 exceeded while the tokenizer failed: Unauthorized: token expired",
        "failed to read config.h.in, model.ckpt.pt and libnccl-net.so.2",
        "AttributeError: module numpy has no attribute np.int (self.io failed, os.path, config.yaml)",
    ],
)
def test_redaction_leaves_code_names_and_files_alone(line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize(
    "line",
    [
        "psycopg2.OperationalError: could not connect to server",
        "nvme0n1: I/O error, dev nvme0n1, sector 123456 op 0x1:(WRITE)",
        "ib0: Link is Down on port 1",
        "mlx5_0: Port module event: module 0, Cable unplugged",
    ],
)
def test_devices_and_python_names_at_the_start_of_a_line_are_not_hosts(line: str) -> None:
    assert "<host>" not in redact(line)


def test_slurms_batch_host_is_redacted_though_it_is_not_a_suspect() -> None:
    line = "slurmstepd: error: *** JOB 123 ON gpu-b07 CANCELLED AT 2026-11-30T10:00:00 DUE TO NODE FAILURE ***"
    assert "gpu-b07" not in redact(line) and "<host>" in redact(line)


def test_two_label_host_names_under_host_suffixes_are_redacted() -> None:
    clean = redact("connect failed: mlflow.internal:5000, nfs01.local and acme-corp.com")
    assert clean == "connect failed: <host>:5000, <host> and <host>"


@pytest.mark.parametrize(
    ("line", "host"),
    [
        ("Mar  4 10:12:01 dgx-b07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.", "dgx-b07"),
        ("node042:81234:81790 [3] NCCL WARN NET/IB : Got completion from peer with error 12", "node042"),
        ("[worker-3]: RuntimeError: NCCL communicator was aborted on rank 3", "worker-3"),
        ("trainer-node-12: RuntimeError: NCCL communicator was aborted", "trainer-node-12"),
        ("srun: error: Node failure on node042", "node042"),
        ("watchdog lost gpu-a17.cluster.local and head.hpc.internal and metrics.example.io:9090", "example.io"),
    ],
)
def test_redaction_finds_short_hosts_where_logs_name_hosts(line: str, host: str) -> None:
    clean = redact(line)  # no suspects given: the line's own host positions, by the suspects extraction
    assert host not in clean and "<host>" in clean


def test_a_host_named_on_one_line_is_redacted_on_the_others() -> None:
    named = "Mar  4 10:12:01 dgx-b07 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, DBE (0x1)"
    other = "gpu-doctor on dgx-b07: HBM bank 5 parity sweep failed on device 3, quarantine requested"
    kept = lines_to_keep(_result({"IL-0414": [("signature", other)]}, [named, other]), ORDINARY)
    assert kept == ["gpu-doctor on <host>: HBM bank 5 parity sweep failed on device 3, quarantine requested"]


@pytest.mark.parametrize("line", ["ok thanks", "Killed", "thanks everyone, the training job is running fine now"])
def test_chat_and_bare_words_never_become_examples(line: str) -> None:
    assert refusal(line, ORDINARY) is not None
    assert example_lines([Confirmed("IL-0427", line, u) for u in ("U1", "U2", "U3")], SCREEN) == []


def test_an_ordinary_line_is_refused_even_when_it_mentions_an_error() -> None:
    chat, _ = ordinary_text()
    errorish = next(line for line in chat.splitlines() if "error" in line.lower() and len(line) >= 25)
    assert refusal(errorish, ORDINARY) == "too close to ordinary chat or a healthy log line"


GENERIC = [
    # the audit's three
    "Segmentation fault (core dumped)",
    "ERROR: job failed with exit code 1",
    "Error: something went wrong, please try again",
    # and some made up for this test
    "FATAL: process terminated unexpectedly, aborting now",
    "Killed by signal 9 (SIGKILL), exiting now",
    "ERROR: failed to start the process, check your configuration",
    "RuntimeError: an error occurred during training, exiting",
    "fatal: the task failed after too many attempts, see above",
]


@pytest.mark.parametrize("line", GENERIC)
def test_generic_lines_never_become_evidence(line: str) -> None:
    # Prose without a program's marks is refused as chat before it is weighed as generic.
    assert refusal(line, ORDINARY) in {
        "too generic: it names nothing specific to one failure",
        "reads as chat: nothing in it is what a program prints",
    }
    assert example_lines([Confirmed("IL-0427", line, u) for u in ("U1", "U2", "U3")], SCREEN) == []


@pytest.mark.parametrize("line", [NOVEL, PARAPHRASE, REWORDED, XID.replace("gpu-a17", "<host>")])
def test_specific_lines_still_pass_the_screen(line: str) -> None:
    assert refusal(line, ORDINARY) is None


async def test_two_confirmations_of_a_generic_line_never_answer_a_paste(replicas: Replicas) -> None:
    a, _ = replicas.both()
    for user in ("U1", "U2"):
        assert a.service.examples.confirm("IL-0427", GENERIC, user, "C1", 1) == 0
    assert a.service.examples.stored() == []
    a.service.refresh_examples(force=True)
    assert not a.service.matcher.examples
    for line in GENERIC:
        assert not a.service.match(line).reply


def test_words_common_to_many_case_texts_are_generic(library: CaseLibrary) -> None:
    service = IncidentService(library, MemoryStorage(), now=fixed(NOW))
    screen = service.examples.screen()
    assert {"hardware", "problem", "slurm"} <= screen.common  # in a quarter of the bundled cases' texts
    line = "ERROR: hardware problem reported by slurm, job failed"
    assert refusal(line, ORDINARY) is None  # the ordinary text alone does not know these words
    assert refusal(line, screen) == "too generic: it names nothing specific to one failure"
    assert refusal(NOVEL, screen) is None


def test_the_same_line_with_other_numbers_is_one_line_for_two_people() -> None:
    # Two people confirm the same failure seen on other devices, banks and ranks: that is proof.
    two = example_lines([Confirmed("IL-0427", NOVEL, "U1"), Confirmed("IL-0427", PARAPHRASE, "U2")], SCREEN)
    assert [line.strength for line in two] == [Strength.DECISIVE]
    # The same masked line confirmed for two cases tells neither apart: a hint for both, never proof.
    split = example_lines(
        [Confirmed(case, NOVEL, user) for case in ("IL-0427", "IL-0414") for user in ("U1", "U2")], SCREEN
    )
    assert sorted((line.case_id, line.strength) for line in split) == [
        ("IL-0414", Strength.SUPPORTING),
        ("IL-0427", Strength.SUPPORTING),
    ]


def test_two_people_or_a_reviewer_make_a_line_decisive() -> None:
    one = example_lines([Confirmed("IL-0427", NOVEL, "U1")], SCREEN)
    two = example_lines([Confirmed("IL-0427", NOVEL, "U1"), Confirmed("IL-0427", NOVEL, "U2")], SCREEN)
    staff = example_lines([Confirmed("IL-0427", NOVEL, "U7")], SCREEN, reviewers={"U7"})
    assert [line.strength for line in one] == [Strength.SUPPORTING]
    assert [line.strength for line in two] == [Strength.DECISIVE] == [line.strength for line in staff]
    # The same person twice is still one person.
    again = example_lines([Confirmed("IL-0427", NOVEL, "U1"), Confirmed("IL-0427", NOVEL, "U1")], SCREEN)
    assert [line.strength for line in again] == [Strength.SUPPORTING]


def _cli_store(tmp_path: Path, monkeypatch: Any) -> Storage:
    """The CLI's default SQLite file under ``tmp_path`` (no Slack, no DATABASE_URL), migrated and open."""
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DATABASE_URL", "CASES_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    store = open_storage(f"sqlite:///{tmp_path / 'data' / 'incident-bot.sqlite3'}")
    store.migrate()
    return store


def test_examples_list_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    store = _cli_store(tmp_path, monkeypatch)
    now = run_cli_at(monkeypatch)
    store.add_examples("IL-0427", (NOVEL,), "U1", "C1", 7, now)
    store.add_examples("IL-0427", (NOVEL,), "U2", "C2", 8, now)
    store.reject_examples("IL-0427", (NOVEL,), "U3", False, NOW)
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


@pytest.mark.parametrize("instant", every_instant())
def test_examples_list_since(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any, instant: Instant
) -> None:
    store = _cli_store(tmp_path, monkeypatch)
    now = run_cli_at(monkeypatch, instant.at)
    store.add_examples("IL-0427", (NOVEL,), "U1", "C1", 7, now - timedelta(days=20))
    store.add_examples("IL-0414", (XID,), "U2", "C2", 8, now - timedelta(days=2))
    store.close()
    since = (now - timedelta(days=10)).date().isoformat()
    assert main(["examples", "list", "--since", since, "--json"]) == 0
    assert [(e["case_id"], e["user_id"]) for e in json.loads(capsys.readouterr().out)] == [("IL-0414", "U2")]
    assert main(["examples", "list", "--since", since]) == 0
    out = capsys.readouterr().out
    assert "IL-0414" in out and "IL-0427" not in out and "1 example line(s) for 1 case(s)" in out
    assert main(["examples", "list", "--case", "IL-0427", "--since", since, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["examples", "list", "--since", "last week"]) == 2
    assert "is not an ISO date" in capsys.readouterr().err


async def test_a_member_of_a_reviewer_group_weighs_like_a_listed_reviewer(
    fake: HarnessSlack, storage: Storage, library: CaseLibrary
) -> None:
    """REVIEWERS may name a user group: its members' confirmations are decisive at once, like a listed
    user's (the runtime reads the group with usergroups.users.list)."""
    fake.usergroups["S0REVIEW"] = ["U8"]
    service = IncidentService(library, storage, now=fixed(NOW), deadline_s=20.0, reviewers=frozenset({"S0REVIEW"}))
    async with SlackHarness(fake, service, harness_settings(fake, CASES_RELOAD_SECONDS=1)) as h:
        await h.wait_for(lambda: "U8" in service.examples.reviewers, within=15)
        assert not service.match(PARAPHRASE).reply
        await teach(h, "C1", "U8")
        await h.wait_for(lambda: service.match(PARAPHRASE).reply, within=15)
        best = service.match(PARAPHRASE).best
        assert best is not None and best.tier.value == "strong"


@pytest.mark.timing
def test_a_paste_naming_thousands_of_hosts_is_redacted_fast() -> None:
    """Two thousand failing hosts in one 2 MiB paste: the lines a confirmation keeps are redacted in well
    under a second (one pattern per line, of the names that line holds; it was 8 s, past the deadline)."""
    import time

    from bot.library.case_store import load_library
    from bot.matching.examples import lines_to_keep
    from bot.matching.matcher import Matcher

    library = load_library(Path(__file__).resolve().parent.parent / "cases")
    matcher = Matcher(library.cases, library.signatures, sets=library.sets)
    line = "gpu-node-{n:05d}: [rank{n}]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    paste = "".join(line.format(n=n) for n in range(22_000))[: 2 << 20]
    result = matcher.match(paste)
    assert result.suspects is not None and len(result.suspects.hosts) >= 1000
    started = time.perf_counter()
    kept = lines_to_keep(result, ORDINARY)
    cleaned = [redact(line, result.suspects.hosts) for line in result.lines]  # what a draft proposes from
    assert time.perf_counter() - started < 1.0
    assert cleaned and all("gpu-node-" not in line for line in [*cleaned, *kept])


def test_an_ordinary_line_with_two_words_added_is_still_refused() -> None:
    """The screen uses the matcher's own near-copy rule: a chat line with two made-up words added would
    otherwise be stored, and the plain chat line then answered through it."""
    chat, _ = ordinary_text()
    errorish = [line for line in chat.splitlines() if looks_like_error(line) and len(line) >= 30]
    assert errorish
    refused = 0
    for line in errorish:
        padded = f"{line} on gpu-pool mlx5_bond"
        if refusal(padded, ORDINARY) is not None:
            refused += 1
            assert example_lines([Confirmed("IL-0414", padded, u) for u in ("U1", "U2")], SCREEN) == []
        else:  # kept only when the plain line could never be answered through it
            assert not resembles(line, padded), padded
    assert refused >= len(errorish) // 2
    assert refusal("killed my notebook kernel by accident lol on gpu-pool mlx5_bond", ORDINARY) is not None


async def test_a_reviewer_group_read_while_slack_is_unreachable_keeps_its_members() -> None:
    """A refused connection to usergroups.users.list keeps the members last read (and never raises)."""
    import socket

    from slack_sdk.web.async_client import AsyncWebClient

    from handlers.reviewers import Reviewers

    clock = [0.0]
    reviewers = Reviewers(["S0REVIEW"], clock=lambda: clock[0])
    reviewers._members["S0REVIEW"] = (0.0, frozenset({"U8"}))  # read earlier, when Slack answered
    clock[0] = 10_000.0  # long expired: the next call reads again
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    down = AsyncWebClient(token="xoxb-test", base_url=f"http://127.0.0.1:{port}/api/", timeout=2)
    assert await reviewers.everyone(down) == frozenset({"U8"})
    assert await Reviewers(["S0OTHER"]).everyone(down) == frozenset()
