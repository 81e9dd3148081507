"""Issue 10 end to end: signed ``block_actions``, ``message_action`` and ``app_home_opened`` payloads into
the real app over loopback, answers read back from the fake Web API. Every test runs on SQLite and (with
TEST_DATABASE_URL) PostgreSQL; ``incident-bot stats`` runs on SQLite through the command line."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from conftest import NOW, make_case, run_cli_at
from fake_slack import FakeSlack
from slack_harness import HarnessSlack, SlackHarness, harness_settings, message_event, new_ts
from sqlalchemy import text

from bot.app.service import IncidentService
from bot.library.case_store import CaseLibrary
from bot.ops.clock import fixed
from bot.replies.buttons import (
    ACTION_DETAILS,
    ACTION_HELPFUL,
    ACTION_LANG,
    ACTION_NOT_THIS,
    ACTION_OTHERS,
    ACTION_PICK,
    PICK_ACTIONS,
)
from bot.storage import ReplyRecord, Storage, open_storage

PASTES = Path(__file__).parent / "fixtures" / "pastes"
ECC_PASTE = (PASTES / "hw-ecc-pytorch-three-lines.txt").read_text()  # IL-0427 best, IL-0414 and more behind


@pytest.fixture
async def h(fake: HarnessSlack, storage: Storage, library: CaseLibrary) -> AsyncIterator[SlackHarness]:
    service = IncidentService(library, storage, now=fixed(NOW), deadline_s=20.0)
    async with SlackHarness(fake, service, harness_settings(fake)) as harness:
        yield harness


# -- payloads -------------------------------------------------------------------------------------------


async def _interaction(h: SlackHarness, payload: dict[str, Any]) -> tuple[httpx.Response, str]:
    url = h.new_response_url()
    payload = {"api_app_id": "A1", "token": "legacy-verification-token", "team": {"id": "T1"}, **payload}
    payload["response_url"] = url
    response = await h.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    assert response.status_code == 200
    await h.settle()
    return response, url


async def click(
    h: SlackHarness,
    action_id: str,
    value: str,
    *,
    user: str = "U1",
    channel: str = "C1",
    message_ts: str | None = None,
    ephemeral: bool,
) -> list[dict[str, Any]]:
    """A ``block_actions`` click; returns what the app sent to the click's response_url."""
    container: dict[str, Any] = {
        "type": "message",
        "message_ts": message_ts or new_ts(),
        "channel_id": channel,
        "is_ephemeral": ephemeral,
    }
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {"id": user, "username": "someone", "team_id": "T1"},
        "container": container,
        "trigger_id": "1.2.3",
        "channel": {"id": channel, "name": "gpu-incidents"},
        "actions": [
            {
                "action_id": action_id,
                "block_id": "b1",
                "value": value,
                "type": "button",
                "action_ts": str(time.time()),
            }
        ],
    }
    if not ephemeral:
        payload["message"] = {"type": "message", "ts": container["message_ts"], "text": "…"}
    _, url = await _interaction(h, payload)
    return [c.body for c in h.hook_calls(url)]


async def shortcut(h: SlackHarness, message: dict[str, Any], *, channel: str = "C1", user: str = "U1") -> str:
    """A ``message_action`` for the "Match to known incidents" shortcut; returns the response_url."""
    payload = {
        "type": "message_action",
        "callback_id": "match_known_incidents",
        "trigger_id": "1.2.3",
        "message_ts": message["ts"],
        "user": {"id": user, "name": "someone", "team_id": "T1"},
        "channel": {"id": channel, "name": "gpu-incidents"},
        "message": message,
    }
    _, url = await _interaction(h, payload)
    return url


def opened(value: str) -> dict[str, Any]:
    """The JSON of a sealed button value (the seal, ``~`` and a tag, is checked by the bot, not here)."""
    body, _, _ = value.rpartition("~")
    payload: dict[str, Any] = json.loads(body)
    return payload


def buttons(blocks: list[dict[str, Any]]) -> dict[str, str]:
    """action_id -> value of the buttons in a message's actions block."""
    found: dict[str, str] = {}
    for block in blocks:
        if block.get("type") == "actions":
            found.update({e["action_id"]: e.get("value", "") for e in block["elements"]})
    return found


