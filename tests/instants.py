"""The fixed instants the date-sensitive tests run at, besides ``conftest.NOW``.

Every weekday (the digest is weekly: a review made after Monday's slot waits for the next one), a minute
before and after the digest's slot, a daily slot in New York's skipped hour (2027-03-14) and in its
repeated hour (2027-11-07: 01:30 is passed twice; 02:30, the slot the issue names, comes once, an hour
after the first 01:30), and New Year. Each instant carries the cron and zone it is meant to exercise.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

SEOUL = ZoneInfo("Asia/Seoul")
NEW_YORK = ZoneInfo("America/New_York")
WEEKLY = "0 9 * * mon"  # the default DIGEST_CRON, in Asia/Seoul


@dataclass(frozen=True)
class Instant:
    """``at``, with ``slot`` the digest slot due at that moment, worked out by hand (not by the code)."""

    name: str
    at: datetime
    slot: str
    cron: str = WEEKLY
    timezone: str = "Asia/Seoul"

    @property
    def env(self) -> dict[str, str]:
        """What a subprocess needs to run at this instant with this schedule."""
        return {
            "INCIDENT_BOT_TEST_NOW": self.at.isoformat(),
            "DIGEST_CRON": self.cron,
            "DIGEST_TIMEZONE": self.timezone,
        }


_MONDAY = datetime(2027, 1, 4, 12, 0, tzinfo=SEOUL)  # 2027-01-04 is a Monday
_SLOT = datetime(2027, 1, 4, 9, 0, tzinfo=SEOUL)

_THIS_MONDAY = "2027-01-04T09:00+09:00"
_LAST_MONDAY = "2026-12-28T09:00+09:00"
_NY = "America/New_York"

WEEKDAYS = [
    Instant(f"{(_MONDAY + timedelta(days=n)):%a}".lower(), _MONDAY + timedelta(days=n), _THIS_MONDAY) for n in range(7)
]
AROUND_THE_SLOT = [
    Instant("slot-minus-1min", _SLOT - timedelta(minutes=1), _LAST_MONDAY),
    Instant("slot-plus-1min", _SLOT + timedelta(minutes=1), _THIS_MONDAY),
]
DAYLIGHT_SAVING = [
    # 02:00 EST jumps to 03:00 EDT: the 02:30 slot fires at the jump, 03:00 EDT.
    Instant(
        "dst-gap-before", datetime(2027, 3, 14, 1, 59, tzinfo=NEW_YORK), "2027-03-13T02:30-05:00", "30 2 * * *", _NY
    ),
    Instant("dst-gap-after", datetime(2027, 3, 14, 3, 1, tzinfo=NEW_YORK), "2027-03-14T03:00-04:00", "30 2 * * *", _NY),
    # 02:00 EDT goes back to 01:00 EST: 01:30 happens twice and fires once, at the first.
    Instant(
        "dst-repeat-first", datetime(2027, 11, 7, 1, 31, tzinfo=NEW_YORK), "2027-11-07T01:30-04:00", "30 1 * * *", _NY
    ),
    Instant(
        "dst-repeat-second",
        datetime(2027, 11, 7, 1, 31, fold=1, tzinfo=NEW_YORK),
        "2027-11-07T01:30-04:00",
        "30 1 * * *",
        _NY,
    ),
    Instant(
        "dst-after-repeat", datetime(2027, 11, 7, 2, 31, tzinfo=NEW_YORK), "2027-11-07T02:30-05:00", "30 2 * * *", _NY
    ),
]
NEW_YEAR = [
    Instant("new-year-eve", datetime(2026, 12, 31, 23, 59, tzinfo=SEOUL), _LAST_MONDAY),
    Instant("new-year-day", datetime(2027, 1, 1, 0, 1, tzinfo=SEOUL), _LAST_MONDAY),
    Instant("new-year-daily", datetime(2027, 1, 1, 0, 1, tzinfo=SEOUL), "2027-01-01T00:00+09:00", "0 0 * * *"),
]
INSTANTS = [*WEEKDAYS, *AROUND_THE_SLOT, *DAYLIGHT_SAVING, *NEW_YEAR]


def every_instant() -> list[object]:
    """``INSTANTS`` as pytest parameters named after them."""
    return [pytest.param(instant, id=instant.name) for instant in INSTANTS]


# Tests that start the bot as a subprocess (about a second each) run at these: the weekday the old suite
# failed on, just before a slot, both daylight-saving days and New Year.
_FEW = ("wed", "slot-minus-1min", "dst-gap-after", "dst-repeat-second", "new-year-day")


def a_few_instants() -> list[object]:
    return [pytest.param(instant, id=instant.name) for instant in INSTANTS if instant.name in _FEW]
