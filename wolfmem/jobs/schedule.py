"""Pure schedule and period arithmetic: when each job fires, and which period a run covers."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from croniter import croniter

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
            fields["day"] = self._day_field().replace("L", "last")
        return fields

    def crontab(self) -> str:
        """The same schedule as a five-field cron line, for croniter's fire arithmetic."""
        dow = _WEEKDAYS[self.weekday] if self.weekday is not None else "*"
        day = self._day_field() if self.day is not None else "*"
        return f"{self.minute} {self.hour} {day} * {dow}"

    def last_fire(self, now: datetime) -> datetime:
        """The latest scheduled moment at or before now (naive local wall time)."""
        # Wall time: the fire's date is what keys a period, so a DST shift can neither skip nor double one.
        # Fires fall on whole minutes and get_prev looks strictly before its start, so start at the next minute.
        fires = croniter(self.crontab(), _wall(now).replace(second=0, microsecond=0) + timedelta(minutes=1))
        fire = fires.get_prev(datetime)
        return fires.get_prev(datetime) if self._second_in_month(fire) else fire

    def next_fire(self, now: datetime) -> datetime:
        """The first scheduled moment after now (naive local wall time)."""
        fires = croniter(self.crontab(), _wall(now))
        fire = fires.get_next(datetime)
        return fires.get_next(datetime) if self._second_in_month(fire) else fire

    def _day_field(self) -> str:
        """Day D of the month, or its last day when the month is shorter ('30,L': Feb 28 and Apr 30)."""
        assert self.day is not None
        if self.day <= 28:
            return str(self.day)
        return "L" if self.day == 31 else f"{self.day},L"

    def _second_in_month(self, fire: datetime) -> bool:
        """Whether `fire` is the 'L' of a 'D,L' month that also has day D: not a fire of its own."""
        return self.day is not None and fire.day > self.day


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


def _wall(now: datetime) -> datetime:
    """Naive local wall time, the earlier of a repeated hour (croniter works in wall time when naive)."""
    return now.replace(tzinfo=None, fold=0)


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
