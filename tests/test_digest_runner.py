"""The digest runner end to end: real storage (SQLite, PostgreSQL) and the fake Slack Web API over loopback.

Exactly-once under concurrency and crashes uses real processes (forkserver) started on a barrier; clocks are
injected, so leases "expire" without waiting, and backoff sleeps are recorded instead of slept.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import queue
import signal
import time
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from conftest import make_case
from fake_slack import FakeSlack, wait_for
from instants import Instant, every_instant

from bot.digest.content import latest_slot, period_key
from bot.digest.plan import DigestPlan, plan_next_digest
from bot.digest.runner import DigestError, DigestParams, DigestRunner, RetryPolicy, digest_client
from bot.digest.scheduler import DigestSchedule
from bot.model.case import Case
from bot.storage import Storage, open_storage

SEOUL = ZoneInfo("Asia/Seoul")
CHANNEL = "CDIGEST"
SLOT = datetime(2026, 11, 30, 9, 0, tzinfo=SEOUL)
NOW = SLOT + timedelta(minutes=5)
KEY = "2026-11-30T09:00+09:00"
LEASE = 30
PARAMS = DigestParams(lease_seconds=LEASE, retry=RetryPolicy(attempts=4, base_seconds=0.01, max_seconds=0.05))


def week_cases(count: int = 3, reviewed: str = "2026-11-25T10:00:00+09:00") -> list[Case]:
    return [make_case(f"case-{i:02d}", reviewed) for i in range(count)]


class Sleeps:
    """Records backoff delays instead of sleeping them."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


def make_runner(
    storage: Storage,
    slack: FakeSlack,
    cases: Sequence[Case],
    now: datetime = NOW,
    params: DigestParams = PARAMS,
    sleep: Sleeps | None = None,
) -> DigestRunner:
    return DigestRunner(
        storage,
        digest_client("xoxb-test", slack.base_url),
        CHANNEL,
        params,
        cases=lambda: cases,
        clock=lambda: now,
        sleep=sleep or Sleeps(),
    )


def parts_of(slack: FakeSlack) -> list[tuple[str, int, int]]:
    out = []
    for message in slack.posted(CHANNEL):
        payload = message["metadata"]["event_payload"]
        out.append((payload["period"], payload["part"], payload["parts"]))
    return out


# ---------------------------------------------------------------------------------------------------
# in-process


async def test_due_digest_posts_once_then_nothing(storage: Storage, fake_slack: FakeSlack) -> None:
    cases = week_cases()
    outcome = await make_runner(storage, fake_slack, cases).run_due(NOW)
    assert outcome.status == "posted"
    assert outcome.period_key == KEY
    (message,) = fake_slack.posted(CHANNEL)
    assert message["metadata"] == {
        "event_type": "incident_digest",
        "event_payload": {"period": KEY, "part": 1, "parts": 1},
    }
    assert "case-00" in message["text"]
    entry = storage.get_digest(KEY)
    assert entry is not None
    assert entry.status == "done"
    assert entry.case_ids == ("case-00", "case-01", "case-02")
    assert entry.message_ts == (message["ts"],)
    # Same runner, and a fresh one (another owner), later in the week: nothing more.
    again = await make_runner(storage, fake_slack, cases).run_due(NOW + timedelta(days=2))
    assert again.status == "done"
    assert len(fake_slack.posted(CHANNEL)) == 1
    assert not fake_slack.calls("conversations.history")  # a first claim needs no history check


@pytest.mark.parametrize("instant", every_instant())
async def test_at_each_instant_the_due_digest_posts_once(
    storage: Storage, fake_slack: FakeSlack, instant: Instant
) -> None:
    """A case reviewed an hour before the slot due at the instant is posted once under that slot's key; a run
    little later posts nothing more."""
    slot = datetime.fromisoformat(instant.slot)
    cases = [make_case("case-00", (slot - timedelta(hours=1)).isoformat())]
    params = DigestParams(cron=instant.cron, timezone=instant.timezone, lease_seconds=LEASE, retry=PARAMS.retry)
    outcome = await make_runner(storage, fake_slack, cases, now=instant.at, params=params).run_due(instant.at)
    assert (outcome.status, outcome.period_key) == ("posted", instant.slot)
    later = instant.at + timedelta(seconds=30)
    assert (await make_runner(storage, fake_slack, cases, now=later, params=params).run_due(later)).status == "done"
    assert parts_of(fake_slack) == [(instant.slot, 1, 1)]