def text_of(body: dict[str, Any]) -> str:
    return json.dumps({"text": body.get("text"), "blocks": body.get("blocks")}, ensure_ascii=False)


async def channel_answer(h: SlackHarness, channel: str = "C1") -> dict[str, Any]:
    """Paste the ECC log in ``channel``; the bot's posted (logged) answer."""
    await h.event(message_event(ECC_PASTE, channel=channel))
    await h.settle()
    [posted] = h.fake.posted(channel)
    await h.wait_for(lambda: h.service.storage.reply_for_message(channel, posted["ts"]) is not None)
    return posted


async def command_answer(h: SlackHarness, text: str = ECC_PASTE, user: str = "U1") -> dict[str, Any]:
    _, url = await h.command(text, user_id=user)
    await h.settle()
    [answer] = h.hook_calls(url)
    return answer.body


def feedback_rows(storage: Storage) -> list[tuple[Any, ...]]:
    engine = storage.engine  # type: ignore[attr-defined]  # the SQL backend's engine: the stored rows themselves
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT user_id, case_id, vote, channel, tier FROM feedback ORDER BY user_id"))
        return [tuple(row) for row in rows]


# -- votes ----------------------------------------------------------------------------------------------


async def test_vote_on_a_posted_reply_is_stored_and_can_be_changed(h: SlackHarness) -> None:
    posted = await channel_answer(h)
    values = buttons(posted["blocks"])
    assert {ACTION_HELPFUL, ACTION_NOT_THIS, ACTION_OTHERS, ACTION_LANG} <= set(values)
    [ack] = await click(h, ACTION_HELPFUL, values[ACTION_HELPFUL], message_ts=posted["ts"], ephemeral=False)
    assert ack["response_type"] == "ephemeral" and ack["replace_original"] in (False, "false")
    assert "IL-0427 marked helpful" in ack["text"]
    storage = h.service.storage
    assert feedback_rows(storage) == [("U1", "IL-0427", "helpful", "C1", "exact")]
    await click(h, ACTION_NOT_THIS, values[ACTION_NOT_THIS], message_ts=posted["ts"], ephemeral=False)
    assert feedback_rows(storage) == [("U1", "IL-0427", "not_helpful", "C1", "exact")]  # changed, not added
    await click(h, ACTION_HELPFUL, values[ACTION_HELPFUL], user="U2", message_ts=posted["ts"], ephemeral=False)
    [count] = storage.feedback_counts()
    assert (count.case_id, count.helpful, count.not_helpful) == ("IL-0427", 1, 1)
    assert not h.fake.calls("chat.update")  # the posted answer itself is never edited


async def test_vote_on_an_ephemeral_command_answer_uses_the_reply_id(h: SlackHarness) -> None:
    answer = await command_answer(h)
    values = buttons(answer["blocks"])
    assert next(iter(values)) == "share_in_channel"  # Share stays first, as before
    assert opened(values[ACTION_HELPFUL])["r"] >= 1
    [ack] = await click(h, ACTION_HELPFUL, values[ACTION_HELPFUL], ephemeral=True)
    assert "marked helpful" in ack["text"]
    assert feedback_rows(h.service.storage) == [("U1", "IL-0427", "helpful", "C1", "exact")]


