"""Payloads in the shapes Slack really sends (``tests/fixtures/slack``, each naming where its shape comes
from), replayed as signed requests: files that arrive as an id only, a log shared with a mention, text that
lives in rich-text blocks or in a forwarded or shared message, Slackbot's notices, an image in a DM, and
a mention in a thread reply that carries the error itself."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from conftest import NOW
from slack_harness import HarnessSlack, SlackHarness, harness_settings

from bot.app.service import IncidentService
from bot.library.case_store import CaseLibrary
from bot.ops.clock import fixed
from bot.storage import Storage

FIXTURES = Path(__file__).parent / "fixtures" / "slack"
ECC = "[rank29]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
ECC_CASES = ("IL-0427", "IL-0414")
XID79 = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."


def envelope(name: str, fake: HarnessSlack) -> dict[str, Any]:
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    assert data["_source"]  # every shape says where it comes from
    text = json.dumps(data["envelope"]).replace("FILES/", f"{fake.url}/files/")
    payload: dict[str, Any] = json.loads(text)
    return payload


async def replay(h: SlackHarness, name: str) -> None:
    body = envelope(name, h.fake)
    response = await h.post(json.dumps(body), "application/json")
    assert response.status_code == 200
    await h.settle()


def answered(h: SlackHarness) -> str:
    return "\n".join(json.dumps(call.body, ensure_ascii=False) for call in h.posts())


@pytest.fixture
async def h(fake: HarnessSlack, storage: Storage, library: CaseLibrary) -> AsyncIterator[SlackHarness]:
    service = IncidentService(library, storage, now=fixed(NOW), deadline_s=20.0)
    async with SlackHarness(fake, service, harness_settings(fake)) as harness:
        yield harness


def test_every_fixture_names_its_source() -> None:
    for path in FIXTURES.glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert len(data["_source"]) > 40 and data["envelope"]["type"] == "event_callback", path.name


async def test_a_slack_connect_file_is_looked_up_then_matched(h: SlackHarness) -> None:
    h.fake.files["F12345678"] = ECC.encode()
    await replay(h, "connect_file_share_check_file_info.json")
    assert [c.body.get("file") for c in h.fake.calls("files.info")] == ["F12345678"]
    assert any(case in answered(h) for case in ECC_CASES)


async def test_the_file_on_an_app_mention_is_matched(h: SlackHarness) -> None:
    h.fake.files["F04EEHX1EES"] = ECC.encode()
    await replay(h, "app_mention_with_file.json")
    assert h.fake.calls("files.info") and any(case in answered(h) for case in ECC_CASES)


async def test_a_log_shared_with_a_mention_is_answered_once_with_the_file(h: SlackHarness) -> None:
    h.fake.files["F0LOG"] = ECC.encode()
    message = envelope("message_file_share_with_mention.json", h.fake)
    mention = json.loads(json.dumps(message))
    mention["event_id"] = "Ev0FILEMEN2"
    mention["event"] = {**mention["event"], "type": "app_mention"}
    mention["event"].pop("channel_type")
    mention["event"].pop("subtype")
    for body in (message, mention):  # Slack sends both copies
        assert (await h.post(json.dumps(body), "application/json")).status_code == 200
    await h.settle()
    assert len(h.posts()) == 1 and any(case in answered(h) for case in ECC_CASES)


@pytest.mark.parametrize("name", ["rich_text_only.json", "forwarded_message.json", "share_with_comment.json"])
async def test_text_in_blocks_and_shared_messages_is_read(h: SlackHarness, name: str) -> None:
    await replay(h, name)
    (post,) = h.posts()
    assert any(case in json.dumps(post.body) for case in ECC_CASES)


async def test_slackbot_notices_are_ignored(h: SlackHarness) -> None:
    await replay(h, "slackbot_dm_notice.json")
    assert h.posts() == []


async def test_an_image_in_a_dm_says_only_text_can_be_matched(h: SlackHarness) -> None:
    await replay(h, "dm_image_upload.json")
    (post,) = h.posts()
    assert "Only text files and snippets can be matched" in post.body["text"]
    assert "텍스트 파일과 스니펫만 대조할 수 있습니다" in post.body["text"]
    assert not h.fake.calls("/files/F111")  # an image is never downloaded


async def test_a_message_with_text_and_the_same_rich_text_is_read_once(h: SlackHarness) -> None:
    """A typed message carries its words as ``text`` and again as ``rich_text`` blocks; formatting makes
    the two differ, and reading both would count every line twice."""
    await replay(h, "text_and_rich_text.json")
    (post,) = h.posts()
    shown = json.dumps(post.body, ensure_ascii=False)
    assert any(case in shown for case in ECC_CASES) and "×2" not in shown


async def test_a_thread_mention_carrying_the_error_is_matched_with_its_parent(h: SlackHarness) -> None:
    parent = {"type": "message", "user": "U222", "text": XID79}
    parent_ts = h.fake.add_message("C111", parent)
    body = envelope("thread_mention_with_error.json", h.fake)
    body["event"]["thread_ts"] = parent_ts
    assert (await h.post(json.dumps(body), "application/json")).status_code == 200
    await h.settle()
    (post,) = h.posts()
    assert post.body["thread_ts"] == parent_ts
    shown = json.dumps(post.body)
    assert any(case in shown for case in ECC_CASES)  # the mention's own error
    assert "IL-0415" in shown  # and the parent's, read from the thread