async def test_the_repeated_hour_posts_its_digest_once(storage: Storage, fake_slack: FakeSlack) -> None:
    new_york = ZoneInfo("America/New_York")
    params = DigestParams(cron="30 1 * * *", timezone="America/New_York", lease_seconds=LEASE, retry=PARAMS.retry)
    cases = [make_case("case-00", "2027-11-06T12:00:00-04:00")]
    first = datetime(2027, 11, 7, 1, 35, tzinfo=new_york)
    second = datetime(2027, 11, 7, 1, 35, fold=1, tzinfo=new_york)  # an hour later, the same wall time
    assert second.astimezone(UTC) - first.astimezone(UTC) == timedelta(hours=1)
    for moment in (first, second):
        await make_runner(storage, fake_slack, cases, now=moment, params=params).run_due(moment)
    assert parts_of(fake_slack) == [("2027-11-07T01:30-04:00", 1, 1)]


async def test_sixty_cases_post_as_tagged_parts(storage: Storage, fake_slack: FakeSlack) -> None:
    outcome = await make_runner(storage, fake_slack, week_cases(60)).run_due(NOW)
    parts = parts_of(fake_slack)
    assert len(parts) >= 2
    assert parts == [(KEY, i, len(parts)) for i in range(1, len(parts) + 1)]
    assert outcome.message_ts == tuple(m["ts"] for m in fake_slack.posted(CHANNEL))
    for call in fake_slack.calls("chat.postMessage"):
        assert len(call.body["blocks"]) <= 50


async def test_empty_week_posts_nothing_but_is_recorded(storage: Storage, fake_slack: FakeSlack) -> None:
    outcome = await make_runner(storage, fake_slack, []).run_due(NOW)
    assert outcome.status == "empty"
    assert fake_slack.posted(CHANNEL) == []
    noted = DigestParams(post_empty=True, lease_seconds=LEASE)
    next_week = NOW + timedelta(days=7)
    assert (await make_runner(storage, fake_slack, [], params=noted).run_due(next_week)).status == "posted"
    assert len(fake_slack.posted(CHANNEL)) == 1


def plan_for(storage: Storage, cases: Sequence[Case], now: datetime) -> DigestPlan:
    """What every preview shows: the console's, Slack's and ``digest --dry-run``."""
    slot = latest_slot(PARAMS.cron, PARAMS.timezone, now)
    return plan_next_digest(
        cases,
        storage.digested_case_ids(),
        storage.get_digest(period_key(slot)),
        cron=PARAMS.cron,
        timezone=PARAMS.timezone,
        lookback_days=PARAMS.lookback_days,
        now=now,
    )


def posted_ids(storage: Storage, key: str) -> tuple[str, ...]:
    entry = storage.get_digest(key)
    assert entry is not None and entry.status == "done"
    return entry.case_ids


async def test_the_plan_claims_nothing_and_lists_what_the_run_posts(storage: Storage, fake_slack: FakeSlack) -> None:
    cases = week_cases(2)
    plan = plan_for(storage, cases, NOW)
    assert plan.due and plan.key == KEY and [c.id for c in plan.cases] == ["case-00", "case-01"]
    assert plan.period_start == SLOT - timedelta(days=7) and plan.period_end.tzinfo == SEOUL
    assert storage.list_digests() == [] and fake_slack.calls("chat.postMessage") == []
    await make_runner(storage, fake_slack, cases).run_due(NOW)
    assert posted_ids(storage, KEY) == ("case-00", "case-01")
    # Posted: the next digest is the following week's, with what is known now.
    after = plan_for(storage, cases, NOW)
    assert not after.due and after.cases == () and after.period_start == SLOT
    assert after.period_end == SLOT + timedelta(days=7)
    late = make_case("late", "2026-12-01T10:00:00+09:00")
    later = plan_for(storage, [*cases, late], NOW + timedelta(days=2))
    assert [c.id for c in later.cases] == ["late"]
    await make_runner(storage, fake_slack, [*cases, late]).run_due(later.period_end)
    assert posted_ids(storage, later.key) == ("late",)


