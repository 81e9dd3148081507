"""Pure digest logic: slots and period keys, selection with an injected clock, rendering and splitting."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from conftest import make_case
from instants import Instant, every_instant

from bot.digest.content import (
    MAX_BLOCKS,
    MAX_MESSAGE_CHARS,
    MAX_SECTION_CHARS,
    DigestMessage,
    build_digest_messages,
    first_lesson,
    latest_slot,
    next_slot,
    period_key,
    previous_slot,
    select_new_cases,
)
from bot.replies.labels import label
from bot.replies.mrkdwn import escape_mrkdwn, link, truncate, unescape_mrkdwn

SEOUL = ZoneInfo("Asia/Seoul")
MONDAY_9_SEOUL = "0 9 * * mon"
# Monday 2026-11-30 09:00 Seoul is 2026-11-30 00:00 UTC.
SLOT = datetime(2026, 11, 30, 9, 0, tzinfo=SEOUL)


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# ---------------------------------------------------------------------------------------------------
# slots and period keys


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        ("2026-11-30T00:30:00", "2026-11-30T09:00+09:00"),  # Monday 09:30 Seoul
        ("2026-11-30T00:00:00", "2026-11-30T09:00+09:00"),  # exactly on the slot
        ("2026-11-29T23:59:59", "2026-11-23T09:00+09:00"),  # Monday 08:59:59 Seoul
        ("2026-12-05T12:00:00", "2026-11-30T09:00+09:00"),  # Saturday
    ],
)
def test_latest_slot_in_seoul(now: str, expected: str) -> None:
    assert period_key(latest_slot(MONDAY_9_SEOUL, "Asia/Seoul", _utc(now))) == expected


def test_same_instant_different_zone_gives_different_slot() -> None:
    now = _utc("2026-11-30T05:00:00")  # Monday 14:00 Seoul, Monday 05:00 UTC
    assert period_key(latest_slot(MONDAY_9_SEOUL, "UTC", now)) == "2026-11-23T09:00+00:00"
    assert period_key(latest_slot(MONDAY_9_SEOUL, "Asia/Seoul", now)) == "2026-11-30T09:00+09:00"


def test_previous_slot_and_dst_offsets_in_keys() -> None:
    slot = latest_slot(MONDAY_9_SEOUL, "America/New_York", _utc("2026-11-02T15:00:00"))
    assert period_key(slot) == "2026-11-02T09:00-05:00"
    assert period_key(previous_slot(MONDAY_9_SEOUL, "America/New_York", slot)) == "2026-10-26T09:00-04:00"


def test_slot_needs_an_aware_now() -> None:
    with pytest.raises(ValueError, match="aware"):
        latest_slot(MONDAY_9_SEOUL, "Asia/Seoul", datetime(2026, 11, 30, 9))


def test_every_minute_cron() -> None:
    now = _utc("2026-11-30T00:30:30")
    assert latest_slot("* * * * *", "UTC", now) == _utc("2026-11-30T00:30:00")


@pytest.mark.parametrize("instant", every_instant())
def test_the_slot_due_at_each_instant(instant: Instant) -> None:
    """The due slot at each fixed instant is the one worked out by hand; the one before it is earlier, the
    next one later than the instant, and all three are real times (answered within the test timeout)."""
    slot = latest_slot(instant.cron, instant.timezone, instant.at)
    assert period_key(slot) == instant.slot
    before = previous_slot(instant.cron, instant.timezone, slot)
    upcoming = next_slot(instant.cron, instant.timezone, instant.at)
    assert before < slot <= instant.at < upcoming
    assert latest_slot(instant.cron, instant.timezone, upcoming) == upcoming
    assert next_slot(instant.cron, instant.timezone, before) == slot


NEW_YORK = "America/New_York"


def test_a_slot_in_the_skipped_hour_fires_at_the_jump() -> None:
    """2027-03-14: 02:00 EST jumps to 03:00 EDT. 02:30 does not exist; it fires once, at 03:00 EDT."""
    keys = _keys("30 2 * * *", NEW_YORK, "2027-03-13T12:00:00", 3)
    assert keys == ["2027-03-14T03:00-04:00", "2027-03-15T02:30-04:00", "2027-03-16T02:30-04:00"]
    half_hourly = _keys("*/30 * * * *", NEW_YORK, "2027-03-14T06:10:00", 4)  # from 01:10 EST
    assert half_hourly == [
        "2027-03-14T01:30-05:00",
        "2027-03-14T03:00-04:00",
        "2027-03-14T03:30-04:00",
        "2027-03-14T04:00-04:00",
    ]


def test_a_slot_in_the_repeated_hour_fires_once() -> None:
    """2027-11-07: 02:00 EDT goes back to 01:00 EST. 01:30 happens twice and fires once, the first time;
    APScheduler's own cron trigger returns the second 01:30 for ever and its scheduler loop never ends."""
    assert _keys("30 1 * * *", NEW_YORK, "2027-11-06T12:00:00", 3) == [
        "2027-11-07T01:30-04:00",
        "2027-11-08T01:30-05:00",
        "2027-11-09T01:30-05:00",
    ]
    second_pass = datetime(2027, 11, 7, 1, 45, fold=1, tzinfo=ZoneInfo(NEW_YORK))
    assert period_key(latest_slot("30 1 * * *", NEW_YORK, second_pass)) == "2027-11-07T01:30-04:00"
    assert period_key(next_slot("30 1 * * *", NEW_YORK, second_pass)) == "2027-11-08T01:30-05:00"
    assert _keys("30 2 * * *", NEW_YORK, "2027-11-06T12:00:00", 2) == [
        "2027-11-07T02:30-05:00",
        "2027-11-08T02:30-05:00",
    ]


