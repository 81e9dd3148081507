"""Every storage behaviour, on SQLite and (when TEST_DATABASE_URL is set) PostgreSQL."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from bot.storage import ReplyRecord, Storage, StorageMisconfigured, open_storage
from bot.storage.memory import MemoryStorage
from bot.storage.migrate import head_revision

T0 = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)


def _run_in_threads(count: int, target: object) -> list[object]:
    """Run ``target(i)`` in ``count`` threads released together; results in thread order."""
    barrier = threading.Barrier(count)
    results: list[object] = [None] * count
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=10)
            results[index] = target(index)  # type: ignore[operator]
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors, errors
    return results


# ---------------------------------------------------------------------------------------------------
# lifecycle


def test_migrate_twice_and_ping(storage_url: str) -> None:
    first = open_storage(storage_url)
    first.migrate()
    first.set_user_lang("U1", "ko")
    first.migrate()
    second = open_storage(storage_url)
    second.migrate()
    assert second.ping()
    assert second.get_user_lang("U1") == "ko"
    assert second.schema_version() == head_revision() == "0007"  # type: ignore[attr-defined]  # backend extra
    first.close()
    second.close()


def test_concurrent_migrations_from_threads(storage_url: str) -> None:
    stores = [open_storage(storage_url) for _ in range(4)]
    _run_in_threads(4, lambda i: stores[i].migrate())
    assert all(store.ping() for store in stores)
    for store in stores:
        store.close()


def test_sqlite_url_creates_parent_directories(tmp_path: object) -> None:
    store = open_storage(f"sqlite:///{tmp_path}/deep/er/bot.sqlite3")
    store.migrate()
    assert store.ping()
    store.close()


@pytest.mark.parametrize(
    ("url", "engine"),
    [
        ("postgresql://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgres://u@h:6432/db?sslmode=require", "postgresql+psycopg://u@h:6432/db?sslmode=require"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
        ("sqlite:////var/lib/bot.sqlite3", "sqlite:////var/lib/bot.sqlite3"),
    ],
)
def test_database_url_forms_map_to_psycopg_3(url: str, engine: str) -> None:
    from bot.storage.dialects import engine_url

    assert engine_url(url) == engine


@pytest.mark.postgres
def test_a_postgres_scheme_url_opens_postgresql() -> None:
    """``postgres://`` (Heroku, many PaaS) opens the same database as ``postgresql://``, with psycopg 3."""
    from conftest import postgres_schema

    with postgres_schema() as url:
        assert url.startswith("postgresql://")
        store = open_storage("postgres://" + url.removeprefix("postgresql://"))
        store.migrate()
        assert store.ping() and store.engine.dialect.driver == "psycopg"  # type: ignore[attr-defined]
        assert store.schema_version() == head_revision()  # type: ignore[attr-defined]
        store.close()


@pytest.mark.parametrize(
    "url",
    ["postgresql://u:pw@127.0.0.1:notaport/test", "postgresql://u:pw@[::1/test"],
)
def test_a_malformed_url_is_one_line_without_the_password(url: str) -> None:
    with pytest.raises(StorageMisconfigured) as raised:
        open_storage(url)
    assert str(raised.value) == "DATABASE_URL is not a valid database URL"


def test_unknown_scheme_is_refused() -> None:
    with pytest.raises(StorageMisconfigured, match="DATABASE_URL must start with sqlite"):
        open_storage("mysql://x")


# ---------------------------------------------------------------------------------------------------
# event dedupe


def test_claim_event_dedupes_until_expiry(storage: Storage) -> None:
    assert storage.claim_event("Ev1", T0, 60)
    assert not storage.claim_event("Ev1", T0 + timedelta(seconds=59), 60)
    assert storage.claim_event("Ev2", T0, 60)
    assert storage.claim_event("Ev1", T0 + timedelta(seconds=60), 60)  # expired: claimable again
    assert not storage.claim_event("Ev1", T0 + timedelta(seconds=61), 60)


