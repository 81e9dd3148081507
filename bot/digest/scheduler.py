"""APScheduler wiring for the digest: a cron job that calls ``runner.run_due`` plus a start-up catch-up.

The job store is in memory and private to this process; the storage ledger decides what is due, so a
missed slot is caught up at start-up and several processes never post the same period twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger

from bot.digest.runner import DigestError, DigestOutcome, DigestRunner

log = logging.getLogger(__name__)

JOB_ID = "incident-digest"
_RECHECK_MARGIN = timedelta(seconds=5)


class DigestSchedule:
    """Owns the scheduler. ``start()`` must run inside the event loop; it also performs the catch-up."""

    def __init__(self, runner: DigestRunner, clock: Callable[[], datetime]) -> None:
        self.runner = runner
        self.clock = clock
        zone = ZoneInfo(runner.params.timezone)
        self.scheduler = AsyncIOScheduler(timezone=zone)
        self.scheduler.add_job(
            self.fire,
            CronTrigger.from_crontab(runner.params.cron, timezone=zone),
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
            DateTrigger(run_date=when + _RECHECK_MARGIN),
            id=f"{JOB_ID}-recheck",
            replace_existing=True,
            misfire_grace_time=None,  # a late recheck still runs: the ledger decides whether to post
        )

    async def start(self) -> DigestOutcome | None:
        """Start the cron job and post a slot missed while the bot was down (decided by the ledger)."""
        self.scheduler.start()
        return await self.fire()

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    def next_run_time(self) -> datetime | None:
        job = self.scheduler.get_job(JOB_ID)
        return job.next_run_time if job is not None else None
