"""Cron slots in a time zone, placed on the time line safely across daylight-saving changes.

A cron expression names local wall-clock times. Each wall time it matches is placed by one rule: a time
that occurs once is that instant; a time the clocks pass twice (the hour repeated when they go back) is its
first occurrence, so it fires once; a time the clocks skip (the hour lost when they go forward) is the
instant of the jump, as Vixie cron runs what was due in the skipped hour right after it. Skipped times that
land on the same instant are one slot. Placed slots never go backwards, and each is found in a bounded
number of steps.

APScheduler's ``CronTrigger`` does the field arithmetic here, on UTC, where it is exact; given a zone with
daylight saving it returns the same time again on a repeated hour, and a caller looping to the next slot
never ends (agronholm/apscheduler#1021, open for 3.11).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.cron import CronTrigger

# More than any backward jump of the clocks in the tz database (the largest since 1970 is 3 hours): a wall
# time further than this before the wall time of a moment is placed before the moment.
_MARGIN = timedelta(hours=26)
# How far to look for a slot before giving up (a yearly cron on Feb 29 still fits).
_SEARCH = timedelta(days=366 * 9)
_SECOND = timedelta(seconds=1)


@dataclass(frozen=True)
class CronSlots:
    """The slots of a 5-field cron expression in an IANA time zone. Build with :meth:`parse`."""

    expression: str
    zone: ZoneInfo
    _fields: CronTrigger

    @classmethod
    def parse(cls, expression: str, timezone: str) -> CronSlots:
        """Raises ValueError naming the problem for a bad expression or an unknown zone."""
        try:
            zone = ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{timezone!r} is not an IANA time zone") from None
        return cls(expression, zone, CronTrigger.from_crontab(expression, timezone=UTC))

    # -- the rule ---------------------------------------------------------------------------------------

    def wall(self, moment: datetime) -> datetime:
        """The local wall-clock time of an aware ``moment``, without a zone."""
        if moment.tzinfo is None:
            raise ValueError("moment must be timezone-aware")
        # Through UTC: ``astimezone`` to a moment's own zone returns it as it is, a skipped time included.
        return moment.astimezone(UTC).astimezone(self.zone).replace(tzinfo=None)

    def place(self, wall: datetime) -> datetime:
        """The instant a naive local ``wall`` time fires at, aware in the zone (the rule above)."""
        first = wall.replace(tzinfo=self.zone, fold=0)
        if self.wall(first) == wall:
            return first.astimezone(UTC).astimezone(self.zone)  # occurs (first occurrence when repeated)
        # Skipped: fold=1 reads it with the offset after the jump, fold=0 with the one before; the jump lies
        # between the two readings. Find its second by bisection (a skip is at most a day: 17 steps).
        low, high = wall.replace(tzinfo=self.zone, fold=1).astimezone(UTC), first.astimezone(UTC)
        if low > high:
            low, high = high, low
        while high - low > _SECOND:
            middle = low + (high - low) / 2
            if self.wall(middle) > wall:
                high = middle
            else:
                low = middle
        return high.replace(microsecond=0).astimezone(self.zone)

    def _walls(self, start: datetime, stop: datetime) -> Iterator[datetime]:
        """The naive wall times the expression matches in ``[start, stop]``, in order."""
        moment = start.replace(tzinfo=UTC)
        end = stop.replace(tzinfo=UTC)
        while moment <= end:
            fire: datetime | None = self._fields.get_next_fire_time(None, moment)
            if fire is None or fire > end:
                return
            yield fire.replace(tzinfo=None)
            moment = fire + _SECOND

    # -- queries ----------------------------------------------------------------------------------------

    def next_after(self, moment: datetime) -> datetime:
        """The first slot strictly after ``moment``. Raises ValueError when there is none within 9 years."""
        wall = self.wall(moment)
        for candidate in self._walls(wall - _MARGIN, wall + _SEARCH):
            placed = self.place(candidate)
            if placed > moment:
                return placed
        raise ValueError("the cron expression has no slot in the searched future")

    def latest_at_or_before(self, moment: datetime) -> datetime:
        """The latest slot at or before ``moment``. Raises ValueError when there is none within 9 years."""
        wall = self.wall(moment)
        window = timedelta(hours=1)
        while window <= _SEARCH * 2:
            latest: datetime | None = None
            for candidate in self._walls(wall - window, wall + _MARGIN):
                placed = self.place(candidate)
                if placed > moment:
                    break
                latest = placed
            if latest is not None:
                return latest
            window *= 2
        raise ValueError("the cron expression has no slot in the searched past")

    def before(self, slot: datetime) -> datetime:
        """The latest slot strictly before ``slot``. Raises like :meth:`latest_at_or_before`."""
        return self.latest_at_or_before(slot - _SECOND)