def test_claim_event_purges_many_keys(storage: Storage) -> None:
    for i in range(250):
        assert storage.claim_event(f"k{i}", T0 + timedelta(seconds=i), 1)
    assert not storage.claim_event("k249", T0 + timedelta(seconds=249), 1)


def test_claim_event_is_atomic_across_connections(storage: Storage, storage_url: str) -> None:
    stores = [open_storage(storage_url) for _ in range(8)]
    results = _run_in_threads(8, lambda i: stores[i].claim_event("race", T0, 60))
    assert results.count(True) == 1
    for store in stores:
        store.close()


# ---------------------------------------------------------------------------------------------------
# preferences


def test_preferences(storage: Storage) -> None:
    assert storage.get_user_lang("U1") is None
    storage.set_user_lang("U1", "ko")
    storage.set_user_lang("U1", "both")
    assert storage.get_user_lang("U1") == "both"
    assert storage.get_channel_auto("C1") is True
    storage.set_channel_auto("C1", False)
    assert storage.get_channel_auto("C1") is False
    storage.set_channel_auto("C1", True)
    assert storage.get_channel_auto("C1") is True


# ---------------------------------------------------------------------------------------------------
# reply log and feedback


def _reply(channel: str, case_ids: tuple[str, ...], minutes: int, ts: str = "1.0") -> ReplyRecord:
    return ReplyRecord(channel, ts, "0.1", case_ids, "strong", T0 + timedelta(minutes=minutes), "auto")


def test_reply_log_and_noise_window(storage: Storage) -> None:
    first = storage.log_reply(_reply("C1", ("ecc", "oom"), 0, "1.1"))
    second = storage.log_reply(_reply("C1", ("oom",), 10, "1.2"))
    storage.log_reply(_reply("C2", ("ecc",), 20, "1.3"))
    third = storage.log_reply(_reply("C1", ("ecc",), 30, "1.4"))
    assert len({first, second, third}) == 3
    got = storage.get_reply(first)
    assert got is not None
    assert got.case_ids == ("ecc", "oom")
    assert got.created_at == T0
    assert got.id == first
    assert got.message_ts == "1.1"
    assert storage.get_reply(999_999) is None
    assert storage.last_reply_for_case("C1", "ecc") == T0 + timedelta(minutes=30)
    assert storage.last_reply_for_case("C1", "oom") == T0 + timedelta(minutes=10)  # best case only
    assert storage.last_reply_for_case("C3", "ecc") is None
    since = storage.replies_since(T0 + timedelta(minutes=10))
    assert [r.message_ts for r in since] == ["1.2", "1.3", "1.4"]


def test_feedback_one_vote_per_user_changeable(storage: Storage) -> None:
    reply_id = storage.log_reply(_reply("C1", ("ecc",), 0))
    storage.record_feedback(reply_id, "U1", "ecc", "helpful", "C1", "strong", T0)
    storage.record_feedback(reply_id, "U1", "ecc", "helpful", "C1", "strong", T0)
    storage.record_feedback(reply_id, "U2", "ecc", "helpful", "C1", "strong", T0)
    storage.record_feedback(reply_id, "U2", "ecc", "not_helpful", "C1", "strong", T0)  # changed mind
    storage.record_feedback(reply_id, "U1", "aaa", "not_helpful", "C1", "strong", T0)
    counts = storage.feedback_counts()
    assert [(c.case_id, c.helpful, c.not_helpful) for c in counts] == [("aaa", 0, 1), ("ecc", 1, 1)]


# ---------------------------------------------------------------------------------------------------
# digest ledger