async def test_slack_500_then_success(storage: Storage, fake_slack: FakeSlack) -> None:
    fake_slack.queue("chat.postMessage", status=500, times=2)
    sleeps = Sleeps()
    outcome = await make_runner(storage, fake_slack, week_cases(), sleep=sleeps).run_due(NOW)
    assert outcome.status == "posted"
    assert len(fake_slack.calls("chat.postMessage")) == 3
    assert len(fake_slack.posted(CHANNEL)) == 1
    assert sleeps.delays == [0.01, 0.02]  # bounded exponential backoff
    assert len(fake_slack.calls("conversations.history")) == 2  # looked before each re-post


async def test_ambiguous_failure_that_landed_is_not_reposted(storage: Storage, fake_slack: FakeSlack) -> None:
    fake_slack.queue("chat.postMessage", status=503, process=True)  # stored, but the client saw a 503
    outcome = await make_runner(storage, fake_slack, week_cases()).run_due(NOW)
    assert outcome.status == "posted"
    assert len(fake_slack.posted(CHANNEL)) == 1
    assert outcome.message_ts == (fake_slack.posted(CHANNEL)[0]["ts"],)


@pytest.mark.parametrize("landed", [True, False], ids=["dropped-after-posting", "dropped-before-posting"])
async def test_connection_dropped_mid_post(storage: Storage, fake_slack: FakeSlack, landed: bool) -> None:
    fake_slack.queue("chat.postMessage", status=0, process=landed)
    outcome = await make_runner(storage, fake_slack, week_cases()).run_due(NOW)
    assert outcome.status == "posted"
    assert len(fake_slack.posted(CHANNEL)) == 1
    assert len(fake_slack.calls("chat.postMessage")) == (1 if landed else 2)


async def test_rate_limited_waits_retry_after(storage: Storage, fake_slack: FakeSlack) -> None:
    fake_slack.queue("chat.postMessage", status=429, headers={"Retry-After": "1"})
    sleeps = Sleeps()
    outcome = await make_runner(storage, fake_slack, week_cases(), sleep=sleeps).run_due(NOW)
    assert outcome.status == "posted"
    assert sleeps.delays == [1.0]
    assert len(fake_slack.posted(CHANNEL)) == 1
    assert not fake_slack.calls("conversations.history")  # a 429 was not processed: no need to look


async def test_retries_are_bounded_and_the_claim_expires(storage: Storage, fake_slack: FakeSlack) -> None:
    fake_slack.queue("chat.postMessage", status=500, times=PARAMS.retry.attempts)
    with pytest.raises(DigestError):
        await make_runner(storage, fake_slack, week_cases()).run_due(NOW)
    assert fake_slack.posted(CHANNEL) == []
    busy = await make_runner(storage, fake_slack, week_cases()).run_due(NOW + timedelta(seconds=1))
    assert busy.status == "busy"
    assert busy.retry_at is not None
    later = busy.retry_at + timedelta(seconds=1)
    outcome = await make_runner(storage, fake_slack, week_cases(), now=later).run_due(later)
    assert outcome.status == "posted"
    assert len(fake_slack.posted(CHANNEL)) == 1


async def test_refused_post_is_not_retried(storage: Storage, fake_slack: FakeSlack) -> None:
    fake_slack.queue("chat.postMessage", status=200, body={"ok": False, "error": "channel_not_found"})
    with pytest.raises(DigestError, match="channel_not_found"):
        await make_runner(storage, fake_slack, week_cases()).run_due(NOW)
    assert len(fake_slack.calls("chat.postMessage")) == 1