@pytest.mark.parametrize("ahead", [timedelta(0), timedelta(days=3, seconds=7)], ids=["same-clock", "test-clock-ahead"])
def test_the_scheduler_trigger_always_moves_forward(ahead: timedelta) -> None:
    """APScheduler asks its trigger again until the answer is after its now; each answer must be later, and
    is the slot on the bot's clock moved onto APScheduler's (``ahead``: the bot's clock minus its)."""
    from bot.digest.scheduler import SlotTrigger
    from bot.digest.slots import CronSlots

    for cron, start in (("30 1 * * *", "2027-11-06T00:00:00"), ("*/30 * * * *", "2027-11-07T04:00:00")):
        scheduler_now = [_utc(start) - ahead]  # APScheduler's wall clock; the bot's reads ``ahead`` more
        trigger = SlotTrigger(CronSlots.parse(cron, NEW_YORK), lambda at=scheduler_now: at[0] + ahead)
        fire, seen = trigger.get_next_fire_time(None, scheduler_now[0]), 0
        assert fire is not None and fire + ahead == next_slot(cron, NEW_YORK, _utc(start) - timedelta(seconds=1))
        scheduler_now[0] = _utc("2027-11-08T00:00:00") - ahead
        while fire is not None and fire <= scheduler_now[0]:  # the loop in APScheduler's Job._get_run_times
            following = trigger.get_next_fire_time(fire, scheduler_now[0])
            assert following is not None and following > fire
            assert latest_slot(cron, NEW_YORK, following + ahead) == following + ahead  # a slot, moved
            fire, seen = following, seen + 1
        assert 0 < seen < 200


def _keys(cron: str, timezone: str, start_utc: str, count: int) -> list[str]:
    moment, keys = _utc(start_utc), []
    for _ in range(count):
        moment = next_slot(cron, timezone, moment)
        keys.append(period_key(moment))
    return keys


# ---------------------------------------------------------------------------------------------------
# selection


def test_sunday_night_utc_is_monday_morning_in_seoul() -> None:
    sunday_night = make_case("sun", "2026-11-29T23:30:00Z")  # Monday 08:30 Seoul: before the slot
    monday_after = make_case("mon", "2026-11-30T00:30:00Z")  # Monday 09:30 Seoul: next period
    picked = select_new_cases([sunday_night, monday_after], set(), SLOT, 30)
    assert [c.id for c in picked] == ["sun"]