async def test_forged_button_values_are_rejected_without_a_crash(h: SlackHarness) -> None:
    sealed = buttons((await command_answer(h, user="U1"))["blocks"])
    mine = opened(sealed[ACTION_HELPFUL])
    posted = await channel_answer(h, channel="C7")
    forged = [
        "garbage",
        "{}",
        json.dumps({"v": 1, "c": "IL-0427", "l": "en", "r": 999_999}),  # no such reply
        json.dumps({**mine, "c": "IL-0414"}),  # a case the reply did not name best
        json.dumps({**mine, "r": True}),
        "x" * 5000,
    ]
    for value in forged:
        [answer] = await click(h, ACTION_HELPFUL, value, ephemeral=True)
        assert "no longer valid" in answer["text"] and answer["response_type"] == "ephemeral"
    # U1's private answer, clicked by someone else; and a posted answer's value clicked in another channel.
    [other_user] = await click(h, ACTION_NOT_THIS, sealed[ACTION_NOT_THIS], user="U2", ephemeral=True)
    moved = buttons(posted["blocks"])[ACTION_NOT_THIS]
    [other_channel] = await click(h, ACTION_NOT_THIS, moved, channel="C1", message_ts=posted["ts"], ephemeral=False)
    for answer in (other_user, other_channel):
        assert "no longer valid" in answer["text"]
    assert h.service.storage.feedback_counts() == []
    [also_lang] = await click(h, ACTION_LANG, "{", ephemeral=True)
    assert also_lang["replace_original"] in (False, "false")  # a bad switch never replaces the answer


# -- other matches and the language switch -----------------------------------------------------------------


def english_first(text: str) -> bool:
    """Whether the answer's English comes before its Korean (line 1 and the line under it)."""
    return text.index("exact match") < text.index("정확히 일치")


async def test_other_matches_shows_the_runner_ups_to_the_clicker(h: SlackHarness) -> None:
    posted = await channel_answer(h)
    value = buttons(posted["blocks"])[ACTION_OTHERS]
    [answer] = await click(h, ACTION_OTHERS, value, message_ts=posted["ts"], ephemeral=False)
    assert answer["response_type"] == "ephemeral"
    assert answer["blocks"][0]["text"]["text"] == "Other matches for IL-0427"
    shown = text_of(answer)
    assert "IL-0414" in shown and "PUB-0001" in shown and "exact match" in shown
    assert len(h.fake.posted("C1")) == 1  # nothing posted in the channel


async def test_each_it_was_button_has_its_own_action_id_and_works(h: SlackHarness) -> None:
    posted = await channel_answer(h)
    value = buttons(posted["blocks"])[ACTION_OTHERS]
    [answer] = await click(h, ACTION_OTHERS, value, message_ts=posted["ts"], ephemeral=False)
    [actions] = [block for block in answer["blocks"] if block["type"] == "actions"]
    ids = [element["action_id"] for element in actions["elements"]]
    assert len(ids) >= 2 and len(set(ids)) == len(ids)  # Slack refuses a block that repeats one
    assert ids == [f"{ACTION_PICK}:{n}" for n in range(len(ids))] and all(PICK_ACTIONS.match(i) for i in ids)
    assert not h.fake.rejected
    second = actions["elements"][1]
    [picked] = await click(h, second["action_id"], second["value"], ephemeral=True)
    case_id = opened(second["value"])["c"]
    assert f"{case_id}" in picked["text"] and "noted as the answer" in picked["text"]
    assert feedback_rows(h.service.storage) == [("U1", case_id, "helpful", "C1", "exact")]


def test_the_fake_refuses_blocks_slack_would_refuse(fake_slack: FakeSlack) -> None:
    button = {"type": "button", "action_id": "same", "text": {"type": "plain_text", "text": "x"}}
    twice = [{"type": "actions", "elements": [button, {**button, "value": "2"}]}]
    same_block = [{"type": "section", "block_id": "b", "text": {"type": "mrkdwn", "text": "x"}}] * 2
    apart = [{"type": "actions", "elements": [button]}, {"type": "actions", "elements": [button]}]
    auth = {"Authorization": "Bearer xoxb-test"}
    with httpx.Client(base_url=fake_slack.url, headers=auth) as client:
        for blocks in (twice, same_block):
            answer = client.post("/api/chat.postMessage", json={"channel": "C1", "text": "x", "blocks": blocks})
            assert answer.json()["error"] == "invalid_blocks"
            hook = client.post("/hooks/abc", json={"text": "x", "blocks": blocks})
            assert hook.status_code == 400 and hook.text == "invalid_blocks"
        view = {"type": "modal", "blocks": twice}
        assert client.post("/api/views.open", json={"trigger_id": "1", "view": view}).json()["ok"] is False
        # The same action_id in two different blocks is fine.
        assert client.post("/api/chat.postMessage", json={"channel": "C1", "text": "x", "blocks": apart}).json()["ok"]
    assert len(fake_slack.posted("C1")) == 1 and [c.method for c in fake_slack.calls()] == ["chat.postMessage"]
    assert len(fake_slack.rejected) == 5
    fake_slack.rejected.clear()  # else stopping the fake fails the test, as it should for the bot's own calls


