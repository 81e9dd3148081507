"""``reply_for_message`` (how a click on a posted reply finds its reply-log entry) and votes on it, on
SQLite and (when TEST_DATABASE_URL is set) PostgreSQL; the in-memory storage is held to the same."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.storage import ReplyRecord, Storage, open_storage
from bot.storage.memory import MemoryStorage

T0 = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)


def _record(channel: str, message_ts: str, *case_ids: str, minutes: int = 0, tier: str = "exact") -> ReplyRecord:
    return ReplyRecord(
        channel=channel,
        message_ts=message_ts,
        thread_ts="100.1",
        case_ids=case_ids,
        tier=tier,
        created_at=T0 + timedelta(minutes=minutes),
        source="auto",
    )


def test_reply_for_message_finds_the_posted_reply(storage: Storage) -> None:
    first = storage.log_reply(_record("C1", "200.1", "IL-0427", "IL-0414"))
    storage.log_reply(_record("C2", "200.1", "IL-0421"))  # same ts in another channel
    storage.log_reply(_record("U1", "", "IL-0427"))  # an ephemeral answer: no ts
    found = storage.reply_for_message("C1", "200.1")
    assert found is not None
    assert (found.id, found.case_ids, found.tier, found.channel) == (first, ("IL-0427", "IL-0414"), "exact", "C1")
    other = storage.reply_for_message("C2", "200.1")
    assert other is not None and other.case_ids == ("IL-0421",)
    assert storage.reply_for_message("C1", "999.9") is None
    assert storage.reply_for_message("C3", "200.1") is None


def test_reply_for_message_never_matches_an_empty_ts(storage: Storage) -> None:
    storage.log_reply(_record("U1", "", "IL-0427"))
    assert storage.reply_for_message("U1", "") is None


def test_reply_for_message_returns_the_newest_of_duplicates(storage: Storage) -> None:
    storage.log_reply(_record("C1", "300.1", "IL-0414", minutes=0))
    newest = storage.log_reply(_record("C1", "300.1", "IL-0427", minutes=1))
    found = storage.reply_for_message("C1", "300.1")
    assert found is not None and found.id == newest


def test_votes_on_a_found_reply_are_one_per_user_and_changeable(storage: Storage) -> None:
    storage.log_reply(_record("C1", "400.1", "IL-0427", tier="strong"))
    found = storage.reply_for_message("C1", "400.1")
    assert found is not None and found.id is not None
    storage.record_feedback(found.id, "U1", "IL-0427", "helpful", "C1", found.tier, T0)
    storage.record_feedback(found.id, "U1", "IL-0427", "not_helpful", "C1", found.tier, T0)  # changed
    storage.record_feedback(found.id, "U2", "IL-0427", "helpful", "C1", found.tier, T0)
    [count] = storage.feedback_counts()
    assert (count.case_id, count.helpful, count.not_helpful) == ("IL-0427", 1, 1)


def test_reply_for_message_survives_a_second_connection(storage: Storage, storage_url: str) -> None:
    reply_id = storage.log_reply(_record("C1", "500.1", "IL-0427"))
    other = open_storage(storage_url)  # another process's view
    try:
        found = other.reply_for_message("C1", "500.1")
        assert found is not None and found.id == reply_id
    finally:
        other.close()


def test_memory_storage_has_the_same_semantics() -> None:
    test_reply_for_message_finds_the_posted_reply(MemoryStorage())
    test_reply_for_message_never_matches_an_empty_ts(MemoryStorage())
    test_reply_for_message_returns_the_newest_of_duplicates(MemoryStorage())
    test_votes_on_a_found_reply_are_one_per_user_and_changeable(MemoryStorage())
