"""APScheduler wiring for the digest: a job on the digest's slots that calls ``runner.run_due``, plus a
start-up catch-up.

The job fires on :class:`SlotTrigger`, the slots of ``bot.digest.slots`` (APScheduler's own cron trigger
loops forever on a repeated daylight-saving hour). Slots are read on the bot's clock, the one the
composition root builds; APScheduler sleeps by the wall clock it reads itself, so each trigger is handed
APScheduler's "now" and shifts its answer by the difference between the two (zero in production, the
chosen instant's offset when a test starts the bot at ``INCIDENT_BOT_TEST_NOW``).

The job store is in memory and private to this process; the storage ledger decides what is due, so a
missed slot is caught up at start-up and several processes never post the same period twice.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger

from bot.digest.runner import DigestError, DigestOutcome, DigestRunner
from bot.digest.slots import CronSlots
from bot.ops.clock import Clock

log = logging.getLogger(__name__)

JOB_ID = "incident-digest"
_RECHECK_MARGIN = timedelta(seconds=5)
# Slots are at least a minute apart: looking for the next one from half a minute after the last absorbs any
# jitter in the clock offset without ever skipping a slot.
_PAST_PREVIOUS = timedelta(seconds=30)


def clock_offset(clock: Clock, scheduler_now: datetime) -> timedelta:
    """How far the bot's clock is ahead of APScheduler's, in whole seconds (0 when they are one clock)."""
    return timedelta(seconds=round((clock() - scheduler_now).total_seconds()))


class SlotTrigger(BaseTrigger):  # type: ignore[misc]  # APScheduler 3 ships no type hints
    """Fires when the bot's clock reaches each slot of a cron expression; every answer is later than the
    one before."""

    def __init__(self, slots: CronSlots, clock: Clock) -> None:
        self.slots = slots
        self.clock = clock
        self.offset = timedelta(0)  # as of the last answer: the bot's clock minus APScheduler's

    def get_next_fire_time(self, previous_fire_time: datetime | None, now: datetime) -> datetime | None:
        offset = self.offset = clock_offset(self.clock, now)
        if previous_fire_time is not None:
            return self.slots.next_after(previous_fire_time + offset + _PAST_PREVIOUS) - offset
        return self.slots.next_after(self.clock() - timedelta(microseconds=1)) - offset

    def __str__(self) -> str:
        return f"slots[{self.slots.expression!r} in {self.slots.zone.key}]"


class OnceTrigger(BaseTrigger):  # type: ignore[misc]
    """Fires once, when the bot's clock reaches ``when``."""

    def __init__(self, when: datetime, clock: Clock) -> None:
        self.when = when
        self.clock = clock

    def get_next_fire_time(self, previous_fire_time: datetime | None, now: datetime) -> datetime | None:
        return None if previous_fire_time is not None else self.when - clock_offset(self.clock, now)

    def __str__(self) -> str:
        return f"once[{self.when.isoformat()}]"


class DigestSchedule:
    """Owns the scheduler. ``start()`` must run inside the event loop; it also performs the catch-up."""

    def __init__(self, runner: DigestRunner, clock: Clock) -> None:
        self.runner = runner
        self.clock = clock
        zone = ZoneInfo(runner.params.timezone)
        self.scheduler = AsyncIOScheduler(timezone=zone)
        self.trigger = SlotTrigger(CronSlots.parse(runner.params.cron, runner.params.timezone), clock)
        self.scheduler.add_job(
            self.fire,
            self.trigger,
            id=JOB_ID,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=None,
        )

    async def fire(self) -> DigestOutcome | None:
        """Run the due digest now; when another holder's lease or a failure blocks it, schedule a recheck
        after the lease so a crashed holder's digest still goes out. Never raises."""
        try:
            outcome = await self.runner.run_due(self.clock())
        except DigestError:
            log.exception("digest failed; will retry after the lease")
            self._recheck(self.clock() + timedelta(seconds=self.runner.params.lease_seconds))
            return None
        if outcome.status == "busy" and outcome.retry_at is not None:
            self._recheck(outcome.retry_at)
        return outcome

    def _recheck(self, when: datetime) -> None:
        self.scheduler.add_job(
            self.fire,
            OnceTrigger(when + _RECHECK_MARGIN, self.clock),
            id=f"{JOB_ID}-recheck",
            replace_existing=True,
            misfire_grace_time=None,  # a late recheck still runs: the ledger decides whether to post
        )

    async def start(self) -> DigestOutcome | None:
        """Start the job and post a slot missed while the bot was down (decided by the ledger)."""
        self.scheduler.start()
        return await self.fire()

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    def next_run_time(self) -> datetime | None:
        """When the next slot's run starts, on the bot's clock (in the digest's zone)."""
        job = self.scheduler.get_job(JOB_ID)
        if job is None or job.next_run_time is None:
            return None
        at: datetime = job.next_run_time
        return at + self.trigger.offset