def test_ledger_claim_complete(storage: Storage) -> None:
    claim = storage.claim_digest("P1", "A", T0, 60)
    assert claim is not None
    assert (claim.attempt, claim.owner, claim.lease_until) == (1, "A", T0 + timedelta(seconds=60))
    assert storage.claim_digest("P1", "B", T0 + timedelta(seconds=30), 60) is None  # held
    storage.record_digest_cases("P1", "A", ("c2", "c1"))
    assert storage.digested_case_ids() == {"c1", "c2"}  # claimed counts, so nobody re-picks them
    assert storage.complete_digest("P1", "A", ("10.1", "10.2"), T0 + timedelta(seconds=5))
    entry = storage.get_digest("P1")
    assert entry is not None
    assert entry.status == "done"
    assert entry.case_ids == ("c2", "c1")
    assert entry.message_ts == ("10.1", "10.2")
    assert entry.completed_at == T0 + timedelta(seconds=5)
    assert storage.claim_digest("P1", "B", T0 + timedelta(days=1), 60) is None  # done stays done
    assert not storage.complete_digest("P1", "A", (), T0)
    assert storage.get_digest("nope") is None


def test_ledger_lease_takeover_and_lost_claim(storage: Storage) -> None:
    assert storage.claim_digest("P1", "A", T0, 60) is not None
    storage.record_digest_cases("P1", "A", ("c1",))
    assert storage.renew_digest("P1", "A", T0 + timedelta(seconds=50), 60)  # lease now until T0+110s
    assert storage.claim_digest("P1", "B", T0 + timedelta(seconds=100), 60) is None
    takeover = storage.claim_digest("P1", "B", T0 + timedelta(seconds=110), 60)
    assert takeover is not None
    assert takeover.attempt == 2
    entry = storage.get_digest("P1")
    assert entry is not None
    assert (entry.owner, entry.case_ids) == ("B", ("c1",))  # the chosen cases survive a takeover
    # A lost its claim: it can no longer renew, record or complete.
    assert not storage.renew_digest("P1", "A", T0 + timedelta(seconds=111), 60)
    storage.record_digest_cases("P1", "A", ("other",))
    assert not storage.complete_digest("P1", "A", ("1.0",), T0 + timedelta(seconds=112))
    assert storage.complete_digest("P1", "B", ("2.0",), T0 + timedelta(seconds=113))
    entry = storage.get_digest("P1")
    assert entry is not None
    assert (entry.status, entry.owner, entry.case_ids, entry.message_ts) == ("done", "B", ("c1",), ("2.0",))


def test_ledger_list_newest_first(storage: Storage) -> None:
    for key in ("2026-11-16T09:00+09:00", "2026-11-30T09:00+09:00", "2026-11-23T09:00+09:00"):
        assert storage.claim_digest(key, "A", T0, 60) is not None
    assert [e.period_key for e in storage.list_digests()] == [
        "2026-11-30T09:00+09:00",
        "2026-11-23T09:00+09:00",
        "2026-11-16T09:00+09:00",
    ]


def test_ledger_claim_is_atomic_across_connections(storage: Storage, storage_url: str) -> None:
    stores = [open_storage(storage_url) for _ in range(8)]
    claims = _run_in_threads(8, lambda i: stores[i].claim_digest("P", f"owner-{i}", T0, 60))
    assert sum(claim is not None for claim in claims) == 1
    later = T0 + timedelta(seconds=61)
    takeovers = _run_in_threads(8, lambda i: stores[i].claim_digest("P", f"late-{i}", later, 60))
    assert sum(claim is not None for claim in takeovers) == 1
    for store in stores:
        store.close()


def test_memory_storage_matches_the_ledger_semantics() -> None:
    memory = MemoryStorage()
    test_ledger_claim_complete(memory)
    other = MemoryStorage()
    test_ledger_lease_takeover_and_lost_claim(other)
    test_reply_log_and_noise_window(MemoryStorage())
    test_feedback_one_vote_per_user_changeable(MemoryStorage())
    test_preferences(MemoryStorage())
    test_claim_event_dedupes_until_expiry(MemoryStorage())
