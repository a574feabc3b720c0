"""Schedule arithmetic by croniter: the runner's fires are APScheduler's fires, short months and DST included."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from apscheduler.triggers.cron import CronTrigger

from wolfmem.jobs.schedule import parse_schedule, period_for

TZ = ZoneInfo("Europe/Berlin")


@pytest.mark.parametrize("text", ["03:00", "sun 19:00", "1 04:00", "29 04:00", "30 04:00", "31 04:00"])
def test_every_fire_the_runner_counts_is_one_apscheduler_fires(text):
    """The runner's arithmetic and the daemon's trigger come from one cron line, so they agree."""
    schedule = parse_schedule("x", text)
    trigger = CronTrigger(timezone=TZ, **schedule.cron())
    moment = datetime(2026, 1, 1, tzinfo=TZ)
    for _ in range(30):
        ours = schedule.next_fire(moment)
        theirs = trigger.get_next_fire_time(None, moment)
        while theirs is not None and theirs.replace(tzinfo=None) < ours:
            # APScheduler may also fire on the last day of a long month; the runner's period key
            # makes that fire a no-op, and the runner never fires where APScheduler does not.
            theirs = trigger.get_next_fire_time(theirs, theirs + timedelta(seconds=1))
        assert theirs is not None and theirs.replace(tzinfo=None) == ours, (text, moment)
        moment = ours.replace(tzinfo=TZ) + timedelta(minutes=1)


@pytest.mark.parametrize(
    ("now", "period"),
    [
        # Spring forward in Berlin: 02:30 does not exist on 2026-03-29, and the night still runs once.
        (datetime(2026, 3, 29, 3, 30, tzinfo=TZ), "2026-03-28"),
        # Fall back: 02:30 happens twice on 2026-10-25; both are the same fire and the same period.
        (datetime(2026, 10, 25, 2, 30, fold=0, tzinfo=TZ), "2026-10-24"),
        (datetime(2026, 10, 25, 2, 30, fold=1, tzinfo=TZ), "2026-10-24"),
    ],
)
def test_dst_changes_neither_skip_nor_double_a_night(now, period):
    schedule = parse_schedule("curate", "02:30")
    assert period_for("curate", schedule.last_fire(now).date())[0] == period