async def test_language_switch_replaces_an_ephemeral_answer_in_place(h: SlackHarness) -> None:
    answer = await command_answer(h)
    assert english_first(text_of(answer))
    values = buttons(answer["blocks"])
    [switched] = await click(h, ACTION_LANG, values[ACTION_LANG], ephemeral=True)
    assert switched["replace_original"] in (True, "true")
    body = text_of(switched)
    assert not english_first(body)
    assert "IL-0427" in switched["blocks"][0]["text"]["text"]
    assert "uncorrectable ECC error" in body  # the matched line is still shown
    again = buttons(switched["blocks"])
    assert list(again) == [
        "share_in_channel",
        ACTION_DETAILS,
        ACTION_HELPFUL,
        ACTION_NOT_THIS,
        ACTION_OTHERS,
        ACTION_LANG,
    ]
    assert again["share_in_channel"].startswith("r:")
    switched_id = opened(again[ACTION_HELPFUL])["r"]
    assert switched_id == opened(values[ACTION_HELPFUL])["r"]  # the same answer, not a new one
    [back] = await click(h, ACTION_LANG, again[ACTION_LANG], ephemeral=True)
    assert english_first(text_of(back))
    [ack] = await click(h, ACTION_NOT_THIS, again[ACTION_NOT_THIS], ephemeral=True)
    assert "이 사례 아님" in ack["text"]  # acknowledged in the order the clicked message showed


async def test_language_switch_on_a_shared_answer_goes_only_to_the_clicker(h: SlackHarness) -> None:
    posted = await channel_answer(h)
    before = h.fake.posted("C1")
    values = buttons(posted["blocks"])
    [copy] = await click(h, ACTION_LANG, values[ACTION_LANG], user="U5", message_ts=posted["ts"], ephemeral=False)
    assert copy["response_type"] == "ephemeral" and copy["replace_original"] in (False, "false")
    assert not english_first(text_of(copy))
    assert h.fake.posted("C1") == before and not h.fake.calls("chat.update")
    assert len(h.posts()) == 1
    # The clicker's copy is ephemeral: its buttons carry the reply id, so voting from it works.
    copy_values = buttons(copy["blocks"])
    assert "share_in_channel" not in copy_values
    await click(h, ACTION_HELPFUL, copy_values[ACTION_HELPFUL], user="U5", ephemeral=True)
    assert feedback_rows(h.service.storage) == [("U5", "IL-0427", "helpful", "C1", "exact")]


async def test_shared_paste_answer_keeps_working_buttons(h: SlackHarness) -> None:
    answer = await command_answer(h)
    _, share_url = await h.click(buttons(answer["blocks"])["share_in_channel"])
    await h.settle()
    [shared] = h.hook_calls(share_url)
    assert shared.body["response_type"] == "in_channel"
    values = buttons(shared.body["blocks"])
    assert "share_in_channel" not in values and ACTION_HELPFUL in values
    await click(h, ACTION_HELPFUL, values[ACTION_HELPFUL], user="U3", ephemeral=False)
    assert feedback_rows(h.service.storage) == [("U3", "IL-0427", "helpful", "C1", "exact")]


# -- the message shortcut ------------------------------------------------------------------------------------