def test_selection_window_and_exclusions() -> None:
    cases = [
        make_case("old", (SLOT - timedelta(days=40)).isoformat()),
        make_case("edge", (SLOT - timedelta(days=30)).isoformat()),
        make_case("future", "2027-01-01"),
        make_case("unreviewed", None),
        make_case("done", "2026-11-25"),
        make_case("b", "2026-11-24T10:00:00+09:00"),
        make_case("a", "2026-11-24T10:00:00+09:00"),
        make_case("bare-date", "2026-11-20"),
        make_case("junk-date", "last tuesday"),
    ]
    picked = select_new_cases(cases, {"done"}, SLOT, 30)
    assert [c.id for c in picked] == ["edge", "bare-date", "a", "b"]


def test_selection_keeps_the_first_of_duplicate_ids() -> None:
    first = make_case("dup", "2026-11-24", org="First")
    second = make_case("dup", "2026-11-25", org="Second")
    assert [c.org for c in select_new_cases([first, second], set(), SLOT, 30)] == ["First"]


# ---------------------------------------------------------------------------------------------------
# rendering


def _all_text(message: DigestMessage) -> str:
    return json.dumps(message.blocks, ensure_ascii=False) + message.text


def _section_texts(message: DigestMessage) -> list[str]:
    return [b["text"]["text"] for b in message.blocks if b["type"] == "section"]


def _block_chars(message: DigestMessage) -> int:
    total = 0
    for block in message.blocks:
        if "text" in block:
            total += len(block["text"]["text"])
        for element in block.get("elements", []):
            total += len(element["text"])
    return total


def test_one_case_renders_everything_in_both_languages() -> None:
    case = make_case("gpu-ecc-1", "2026-11-24", org="Meta", date="2024-06-01", root_cause="hardware ECC")
    (message,) = build_digest_messages([case], previous_slot(MONDAY_9_SEOUL, "Asia/Seoul", SLOT), SLOT)
    section = _section_texts(message)[0]
    assert "<https://incidents.example/cases/gpu-ecc-1|gpu-ecc-1>" in section
    for expected in ("Meta", "2024-06-01", "hardware ECC", "Title of gpu-ecc-1", "gpu-ecc-1 제목"):
        assert expected in section
    assert "Check the ECC counters first. Then drain." in section
    assert "먼저 ECC 카운터를 확인한다. 그다음 드레인." in section
    header = message.blocks[0]
    assert header["type"] == "header"
    assert label("digest.title", "en") in header["text"]["text"]
    assert label("digest.title", "ko") in header["text"]["text"]
    context = message.blocks[1]["elements"][0]["text"]
    assert "2026-11-23 09:00 – 2026-11-30 09:00 KST" in context
    assert "Cases: 1" in context
    assert "사례 1건" in context
    assert message.case_ids == ("gpu-ecc-1",)
    assert "gpu-ecc-1" in message.text


def test_link_falls_back_to_first_source_then_plain_id() -> None:
    sourced = make_case("s", "2026-11-24", url=None, sources=[{"url": "https://blog.example/post?a=1&b=2"}])
    bare = make_case("bare", "2026-11-24", url=None)
    message = build_digest_messages([sourced, bare], None, SLOT)[0]
    first, second = _section_texts(message)
    assert first.startswith("*<https://blog.example/post?a=1%26b=2|s>*")
    assert second.startswith("*bare*")


def test_case_text_is_escaped_so_mentions_are_inert() -> None:
    case = make_case(
        "esc",
        "2026-11-24",
        title={"en": "<!channel> GPUs & <@U123> down", "ko": "<!here> 장애"},
        org="A<B>",
        lessons={"en": "Use <https://evil.example|this>", "ko": None},
    )
    (message,) = build_digest_messages([case], None, SLOT)
    everything = _all_text(message)
    for live in ("<!channel>", "<@U123>", "<!here>", "<https://evil.example"):
        assert live not in everything
    section = _section_texts(message)[0]
    assert "&lt;!channel&gt; GPUs &amp; &lt;@U123&gt; down" in section
    assert "A&lt;B&gt;" in section
    assert "&lt;!channel&gt;" in message.text


def test_missing_language_side_says_so() -> None:
    case = make_case("half", "2026-11-24", title={"en": "Only English"}, lessons={"ko": "한국어 교훈만 있다."})
    section = _section_texts(build_digest_messages([case], None, SLOT)[0])[0]
    assert label("missing", "ko") in section
    assert label("missing", "en") in section
    assert "Only English" in section
    assert "한국어 교훈만 있다." in section


