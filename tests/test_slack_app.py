"""The Slack app end to end over loopback: signed requests into the real Bolt app in HTTP mode, replies
read back from the fake Web API. Every test runs on SQLite and (with TEST_DATABASE_URL) PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from conftest import NOW
from slack_harness import (
    BOT_TOKEN,
    BOT_USER,
    HarnessSlack,
    SlackHarness,
    harness_settings,
    mention_event,
    message_event,
    new_ts,
)

from bot.app.service import IncidentService
from bot.app.services import Services
from bot.library.case_store import CaseLibrary, load_library
from bot.model.excerpt import Excerpt
from bot.model.results import MatchResult
from bot.ops.clock import fixed
from bot.ops.settings import BUNDLED_CASES
from bot.slack.app import DUPLICATE_HEADER
from bot.slack.runtime import serve, start_slack
from bot.storage import Storage, open_storage
from handlers.files import FileDownloadError, download_file

PASTES = Path(__file__).parent / "fixtures" / "pastes"
ECC_LINE = "RuntimeError: CUDA error: uncorrectable ECC error encountered"
ECC_PASTE = (PASTES / "hw-ecc-pytorch-three-lines.txt").read_text()
WEAK_PASTE = (PASTES / "hw-oom-at-barrier-after-requeue.txt").read_text()
UNRELATED = """Traceback (most recent call last):
  File "train.py", line 88, in collate
    ids = batch["input_ids"]