async def test_shortcut_on_a_thread_reply_answers_in_that_thread(h: SlackHarness) -> None:
    parent = h.fake.add_message("C1", {"type": "message", "user": "U2", "text": "training died, see below"})
    reply_ts = new_ts()
    message = {"type": "message", "user": "U2", "text": ECC_PASTE, "ts": reply_ts, "thread_ts": parent}
    url = await shortcut(h, message)
    assert h.hook_calls(url) == []  # answered in the thread, not privately
    [post] = h.posts()
    assert post.body["thread_ts"] == parent and "IL-0427" in post.body["text"]
    assert ACTION_HELPFUL in buttons(post.body["blocks"])
    posted = h.fake.posted("C1")[-1]  # the bot's answer, after the parent
    record = await asyncio.to_thread(h.service.storage.reply_for_message, "C1", posted["ts"])
    assert record is not None and record.source == "shortcut" and record.thread_ts == reply_ts


async def test_shortcut_where_the_bot_is_not_in_the_channel_answers_privately(h: SlackHarness) -> None:
    h.fake.queue("chat.postMessage", 200, body={"ok": False, "error": "not_in_channel"})
    message = {"type": "message", "user": "U2", "text": ECC_PASTE, "ts": new_ts()}
    url = await shortcut(h, message, channel="C9", user="U4")
    [private] = h.hook_calls(url)
    assert private.body["response_type"] == "ephemeral" and "IL-0427" in private.body["text"]
    assert h.fake.posted("C9") == []
    values = buttons(private.body["blocks"])
    await click(h, ACTION_NOT_THIS, values[ACTION_NOT_THIS], user="U4", channel="C9", ephemeral=True)
    assert feedback_rows(h.service.storage) == [("U4", "IL-0427", "not_helpful", "C9", "exact")]


async def test_shortcut_on_a_message_with_nothing_to_match(h: SlackHarness) -> None:
    url = await shortcut(h, {"type": "message", "user": "U2", "text": "  ", "ts": new_ts()})
    [note] = h.hook_calls(url)
    assert "nothing" in note.body["text"].lower() or "no text" in note.body["text"]
    assert not h.posts()


# -- App Home --------------------------------------------------------------------------------------------


def big_library(count: int) -> CaseLibrary:
    long_title = "<!here> NCCL watchdog & ECC " * 60
    cases = {}
    for i in range(count):
        case = make_case(
            f"IL-{i:04d}", f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}", title={"en": long_title, "ko": "제목"}
        )
        cases[case.id] = case
    return CaseLibrary(cases=cases)