def test_lang_order_puts_korean_first() -> None:
    case = make_case("k", "2026-11-24")
    section = _section_texts(build_digest_messages([case], None, SLOT, lang_order=("ko", "en"))[0])[0]
    assert section.index("k 제목") < section.index("Title of k")


def test_sixty_cases_split_within_block_kit_limits() -> None:
    cases = [make_case(f"case-{i:02d}", "2026-11-24") for i in range(60)]
    messages = build_digest_messages(cases, None, SLOT)
    assert len(messages) >= 2
    seen: list[str] = []
    for index, message in enumerate(messages, start=1):
        assert len(message.blocks) <= MAX_BLOCKS
        assert _block_chars(message) <= MAX_MESSAGE_CHARS
        assert all(len(text) <= MAX_SECTION_CHARS for text in _section_texts(message))
        assert f"({index}/{len(messages)})" in message.blocks[0]["text"]["text"]
        assert "Cases: 60" in message.blocks[1]["elements"][0]["text"]
        seen.extend(message.case_ids)
    assert seen == [c.id for c in cases]


def test_long_cases_split_on_the_text_budget() -> None:
    long_lesson = {"en": "x" * 5000, "ko": "가" * 5000}
    cases = [make_case(f"long-{i}", "2026-11-24", lessons=long_lesson, title={"en": "t" * 400}) for i in range(20)]
    messages = build_digest_messages(cases, None, SLOT)
    assert len(messages) > 1
    assert all(_block_chars(m) <= MAX_MESSAGE_CHARS for m in messages)
    assert [i for m in messages for i in m.case_ids] == [c.id for c in cases]


def test_one_huge_case_still_posts_truncated() -> None:
    huge = make_case(
        "huge",
        "2026-11-24",
        title={"en": "T&" * 20_000, "ko": "제목" * 20_000},
        org="O" * 5000,
        root_cause="R" * 50_000,
        lessons={"en": "L" * 100_000, "ko": "교훈" * 50_000},
    )
    (message,) = build_digest_messages([huge], None, SLOT)
    (section,) = _section_texts(message)
    assert len(section) <= MAX_SECTION_CHARS
    assert "…" in section
    assert not re.search(r"&(?!amp;|lt;|gt;)", section)
    assert _block_chars(message) <= MAX_MESSAGE_CHARS


def test_empty_period_posts_nothing_unless_asked() -> None:
    assert build_digest_messages([], None, SLOT) == []
    (note,) = build_digest_messages([], None, SLOT, post_empty=True)
    assert label("digest.empty", "en") in _all_text(note)
    assert label("digest.empty", "ko") in _all_text(note)
    assert note.case_ids == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two.", "One. Two."),
        ("First paragraph\ncontinues.\n\nSecond paragraph.", "First paragraph continues."),
        ("- first item\n- second item", "first item"),
        ("1. numbered\n2. next", "numbered"),
        ("A" * 400 + ". Second sentence.", "A" * 400 + "."),
        ("   ", ""),
    ],
)
def test_first_lesson(text: str, expected: str) -> None:
    assert first_lesson(text) == expected


# ---------------------------------------------------------------------------------------------------
# mrkdwn helpers


def test_escape_round_trip() -> None:
    raw = "a & b < c > d &amp;"
    assert escape_mrkdwn(raw) == "a &amp; b &lt; c &gt; d &amp;amp;"
    assert unescape_mrkdwn(escape_mrkdwn(raw)) == raw


def test_link_cannot_be_broken_out_of() -> None:
    assert link("https://x.example/a|b>c", "l|a<b") == "<https://x.example/a%7Cb%3Ec|l¦a&lt;b>"
    assert link("javascript:alert(1)", "x<") == "x&lt;"


def test_truncate_never_cuts_inside_an_entity_or_link() -> None:
    text = escape_mrkdwn("a&b<c>d&" * 30) + " <https://x.example|link> tail"
    for limit in range(1, len(text) + 2):
        cut = truncate(text, limit)
        assert len(cut) <= limit
        assert not re.search(r"&(?!amp;|lt;|gt;)", cut), (limit, cut)
        assert cut.count("<") == cut.count(">")
        if limit >= len(text):
            assert cut == text
        else:
            assert cut.endswith("…")
    with pytest.raises(ValueError, match="limit"):
        truncate("abc", 0)