KeyError: 'input_ids'"""


def make_service(library: CaseLibrary, storage: Storage) -> IncidentService:
    # A generous deadline: the tests are about Slack behaviour, not matcher speed on a busy CI box.
    return IncidentService(library, storage, now=fixed(NOW), deadline_s=20.0)


@pytest.fixture
async def h(fake: HarnessSlack, storage: Storage, library: CaseLibrary) -> AsyncIterator[SlackHarness]:
    async with SlackHarness(fake, make_service(library, storage), harness_settings(fake)) as harness:
        yield harness


def dumped(body: dict[str, Any]) -> str:
    return json.dumps({"text": body.get("text"), "blocks": body.get("blocks")}, ensure_ascii=False)


def section_texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["text"]["text"] for b in blocks if b.get("type") == "section"]


# -- signing -------------------------------------------------------------------------------------------


async def test_bad_or_stale_signature_gets_401_and_causes_nothing(h: SlackHarness) -> None:
    event = json.dumps({"type": "event_callback", "event_id": "Ev1", "event": message_event(ECC_PASTE)})
    bad = await h.post(event, "application/json", secret="not-the-secret")
    stale = await h.post(event, "application/json", timestamp=int(time.time()) - 301)
    command, _ = await h.command("IL-0427")  # a good one, for contrast
    assert (bad.status_code, stale.status_code, command.status_code) == (401, 401, 200)
    await h.settle()
    assert not h.posts()
    # Only the signed command reached the app: exactly one answer went out.
    assert len([c for c in h.fake.calls() if c.method.startswith("hooks/")]) == 1


async def test_rejected_request_makes_no_web_api_call(h: SlackHarness) -> None:
    body = "command=%2Fincident&text=IL-0427&user_id=U1&channel_id=C1&response_url=http%3A%2F%2Fx"
    response = await h.post(body, "application/x-www-form-urlencoded", secret="wrong")
    assert response.status_code == 401
    await h.settle()
    assert h.fake.calls() == []


# -- /incident ------------------------------------------------------------------------------------------

LANG_CASES = [
    ("en-US", None, "en"),
    ("ko-KR", None, "ko"),
    ("en-US", "ko", "ko"),
    ("ko-KR", "en", "en"),
    ("ko-KR", "both", "ko"),
    ("en-GB", "both", "en"),
]


@pytest.mark.parametrize(("locale", "pref", "first"), LANG_CASES)
async def test_lookup_follows_preference_then_locale(
    h: SlackHarness, locale: str, pref: str | None, first: str
) -> None:
    h.fake.user_locales["U7"] = locale
    if pref is not None:
        await asyncio.to_thread(h.service.storage.set_user_lang, "U7", pref)  # type: ignore[arg-type]
    response, url = await h.command("IL-0427", user_id="U7")
    assert response.status_code == 200
    await h.settle()
    [answer] = h.hook_calls(url)
    body = answer.body
    assert body["response_type"] == "ephemeral"
    assert body["blocks"][0]["type"] == "header" and "IL-0427" in body["blocks"][0]["text"]["text"]
    assert body["text"].startswith("IL-0427")
    texts = section_texts(body["blocks"])
    en = next((i for i, t in enumerate(texts) if t.startswith("*Summary*")), None)
    ko = next((i for i, t in enumerate(texts) if t.startswith("*요약*")), None)
    if pref in ("en", "ko"):  # a saved language: that one only
        assert (en is None, ko is None) == (first == "ko", first == "en")
    else:
        assert en is not None and ko is not None and (en < ko) == (first == "en")
    [actions] = [b for b in body["blocks"] if b["type"] == "actions"]
    assert actions["elements"][0]["action_id"] == "share_in_channel"
    assert actions["elements"][0]["value"].startswith("t:IL-0427~")  # sealed for this channel and user
    users_info = h.fake.calls("users.info")
    assert users_info and users_info[0].body.get("include_locale") in ("true", "1", True)


async def test_locale_is_cached_per_user(h: SlackHarness) -> None:
    for _ in range(3):
        await h.command("IL-0427", user_id="U8")
    await h.settle()
    assert len(h.fake.calls("users.info")) == 1


async def test_requests_arriving_together_share_one_locale_lookup(h: SlackHarness) -> None:
    """Three commands at once from one user: one users.info, not three racing ones."""
    await asyncio.gather(*(h.command("IL-0427", user_id="U7") for _ in range(3)))
    await h.settle()
    assert len([c for c in h.fake.calls("users.info") if c.body.get("user") == "U7"]) == 1


async def test_unknown_id_is_answered_with_the_closest_ids(h: SlackHarness) -> None:
    _, url = await h.command("IL-0426")
    await h.settle()
    [answer] = h.hook_calls(url)
    text = dumped(answer.body)
    assert "No case 'IL-0426'" in text
    assert "IL-0427" in text and "IL-0421" in text


async def test_share_button_posts_the_same_answer_publicly(h: SlackHarness) -> None:
    _, url = await h.command("IL-0427")
    await h.settle()
    [answer] = h.hook_calls(url)
    [actions] = [b for b in answer.body["blocks"] if b["type"] == "actions"]
    response, share_url = await h.click(actions["elements"][0]["value"])
    assert response.status_code == 200
    await h.settle()
    [shared] = h.hook_calls(share_url)
    assert shared.body["response_type"] == "in_channel"
    assert shared.body["replace_original"] in (False, "false")
    assert shared.body["blocks"] == [b for b in answer.body["blocks"] if b["type"] != "actions"]
    assert shared.body["text"] == answer.body["text"]


async def test_help_and_settings_have_no_share_button(h: SlackHarness) -> None:
    _, url = await h.command("help")
    _, lang_url = await h.command("lang ko")
    await h.settle()
    for call in (h.hook_calls(url)[0], h.hook_calls(lang_url)[0]):
        assert all(b["type"] != "actions" for b in call.body["blocks"])


async def test_long_paste_share_uses_the_reply_log(h: SlackHarness) -> None:
    paste = "\n".join(f"step {i} loss 2.31 lr 0.0001" for i in range(200)) + "\n" + ECC_PASTE
    assert len(paste) > 2000
    _, url = await h.command(paste)
    await h.settle()
    [answer] = h.hook_calls(url)
    [actions] = [b for b in answer.body["blocks"] if b["type"] == "actions"]
    value = actions["elements"][0]["value"]
    assert value.startswith("r:")
    _, share_url = await h.click(value)
    await h.settle()
    [shared] = h.hook_calls(share_url)
    assert shared.body["response_type"] == "in_channel"
    assert "IL-0427" in shared.body["blocks"][0]["text"]["text"]


# -- channel pastes -------------------------------------------------------------------------------------


async def test_channel_paste_is_answered_in_its_thread(h: SlackHarness) -> None:
    event = message_event(ECC_PASTE)
    response = await h.event(event)
    assert response.status_code == 200
    await h.wait_for(lambda: h.fake.posted("C1"))
    await h.settle()
    [post] = h.posts()
    assert post.body["thread_ts"] == event["ts"]
    assert "IL-0427" in post.body["text"]
    assert "link_names" not in post.body and "parse" not in post.body
    assert ECC_LINE in dumped(post.body)


async def test_paste_designed_to_ping_never_pings(h: SlackHarness) -> None:
    # Live tokens as Slack sends them, and the same typed as text (which Slack sends entity-encoded).
    line = f"<!channel> {ECC_LINE} <@U123> <https://evil.example|click> &lt;!channel&gt; &lt;!here&gt;"
    event = message_event(line + "\n" + ECC_PASTE)
    await h.event(event)
    await h.wait_for(lambda: h.fake.posted("C1"))
    await h.settle()
    [post] = h.posts()
    out = dumped(post.body)
    for live in ("<!channel>", "<!here>", "<@U123>", "<https://evil.example", "evil.example|"):
        assert live not in out
    assert "&lt;!channel&gt;" in out  # the typed mention is shown, escaped


async def test_retried_event_yields_one_reply(h: SlackHarness) -> None:
    event = message_event(ECC_PASTE)
    first = await h.event(event, event_id="EvRETRY1")
    await h.wait_for(lambda: h.fake.posted("C1"))
    retry = await h.event(event, event_id="EvRETRY1", retry_num=1, retry_reason="http_timeout")
    again = await h.event(event, event_id="EvRETRY1", retry_num=2, retry_reason="http_error")
    await h.settle()
    assert (first.status_code, retry.status_code, again.status_code) == (200, 200, 200)
    assert retry.headers.get(DUPLICATE_HEADER) == "duplicate"
    assert len(h.posts()) == 1


@pytest.mark.parametrize("first", ["message", "app_mention"])
async def test_message_and_mention_of_one_message_yield_one_reply(h: SlackHarness, first: str) -> None:
    ts = new_ts()
    text = f"<@{BOT_USER}> {ECC_PASTE}"
    as_message = message_event(text, ts=ts)
    as_mention = mention_event(text, ts=ts)
    order = [as_message, as_mention] if first == "message" else [as_mention, as_message]
    responses = await asyncio.gather(*(h.event(e) for e in order))
    assert [r.status_code for r in responses] == [200, 200]
    await h.settle()
    [post] = h.posts()
    assert post.body["thread_ts"] == ts
    assert "IL-0427" in post.body["text"]


async def test_same_event_in_two_processes_yields_one_reply(
    fake: HarnessSlack, storage: Storage, storage_url: str, library: CaseLibrary
) -> None:
    other_storage = open_storage(storage_url)  # a second connection, as a second process would have
    try:
        settings = harness_settings(fake)
        async with (
            SlackHarness(fake, make_service(library, storage), settings) as one,
            SlackHarness(fake, make_service(library, other_storage), settings) as two,
        ):
            event = message_event(ECC_PASTE)
            await asyncio.gather(one.event(event, event_id="EvTWO"), two.event(event, event_id="EvTWO"))
            await one.settle()
            await two.settle()
        assert len(fake.calls("chat.postMessage")) == 1
    finally:
        other_storage.close()


async def test_rate_limited_post_is_retried_once_and_lands_once(h: SlackHarness) -> None:
    h.fake.queue("chat.postMessage", 429, headers={"Retry-After": "1"})
    await h.event(message_event(ECC_PASTE))
    await h.wait_for(lambda: h.fake.posted("C1"), within=15)
    await h.settle()
    assert len(h.posts()) == 2  # the 429, then the retry
    assert len(h.fake.posted("C1")) == 1


async def test_snippet_of_5_mb_shared_as_a_file_is_answered_in_the_thread(h: SlackHarness) -> None:
    filler = b"2026-10-01 12:00:00 INFO step 1234 loss 2.3141 lr 0.0001 throughput 123.4 tokens/s\n"
    data = filler * (5_000_000 // len(filler)) + ECC_PASTE.encode()
    h.fake.files["F5MB"] = data
    event = message_event(
        "",
        subtype="file_share",
        files=[
            {
                "id": "F5MB",
                "name": "train.log",
                "title": "train.log",
                "mimetype": "text/plain",
                "filetype": "text",
                "pretty_type": "Plain Text",
                "mode": "snippet",
                "size": len(data),
                "url_private": f"{h.fake.url}/files/F5MB",
                "url_private_download": f"{h.fake.url}/files/F5MB",
            }
        ],
    )
    await h.event(event)
    await h.wait_for(lambda: h.fake.posted("C1"), within=20)
    await h.settle()
    [download] = h.fake.calls("/files/F5MB")
    assert download.headers["authorization"] == f"Bearer {BOT_TOKEN}"
    [post] = h.posts()
    assert post.body["thread_ts"] == event["ts"]
    assert "IL-0427" in post.body["text"]


async def test_unrelated_error_gets_no_reply(h: SlackHarness) -> None:
    await h.event(message_event(UNRELATED))
    await h.event(message_event(WEAK_PASTE))  # a weak candidate only: no unprompted reply either
    await h.settle()
    assert not h.posts()


async def test_bots_edits_and_deletions_are_ignored(h: SlackHarness) -> None:
    events = [
        message_event(ECC_PASTE, subtype="bot_message", bot_id="BOTHER", user=None),
        message_event(ECC_PASTE, bot_id="BOTHER", bot_profile={"id": "BOTHER"}),
        message_event(ECC_PASTE, user=BOT_USER, bot_id="BBOT"),  # our own post
        message_event(
            "",
            subtype="message_changed",
            hidden=True,
            message={"type": "message", "user": "U1", "text": ECC_PASTE, "ts": new_ts()},
        ),
        message_event("", subtype="message_deleted", hidden=True, deleted_ts=new_ts()),
    ]
    responses = [await h.event(e) for e in events]
    await h.settle()
    assert [r.status_code for r in responses] == [200] * len(events)
    assert not h.posts()


async def test_catch_all_answers_200_for_other_subtypes(h: SlackHarness) -> None:
    response = await h.event(message_event("<@U1> has joined the channel", subtype="channel_join"))
    await h.settle()
    assert response.status_code == 200
    assert not h.posts()


async def test_auto_off_silences_a_channel_and_noise_window_holds(h: SlackHarness) -> None:
    await h.event(message_event(ECC_PASTE, channel="C2"))
    await h.wait_for(lambda: h.fake.posted("C2"))
    await h.event(message_event(ECC_PASTE, channel="C2"))  # same case, same channel, within the window
    _, url = await h.command("auto off", channel_id="C3")
    await h.settle()
    assert "now off" in h.hook_calls(url)[0].body["text"]
    await h.event(message_event(ECC_PASTE, channel="C3"))
    await h.settle()
    assert len(h.fake.posted("C2")) == 1
    assert not h.fake.posted("C3")


# -- explicit requests: DMs and mentions ----------------------------------------------------------------


async def test_dm_is_answered_even_for_a_weak_match(h: SlackHarness) -> None:
    event = message_event(WEAK_PASTE, channel="D1", channel_type="im")
    await h.event(event)
    await h.wait_for(lambda: h.fake.posted("D1"))
    await h.settle()
    [post] = h.posts()
    assert "thread_ts" not in post.body  # a DM is answered in the conversation
    assert "IL-0427" in dumped(post.body)


async def test_dm_with_a_case_id_works_like_the_command(h: SlackHarness) -> None:
    await h.event(message_event("IL-0427", channel="D1", channel_type="im"))
    await h.wait_for(lambda: h.fake.posted("D1"))
    await h.settle()
    assert h.posts()[0].body["blocks"][0]["text"]["text"].startswith("IL-0427")


async def test_mention_in_a_thread_matches_the_parent(h: SlackHarness) -> None:
    parent_ts = h.fake.add_message("C1", {"type": "message", "user": "U1", "text": ECC_PASTE})
    event = mention_event(f"<@{BOT_USER}> what is this?", thread_ts=parent_ts)
    await h.event(event)
    await h.wait_for(lambda: len(h.fake.posted("C1")) == 2)
    await h.settle()
    [replies] = h.fake.calls("conversations.replies")
    assert replies.body["ts"] == parent_ts and str(replies.body["limit"]) == "1"
    [post] = h.posts()
    assert post.body["thread_ts"] == parent_ts
    assert "IL-0427" in post.body["text"]


async def test_top_level_mention_matches_its_own_text(h: SlackHarness) -> None:
    event = mention_event(f"<@{BOT_USER}> {WEAK_PASTE}")
    await h.event(event)
    await h.settle()
    [post] = h.posts()
    assert post.body["thread_ts"] == event["ts"]
    assert "IL-0427" in dumped(post.body)


# -- library edge cases ---------------------------------------------------------------------------------


def korean_only(tmp_path: Path) -> CaseLibrary:
    data = json.loads((BUNDLED_CASES / "IL-0427.json").read_text(encoding="utf-8"))

    def drop_english(node: Any) -> Any:
        if isinstance(node, dict):
            if "ko" in node and set(node) <= {"en", "ko"}:
                return {"ko": node["ko"]}
            return {key: drop_english(value) for key, value in node.items()}
        if isinstance(node, list):
            return [drop_english(item) for item in node]
        return node

    case = drop_english(data)
    case["id"] = "IL-0901"
    (tmp_path / "IL-0901.json").write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")
    library = load_library(tmp_path)
    assert len(library) == 1 and library.cases["IL-0901"].title.get("en") is None
    return library


async def test_korean_only_case_renders_and_says_english_is_missing(
    fake: HarnessSlack, storage: Storage, tmp_path: Path
) -> None:
    library = korean_only(tmp_path)
    async with SlackHarness(fake, make_service(library, storage), harness_settings(fake)) as h:
        _, url = await h.command("IL-0901")
        await h.event(message_event(ECC_PASTE))
        await h.wait_for(lambda: fake.posted("C1"))
        await h.settle()
    [answer] = h.hook_calls(url)
    text = dumped(answer.body)
    assert "no English text in the library yet" in text
    assert "요약" in text and "IL-0901" in answer.body["text"]
    [post] = h.posts()
    assert "IL-0901" in post.body["text"] and "no English text" in dumped(post.body)


# -- acks under load ------------------------------------------------------------------------------------


class _SlowMatchProbe(IncidentService):
    """Keeps matching a big paste (really, CPU-bound) until the test has timed another request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.started = threading.Event()
        self.release = threading.Event()
        self.done = threading.Event()

    def match(self, paste: str | bytes | Excerpt, *, slack_encoded: bool = True) -> MatchResult:
        result = super().match(paste, slack_encoded=slack_encoded)
        if result.truncated:  # the 10 MB file: its middle was skipped
            self.started.set()
            give_up = time.monotonic() + 15
            while not self.release.is_set() and time.monotonic() < give_up:
                result = super().match(paste, slack_encoded=slack_encoded)
            self.done.set()
        return result