async def test_app_home_is_published_within_100_blocks_for_2000_cases(fake: HarnessSlack, storage: Storage) -> None:
    service = IncidentService(big_library(2000), storage, now=fixed(NOW), deadline_s=20.0)
    now = service.now()
    for i in range(300):
        record = ReplyRecord("C1", f"{i}.1", f"{i}.0", (f"IL-{i % 40:04d}",), "strong", now, "auto")
        reply_id = storage.log_reply(record)
        storage.record_feedback(
            reply_id, "U1", record.case_ids[0], "helpful" if i % 3 else "not_helpful", "C1", "strong", now
        )
    async with SlackHarness(fake, service, harness_settings(fake)) as h:
        await h.event(
            {"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "messages", "event_ts": new_ts()}
        )
        await h.settle()
        assert not fake.calls("views.publish")  # only the Home tab gets a view
        response = await h.event(
            {"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": new_ts()}
        )
        assert response.status_code == 200
        await h.settle()
    view = fake.views["U1"]
    assert view["type"] == "home" and 0 < len(view["blocks"]) <= 100
    for block in view["blocks"]:
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= 3000
        if block["type"] == "header":
            assert len(block["text"]["text"]) <= 150
    shown = json.dumps(view, ensure_ascii=False)
    assert "<!here>" not in shown and "&lt;!here&gt;" in shown
    assert "Recently reviewed cases" in shown and "Matched most in the last 30 days" in shown
    assert "200 of 300 votes helpful (67%)" in shown
    assert "IL-0000" in shown  # matched most (8 replies each for IL-0000..IL-0019; IL-0000 first by id)


# -- incident-bot stats -----------------------------------------------------------------------------------


def test_stats_command_prints_votes_per_case_and_the_most_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli.main import main

    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DATABASE_URL", "CASES_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    now = run_cli_at(monkeypatch)
    assert main(["stats"]) == 0
    assert "No feedback yet" in capsys.readouterr().out
    store = open_storage(f"sqlite:///{tmp_path / 'data' / 'incident-bot.sqlite3'}")
    try:
        votes = {
            "IL-0427": ["helpful", "helpful", "not_helpful"],
            "IL-0414": ["not_helpful"] * 3,
            "IL-0421": ["helpful"],
        }
        for case_id, cast in votes.items():
            reply_id = store.log_reply(ReplyRecord("C1", case_id, "1.0", (case_id,), "strong", now))
            for n, vote in enumerate(cast):
                store.record_feedback(reply_id, f"U{n}", case_id, vote, "C1", "strong", now)  # type: ignore[arg-type]
    finally:
        store.close()
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert "Feedback: 7 votes, 3 helpful, 4 not helpful (43% helpful)" in out
    table = {line.split()[0]: line.split()[1:4] for line in out.splitlines() if line.startswith("IL-")}
    assert table == {"IL-0427": ["2", "1", "67%"], "IL-0414": ["0", "3", "0%"], "IL-0421": ["1", "0", "100%"]}
    rejected = out.split("Most often rejected")[1]
    assert rejected.index("IL-0414") < rejected.index("IL-0427") and "IL-0421" not in rejected
    assert main(["stats", "--json", "--top", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["most_rejected"] == ["IL-0414"] and data["helpful"] == 3


# -- details ----------------------------------------------------------------------------------------------


async def test_details_shows_the_whole_case_to_the_clicker_only(h: SlackHarness) -> None:
    posted = await channel_answer(h)
    first = text_of(posted)
    assert "*Lessons*" not in first  # the story and lessons wait behind the button
    value = buttons(posted["blocks"])[ACTION_DETAILS]
    [answer] = await click(h, ACTION_DETAILS, value, message_ts=posted["ts"], ephemeral=False)
    assert answer["response_type"] == "ephemeral" and answer["replace_original"] in (False, "false")
    shown = text_of(answer)
    assert "IL-0427" in shown and "Lessons" in shown and "What was done then" in shown
    assert "Next time: what to do" in shown
    assert len(h.fake.posted("C1")) == 1  # nothing new in the channel
    # The value is bound to the channel it was posted in.
    [moved] = await click(h, ACTION_DETAILS, value, channel="C2", message_ts=posted["ts"], ephemeral=False)
    assert "no longer valid" in moved["text"]


async def test_details_of_a_private_answer_is_bound_to_its_user(h: SlackHarness) -> None:
    answer = await command_answer(h)
    value = buttons(answer["blocks"])[ACTION_DETAILS]
    [mine] = await click(h, ACTION_DETAILS, value, ephemeral=True)
    assert "Lessons" in text_of(mine)
    [theirs] = await click(h, ACTION_DETAILS, value, user="U2", ephemeral=True)
    assert "no longer valid" in theirs["text"]


async def test_help_comes_in_the_readers_language_with_the_other_under_it(h: SlackHarness) -> None:
    _, url = await h.command("help", user_id="U7")
    await h.settle()
    [english] = h.hook_calls(url)
    blocks = english.body["blocks"]
    assert "show a case" in blocks[0]["text"]["text"]
    assert blocks[1]["type"] == "context" and "사례 보기" in blocks[1]["elements"][0]["text"]
    _, url = await h.command("lang ko", user_id="U7")
    await h.settle()
    [saved] = h.hook_calls(url)
    assert "저장했습니다" in saved.body["blocks"][0]["text"]["text"]
    _, url = await h.command("help", user_id="U7")
    await h.settle()
    [korean] = h.hook_calls(url)
    assert "사례 보기" in korean.body["blocks"][0]["text"]["text"]
    assert "show a case" not in json.dumps(korean.body["blocks"])  # a saved ko: Korean only
    _, url = await h.command("lang both", user_id="U7")
    await h.settle()
    _, url = await h.command("help", user_id="U7")
    await h.settle()
    [both] = h.hook_calls(url)
    assert "show a case" in both.body["blocks"][0]["text"]["text"]  # an en-US locale: English first
    assert "사례 보기" in both.body["blocks"][1]["elements"][0]["text"]
