"""Button values bound to where they were shown (``bot.replies.seal``) and the check every click passes
(``bot.app.clicked``), called directly: the seal's format is pinned (a value sealed by the previous
release must still unseal after an upgrade), and each way a click can fail to fit its reply is refused."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest
from conftest import NOW

from bot.app.clicked import clicked_reply
from bot.model.results import Reply
from bot.replies.buttons import Click
from bot.replies.seal import SEPARATOR, TAG_CHARS, derive_key, seal, seal_reply, unseal
from bot.storage.base import ReplyRecord
from bot.storage.memory import MemoryStorage

KEY = derive_key("deployment-secret")
VALUE = '{"v":1}'


def test_the_key_is_derived_for_its_purpose_and_is_not_the_secret() -> None:
    # Derived here, not at import: the mutation run (make mutants) switches code in after the import.
    assert derive_key("deployment-secret").hex() == "603cd1dac1f984e584a062eae42dd2660c8d5e00aa26bf38395f88292ec7f831"
    assert derive_key("deployment-secret", "another purpose") != KEY
    assert derive_key("another-secret") != KEY and len(KEY) == 32


def test_a_sealed_value_keeps_its_format_across_releases() -> None:
    assert seal(VALUE, KEY, "C1", "U1") == VALUE + "~YzRFNLg8f2KiFgR2"
    assert seal(VALUE, KEY, "C1", None) == VALUE + "~RWz22d3HvRWUi0Iq"
    assert len(seal(VALUE, KEY, "C1", None)) == len(VALUE) + len(SEPARATOR) + TAG_CHARS


def test_a_value_unseals_only_where_and_for_whom_it_was_sealed() -> None:
    private = seal(VALUE, KEY, "C1", "U1")
    assert unseal(private, KEY, "C1", "U1") == VALUE
    assert unseal(private, KEY, "C2", "U1") is None  # copied into another channel
    assert unseal(private, KEY, "C1", "U2") is None  # replayed by another person
    assert unseal(private, derive_key("other deployment"), "C1", "U1") is None
    posted = seal(VALUE, KEY, "C1", None)
    assert unseal(posted, KEY, "C1", "U1") == unseal(posted, KEY, "C1", "U9") == VALUE
    assert unseal(posted, KEY, "C2", "U1") is None


@pytest.mark.parametrize(
    "sealed",
    [
        VALUE,  # never sealed
        VALUE + "~",  # no tag
        VALUE + "~YzRFNLg8f2KiFgR",  # one character short
        VALUE + "~YzRFNLg8f2KiFgR2A",  # one too many
        '{"v":2}~YzRFNLg8f2KiFgR2',  # another value under the same tag
        "",
    ],
)
def test_a_tampered_or_truncated_value_does_not_unseal(sealed: str) -> None:
    assert unseal(sealed, KEY, "C1", "U1") is None


@pytest.mark.parametrize("value", ['{"x":["a~b"]}', '{"x":["\ud800 half a pair"]}', '{"x":["노드"]}'])
def test_any_value_round_trips(value: str) -> None:
    """The separator inside a value, a lone surrogate (JSON of a pasted byte) and Korean text."""
    assert unseal(seal(value, KEY, "C1", "U1"), KEY, "C1", "U1") == value


def test_seal_reply_seals_button_values_in_actions_blocks_only() -> None:
    section = {
        "type": "section",
        "text": {"type": "mrkdwn", "text": "x"},
        "accessory": {"type": "button", "value": "a"},
    }
    actions = {
        "type": "actions",
        "elements": [
            {"type": "button", "action_id": "helpful", "value": "one"},
            {"type": "button", "action_id": "link", "url": "https://example.com"},
            {"type": "static_select", "action_id": "pick", "value": "two"},
        ],
    }
    reply = Reply(text="t", blocks=[section, actions], plain="p", case_ids=["IL-0414"])
    sealed = seal_reply(reply, KEY, "C1", "U1")
    assert sealed.blocks[0] == section
    helpful, link, select = sealed.blocks[1]["elements"]
    assert helpful == {"type": "button", "action_id": "helpful", "value": seal("one", KEY, "C1", "U1")}
    assert link == actions["elements"][1] and select == actions["elements"][2]
    assert reply.blocks[1]["elements"][0]["value"] == "one"  # the original is not changed
    assert (sealed.text, sealed.plain, sealed.case_ids) == ("t", "p", ["IL-0414"])


def logged(
    storage: MemoryStorage,
    *,
    channel: str = "C1",
    ts: str = "1700000000.000100",
    cases: tuple[str, ...] = ("IL-0414", "IL-0427"),
) -> int:
    return storage.log_reply(ReplyRecord(channel, ts, "1700000000.000001", cases, "strong", NOW - timedelta(minutes=1)))


def click(
    value: dict[str, object],
    *,
    channel: str = "C1",
    user: str = "U1",
    sealed_for: tuple[str, str | None] = ("C1", None),
    ts: str = "1700000000.000100",
    ephemeral: bool = False,
) -> Click:
    raw = json.dumps(value, separators=(",", ":"))
    return Click("helpful", seal(raw, KEY, *sealed_for), user, channel, ts, ephemeral)


def test_a_click_on_a_posted_reply_finds_its_reply_by_channel_and_message() -> None:
    storage = MemoryStorage()
    reply_id = logged(storage)
    found = clicked_reply(click({"v": 1, "c": "IL-0414", "l": "en"}), KEY, storage)
    assert found is not None
    payload, record = found
    assert payload.case_id == "IL-0414" and record.id == reply_id and record.channel == "C1"


def test_a_click_naming_its_reply_finds_it_by_id() -> None:
    storage = MemoryStorage()
    reply_id = logged(storage, ts="")
    found = clicked_reply(
        click({"v": 1, "c": "IL-0414", "l": "en", "r": reply_id}, ts="", ephemeral=True), KEY, storage
    )
    assert found is not None and found[1].id == reply_id


def test_a_click_that_does_not_fit_its_reply_is_refused() -> None:
    storage = MemoryStorage()
    reply_id = logged(storage)
    other_channel = logged(storage, channel="C2", ts="1700000000.000200")
    best = {"v": 1, "c": "IL-0414", "l": "en"}
    refused = {
        "not ours": Click("helpful", "hello", "U1", "C1", "1700000000.000100", False),
        "sealed elsewhere": click(best, sealed_for=("C2", None)),
        "unknown message": click(best, ts="1700000000.999999"),
        "ephemeral without an id": click(best, ephemeral=True),
        "no channel": replace(click(best), channel_id=""),
        "a runner-up as the best case": click({**best, "c": "IL-0427"}),
        "a case the reply never named": click({**best, "c": "IL-0999"}),
        "unknown reply id": click({**best, "r": reply_id + 100}),
        # A value sealed for C1 that names a reply posted in C2.
        "a reply from another channel": click({**best, "r": other_channel}),
    }
    for why, given in refused.items():
        assert clicked_reply(given, KEY, storage) is None, why


def test_any_case_accepts_a_runner_up_but_still_checks_the_channel() -> None:
    storage = MemoryStorage()
    logged(storage)
    runner = {"v": 1, "c": "IL-0427", "l": "en"}
    found = clicked_reply(click(runner), KEY, storage, any_case=True)
    assert found is not None and found[0].case_id == "IL-0427"
    assert clicked_reply(click({**runner, "c": "IL-0999"}), KEY, storage, any_case=True) is not None
    assert clicked_reply(click(runner, sealed_for=("C2", None), channel="C2"), KEY, storage, any_case=True) is None


def test_a_private_answer_is_clicked_by_the_one_person_who_saw_it() -> None:
    storage = MemoryStorage()
    reply_id = storage.log_reply(ReplyRecord("U1", "", "", ("IL-0414",), "strong", NOW, source="dm"))
    value = {"v": 1, "c": "IL-0414", "l": "en", "r": reply_id}
    assert clicked_reply(click(value, channel="D1", sealed_for=("D1", "U1"), ts="", ephemeral=True), KEY, storage)
    assert (
        clicked_reply(
            click(value, channel="D1", user="U2", sealed_for=("D1", "U2"), ts="", ephemeral=True), KEY, storage
        )
        is None
    )