@pytest.mark.timing
async def test_command_is_acked_while_a_10_mb_paste_is_matched(
    fake: HarnessSlack, storage: Storage, library: CaseLibrary
) -> None:
    service = _SlowMatchProbe(library, storage, now=fixed(NOW), deadline_s=20.0)
    filler = b"2026-10-01 12:00:00 INFO step 1234 loss 2.3141 lr 0.0001 throughput 123.4 tokens/s\n"
    fake.files["F10MB"] = filler * (10_000_000 // len(filler)) + ECC_PASTE.encode()
    file = {
        "id": "F10MB",
        "name": "big.log",
        "mimetype": "text/plain",
        "filetype": "text",
        "size": len(fake.files["F10MB"]),
        "url_private_download": f"{fake.url}/files/F10MB",
    }
    async with SlackHarness(fake, service, harness_settings(fake)) as h:
        await h.command("help")  # warm up: auth.test and the first connection
        await h.event(message_event("", subtype="file_share", files=[file]))
        assert await asyncio.to_thread(service.started.wait, 20)
        started = time.perf_counter()
        response, url = await h.command("IL-0427", user_id="U9")
        elapsed = time.perf_counter() - started
        still_matching = not service.done.is_set()
        service.release.set()
        await h.settle()
    assert response.status_code == 200
    assert still_matching, "the big match had finished before the command was acknowledged"
    assert elapsed < 3.0, f"ack took {elapsed:.2f}s"
    assert h.hook_calls(url) and fake.posted("C1")


# -- health and downloads -------------------------------------------------------------------------------


async def test_health_and_readiness(h: SlackHarness) -> None:
    assert h.http is not None
    health = await h.http.get("/healthz")
    ready = await h.http.get("/readyz")
    metrics = await h.http.get("/metrics")
    assert (health.status_code, health.text) == (200, "ok")
    assert ready.status_code == 200
    assert metrics.status_code == 200 and "incident_bot_events" in metrics.text


async def test_file_download_refuses_login_pages_and_keeps_head_and_tail(fake: HarnessSlack) -> None:
    ORIGINS = frozenset({fake.url})
    fake.files["F1"] = b"x" * 5000
    url = f"{fake.url}/files/F1"
    whole = await download_file(url, BOT_TOKEN, 10_000, max_file_bytes=10_000, allowed_origins=ORIGINS)
    assert whole.head == b"x" * 5000 and not whole.skipped_bytes
    with pytest.raises(FileDownloadError, match="login page"):
        await download_file(
            f"{fake.url}/files/NOPE", BOT_TOKEN, 10_000, max_file_bytes=10_000, allowed_origins=ORIGINS
        )  # an HTML page
    fake.files["F2"] = b"head\n" + b"y\n" * 10_000 + b"tail\n"
    url = f"{fake.url}/files/F2"
    streamed = await download_file(url, BOT_TOKEN, 1024, max_file_bytes=1 << 20, allowed_origins=ORIGINS)
    assert streamed.head.startswith(b"head") and streamed.tail.endswith(b"tail\n")
    assert streamed.skipped_lines == 10_002 - streamed.head.count(b"\n") - streamed.tail.count(b"\n")
    ranged = await download_file(
        url, BOT_TOKEN, 1024, max_file_bytes=4096, declared_size=len(fake.files["F2"]), allowed_origins=ORIGINS
    )
    assert ranged.head.startswith(b"head") and ranged.tail.endswith(b"tail\n") and ranged.skipped_lines is None
    assert [c.headers.get("range") for c in fake.calls("/files/F2")][-2:] == ["bytes=0-255", "bytes=-768"]
    fake.ranges = False  # a server that ignores Range: streamed up to the cap, and the end is said to be unread
    capped = await download_file(
        url, BOT_TOKEN, 1024, max_file_bytes=4096, declared_size=len(fake.files["F2"]), allowed_origins=ORIGINS
    )
    assert capped.unread_bytes > 0 and not capped.tail.endswith(b"tail\n")


async def test_app_home_opened_is_answered_200(h: SlackHarness) -> None:
    event = {"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "messages", "event_ts": new_ts()}
    response = await h.event(event)
    assert response.status_code == 200


async def test_runtime_starts_the_digest_schedule_and_stops_cleanly(
    fake: HarnessSlack, storage: Storage, library: CaseLibrary
) -> None:
    settings = harness_settings(fake, DIGEST_CHANNEL="CDIGEST", CASES_RELOAD_SECONDS=60)
    service = make_service(library, storage)
    server = await start_slack(settings, Services.around(service))
    try:
        names = {task.get_name() for task in server.background}
        assert server.schedule is not None and names == {"digest-catch-up", "examples-load", "reload-watch"}
        catch_up = next(t for t in server.background if t.get_name() == "digest-catch-up")
        await asyncio.wait([catch_up], timeout=10)
        assert server.schedule.scheduler.running and server.schedule.next_run_time() is not None
        host, port = server.addresses[0]
        async with httpx.AsyncClient() as client:
            health = await client.get(f"http://{host}:{port}/healthz")
        assert (health.status_code, health.text) == (200, "ok")
    finally:
        await server.stop()
    assert not server.schedule.scheduler.running
    stop = asyncio.Event()
    stop.set()  # serve() starts, sees the stop request, shuts down, exits 0
    assert await serve(harness_settings(fake), Services.around(service), stop) == 0


def test_manifest_declares_what_the_handlers_need() -> None:
    manifest = yaml.safe_load((Path(__file__).parent.parent / "deploy" / "slack-manifest.yaml").read_text())
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/incident"]
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert {"message.channels", "message.groups", "message.im", "app_mention", "app_home_opened"} <= events
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    needed = {"commands", "chat:write", "channels:history", "groups:history", "im:history"}
    assert needed | {"app_mentions:read", "users:read", "files:read"} <= scopes
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert manifest["settings"]["socket_mode_enabled"] is True


async def test_web_api_failure_is_logged_and_the_user_told(h: SlackHarness, caplog: pytest.LogCaptureFixture) -> None:
    h.fake.queue("chat.postMessage", 200, body={"ok": False, "error": "not_in_channel"})
    event = mention_event(f"<@{BOT_USER}> IL-0427")
    assert (await h.event(event)).status_code == 200
    await h.settle()
    _failed, notice = h.posts()  # the answer failed; the global error handler explained why
    assert "invite me" in notice.body["text"] and notice.body["thread_ts"] == event["ts"]
    assert any("not_in_channel" in r.getMessage() and "app_mention" in r.getMessage() for r in caplog.records)
    _, url = await h.command("IL-0427")  # and the process keeps serving
    await h.settle()
    assert h.hook_calls(url)