async def test_takeover_posts_only_the_missing_parts(storage: Storage, fake_slack: FakeSlack) -> None:
    cases = week_cases(60)
    # The first owner posts part 1, then dies before part 2 (its claim stays until the lease expires).
    first = make_runner(storage, fake_slack, cases)
    original_post = first.client.chat_postMessage
    posted_once: list[int] = []

    async def post_then_die(**kwargs: Any) -> Any:
        if posted_once:
            raise DigestError("process died")
        posted_once.append(1)
        return await original_post(**kwargs)

    first.client.chat_postMessage = post_then_die  # type: ignore[method-assign]
    with pytest.raises(DigestError):
        await first.run_due(NOW)
    assert len(fake_slack.posted(CHANNEL)) == 1
    later = NOW + timedelta(seconds=LEASE + 1)
    outcome = await make_runner(storage, fake_slack, cases, now=later).run_due(later)
    assert outcome.status == "posted"
    assert outcome.skipped_parts == 1
    parts = parts_of(fake_slack)
    assert sorted(p for _, p, _ in parts) == list(range(1, parts[0][2] + 1))  # each part exactly once


async def test_restart_after_missed_mondays_posts_once(storage: Storage, fake_slack: FakeSlack) -> None:
    earlier = make_case("before", "2026-11-12T10:00:00+09:00")
    missed_one = make_case("missed-1", "2026-11-18T10:00:00+09:00")  # for the 11-23 slot (missed)
    missed_two = make_case("missed-2", "2026-11-25T10:00:00+09:00")  # for the 11-30 slot (missed)
    cases = [earlier, missed_one, missed_two]
    before_outage = datetime(2026, 11, 16, 9, 1, tzinfo=SEOUL)
    assert (await make_runner(storage, fake_slack, cases).run_due(before_outage)).status == "posted"
    # Down from 11-17 to Tuesday 12-01: start-up catches up the latest missed slot, once.
    tuesday = datetime(2026, 12, 1, 10, 0, tzinfo=SEOUL)
    for _ in range(2):  # two restarts in a row
        schedule = DigestSchedule(make_runner(storage, fake_slack, cases, now=tuesday), clock=lambda: tuesday)
        try:
            await schedule.start()
            assert schedule.next_run_time() == datetime(2026, 12, 7, 9, 0, tzinfo=SEOUL)
        finally:
            schedule.shutdown()
    assert [p for p, _, _ in parts_of(fake_slack)] == ["2026-11-16T09:00+09:00", KEY]
    assert storage.get_digest("2026-11-23T09:00+09:00") is None  # only the latest missed slot posts
    entry = storage.get_digest(KEY)
    assert entry is not None
    assert entry.case_ids == ("missed-1", "missed-2")


async def test_scheduler_rechecks_after_a_foreign_lease(storage: Storage, fake_slack: FakeSlack) -> None:
    assert storage.claim_digest(KEY, "someone-else", NOW, LEASE) is not None
    schedule = DigestSchedule(make_runner(storage, fake_slack, week_cases()), clock=lambda: NOW)
    try:
        outcome = await schedule.fire()
        assert outcome is not None
        assert outcome.status == "busy"
        recheck = schedule.scheduler.get_job("incident-digest-recheck")
        assert recheck is not None
    finally:
        schedule.shutdown()


async def test_stale_claim_of_an_older_period_is_finished(storage: Storage, fake_slack: FakeSlack) -> None:
    old_key = "2026-11-23T09:00+09:00"
    old_slot = datetime(2026, 11, 23, 9, 0, tzinfo=SEOUL)
    cases = [make_case("old-case", "2026-11-20T10:00:00+09:00"), make_case("new-case", "2026-11-25")]
    assert storage.claim_digest(old_key, "crashed", old_slot, LEASE) is not None
    storage.record_digest_cases(old_key, "crashed", ("old-case",))
    await make_runner(storage, fake_slack, cases).run_due(NOW)
    assert sorted(p for p, _, _ in parts_of(fake_slack)) == [old_key, KEY]
    entry = storage.get_digest(KEY)
    assert entry is not None
    assert entry.case_ids == ("new-case",)


# ---------------------------------------------------------------------------------------------------
# real processes


# Children are forked from a server that imported this module once (not spawned, each importing it again):
# real, separate processes with no state of the test's, at a fraction of the start-up cost.
_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload([__name__, "alembic.command", "bot.storage.migrate"])
CHILD_DEADLINE = 120.0  # seconds for a spawned child to start, migrate and run, on a loaded 2-core machine


