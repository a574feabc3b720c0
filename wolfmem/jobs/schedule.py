"""Pure schedule and period arithmetic: when each job fires, and which period a run covers."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from wolfmem.config import Config
from wolfmem.errors import ConfigError

_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


@dataclass(frozen=True)
class Schedule:
    """When a job fires, in local wall-clock time: daily, weekly on a weekday, or monthly on a day."""

    job: str
    text: str
    hour: int
    minute: int
    weekday: int | None = None  # 0 = Monday, for weekly schedules
    day: int | None = None  # 1-31, for monthly schedules (clamped to short months)

    def cron(self) -> dict[str, Any]:
        """APScheduler CronTrigger fields."""
        fields: dict[str, Any] = {"hour": self.hour, "minute": self.minute}
        if self.weekday is not None:
            fields["day_of_week"] = _WEEKDAYS[self.weekday]
        if self.day is not None:
            # A day past the 28th fires on the last day of short months; the period key dedupes the rest.
            fields["day"] = str(self.day) if self.day <= 28 else "last"
        return fields

    def last_fire(self, now: datetime) -> datetime:
        """The latest scheduled moment at or before now (naive local wall time)."""
        wall = now.replace(tzinfo=None, fold=0)
        at = time(self.hour, self.minute)
        if self.day is not None:
            year, month = wall.year, wall.month
            fire = datetime.combine(_clamped(year, month, self.day), at)
            if fire > wall:
                year, month = _previous_month(year, month)
                fire = datetime.combine(_clamped(year, month, self.day), at)
            return fire
        step = 7 if self.weekday is not None else 1
        back = (wall.weekday() - self.weekday) % 7 if self.weekday is not None else 0
        fire = datetime.combine(wall.date() - timedelta(days=back), at)
        return fire - timedelta(days=step) if fire > wall else fire

    def next_fire(self, now: datetime) -> datetime:
        """The first scheduled moment after now (naive local wall time)."""
        wall = now.replace(tzinfo=None, fold=0)
        last = self.last_fire(now)
        if self.day is not None:
            year, month = last.year, last.month
            while True:
                year, month = (year + 1, 1) if month == 12 else (year, month + 1)
                fire = datetime.combine(_clamped(year, month, self.day), last.time())
                if fire > wall:
                    return fire
        return last + timedelta(days=7 if self.weekday is not None else 1)


def parse_schedule(job: str, text: str) -> Schedule | None:
    """Parse 'HH:MM' (daily), 'ddd HH:MM' (weekly), 'D HH:MM' (monthly) or 'off' (None)."""
    raw = " ".join(str(text).split()).lower()
    if raw in {"off", "none", "disabled", ""}:
        return None
    parts = raw.split(" ")
    clock = _HHMM.match(parts[-1])
    if clock is None or len(parts) > 2:
        raise ConfigError(
            f"schedule.{job} = {text!r} is not a schedule; use 'HH:MM' (daily), 'sun 19:00' (weekly), "
            "'1 04:00' (monthly) or 'off'"
        )
    hour, minute = int(clock.group(1)), int(clock.group(2))
    if len(parts) == 1:
        return Schedule(job, text, hour, minute)
    when = parts[0]
    weekday = next((n for n, name in enumerate(_DAY_NAMES) if len(when) >= 3 and name.startswith(when)), None)
    if weekday is not None:
        return Schedule(job, text, hour, minute, weekday=weekday)
    if when.isdigit() and 1 <= int(when) <= 31:
        return Schedule(job, text, hour, minute, day=int(when))
    raise ConfigError(
        f"schedule.{job} = {text!r}: {parts[0]!r} is neither a weekday (mon..sun) nor a day of the month (1-31)"
    )


def schedules(config: Config) -> dict[str, Schedule | None]:
    """Each job's schedule from the settings (None when turned off)."""
    return {
        "curate": parse_schedule("curate", config.schedule_curate),
        "audit": parse_schedule("audit", config.schedule_audit),
        "digest": parse_schedule("digest", config.schedule_digest),
    }


def _clamped(year: int, month: int, day: int) -> date:
    return date(year, month, min(day, calendar.monthrange(year, month)[1]))


def _previous_month(year: int, month: int) -> tuple[int, int]:
    return (year - 1, 12) if month == 1 else (year, month - 1)


def iso_week(day: date) -> str:
    """'2026-W45' for a day."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def period_for(name: str, fire: date) -> tuple[str, date]:
    """The period a scheduled fire on `fire` covers, and its last day."""
    if name == "curate":
        # The nightly run curates through yesterday, so late-evening episodes are never cut in half.
        day = fire - timedelta(days=1)
        return day.isoformat(), day
    if name == "audit":
        year, month = _previous_month(fire.year, fire.month)
        return f"{year:04d}-{month:02d}", _clamped(year, month, 31)
    return iso_week(fire), fire


def manual_period(name: str, day: date) -> tuple[str, date]:
    """The period a `--now` run for `day` covers: that day, that day's month, or the week ending that day."""
    if name == "curate":
        return day.isoformat(), day
    if name == "audit":
        return f"{day.year:04d}-{day.month:02d}", _clamped(day.year, day.month, 31)
    return iso_week(day), day