def _child_run(
    storage_url: str, base_url: str, now: str, cases: int, barrier: Any, results: Any, migrate: bool
) -> None:
    """Runs in a spawned process: open storage, (migrate,) wait on the barrier, run the due digest. Puts
    ``("ok", status)`` or ``("error", traceback)``: a child that fails says why, in the test's report."""
    try:
        store = open_storage(storage_url)
        if migrate:
            store.migrate()
        moment = datetime.fromisoformat(now)
        runner = DigestRunner(
            store,
            digest_client("xoxb-test", base_url),
            CHANNEL,
            PARAMS,
            cases=lambda: week_cases(cases),
            clock=lambda: moment,
        )
        if barrier is not None:
            barrier.wait(timeout=CHILD_DEADLINE)
        outcome = asyncio.run(runner.run_due(moment))
        store.close()
    except BaseException:
        results.put(("error", traceback.format_exc()))
        raise
    results.put(("ok", outcome.status))


def _spawn(target_args: tuple[Any, ...]) -> multiprocessing.process.BaseProcess:
    process = _CONTEXT.Process(target=_child_run, args=target_args, daemon=True)
    process.start()
    return process


def _outcomes(results: Any, processes: list[multiprocessing.process.BaseProcess]) -> list[str]:
    """Each child's status, waiting for all of them against one deadline (a child that died without a word
    ends the wait at once); a child's error fails the test with its traceback."""
    deadline = time.monotonic() + CHILD_DEADLINE
    said: list[tuple[str, str]] = []
    while len(said) < len(processes) and time.monotonic() < deadline:
        try:
            said.append(results.get(timeout=0.2))
        except queue.Empty:
            if all(process.exitcode is not None for process in processes) and results.empty():
                break
    for process in processes:
        process.join(timeout=max(0.1, deadline - time.monotonic()))
    errors = [text for kind, text in said if kind == "error"]
    assert not errors, "a child failed:\n" + "\n".join(errors)
    assert [process.exitcode for process in processes] == [0] * len(processes), f"children said {said}"
    return sorted(text for _, text in said)


@pytest.mark.timing
def test_two_processes_on_a_barrier_post_once(storage_url: str, fake_slack: FakeSlack) -> None:
    context = _CONTEXT
    barrier = context.Barrier(2)
    results = context.Queue()
    args = (storage_url, fake_slack.base_url, NOW.isoformat(), 3, barrier, results, True)
    statuses = _outcomes(results, [_spawn(args) for _ in range(2)])
    assert statuses[0] in ("busy", "done")
    assert statuses[1] == "posted"
    assert len(fake_slack.posted(CHANNEL)) == 1


@pytest.mark.timing
@pytest.mark.parametrize("landed", [True, False], ids=["held-post-landed", "held-post-lost"])
def test_sigkill_while_post_is_held(storage: Storage, storage_url: str, fake_slack: FakeSlack, landed: bool) -> None:
    context = _CONTEXT
    fake_slack.hold("chat.postMessage")
    results = context.Queue()  # kept referenced until the child has unpickled it
    process = _spawn((storage_url, fake_slack.base_url, NOW.isoformat(), 3, None, results, False))
    try:
        wait_for(lambda: fake_slack.held("chat.postMessage") == 1, timeout=30)
        os.kill(process.pid or 0, signal.SIGKILL)
        process.join(timeout=10)
        assert process.exitcode == -signal.SIGKILL
    finally:
        fake_slack.release("chat.postMessage", record=landed)
    if landed:
        wait_for(lambda: len(fake_slack.posted(CHANNEL)) == 1)
    else:
        wait_for(lambda: fake_slack.held("chat.postMessage") == 0)
    entry = storage.get_digest(KEY)
    assert entry is not None
    assert entry.status == "claimed"
    # Before the lease expires nobody else posts; after it, exactly one post in total.
    assert asyncio.run(make_runner(storage, fake_slack, week_cases()).run_due(NOW)).status == "busy"
    later = NOW + timedelta(seconds=LEASE + 1)
    outcome = asyncio.run(make_runner(storage, fake_slack, week_cases(), now=later).run_due(later))
    assert outcome.status == "posted"
    assert outcome.skipped_parts == (1 if landed else 0)
    (message,) = fake_slack.posted(CHANNEL)
    done = storage.get_digest(KEY)
    assert done is not None
    assert done.status == "done"
    assert done.attempt == 2
    assert done.message_ts == (message["ts"],)
