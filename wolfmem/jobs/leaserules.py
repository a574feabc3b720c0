"""The curator's rules, as pure functions: what a lease says, whether it is fresh, which periods are plausible.

A lease here is the vault's curator as every machine reads it (jobs/lease.py gathers it from the vault):
the machine, its last sign of life (`last_run`) and the periods any machine completed (`done`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

SKEW_TOLERANCE = timedelta(minutes=10)
CLAIM_HORIZON = timedelta(days=7)
# A machine whose own checks are this far apart was away (closed, offline, stopped); once back, it gives its
# sync engine RETURN_GRACE to bring what the curator did meanwhile before it judges the curator silent.
AWAY = timedelta(hours=3)  # far longer than a daemon's heartbeat (5 minutes by default)
RETURN_GRACE = timedelta(hours=1)
LEASE_REL = ".wolfmem/lease.json"  # the shared lease file of before: read, never written

_DAY, _MONTH, _WEEK = re.compile(r"^\d{4}-\d{2}-\d{2}$"), re.compile(r"^\d{4}-\d{2}$"), re.compile(r"^\d{4}-W\d{2}$")
_SHAPES = {"curate": _DAY, "audit": _MONTH, "digest": _WEEK}


@dataclass(frozen=True)
class Lease:
    """What the lease file says: the holder, when it last ran a job, and each job's last completed period."""

    machine: str
    last_run: datetime
    done: dict[str, str] = field(default_factory=dict)

    def expires(self, hours: float) -> datetime:
        """When the lease goes stale by its own timestamp."""
        return self.last_run + timedelta(hours=hours)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written to the lease file."""
        return {
            "version": 1,
            "machine": self.machine,
            "last_run": self.last_run.astimezone(UTC).isoformat(timespec="seconds"),
            "done": dict(sorted(self.done.items())),
        }


@dataclass(frozen=True)
class Parsed:
    """A lease file's text, checked: the lease if usable, its valid `done` entries, and what was wrong."""

    lease: Lease | None
    done: dict[str, str]
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class LeaseCheck:
    """Whether this machine may run the leased jobs now, and why."""

    ok: bool
    reason: str
    holder: Lease | None
    expires: datetime | None = None  # when the holder's lease goes (or went) stale, as this machine judges


def parse_lease(text: str) -> Parsed:
    """Check a lease file's text field by field; nothing in it is trusted for its type."""
    if not text.strip():
        return Parsed(None, {})
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return Parsed(None, {}, (f"not JSON ({exc.msg} at line {exc.lineno})",))
    except (ValueError, RecursionError):  # a number over 4,300 digits, or nesting deeper than the stack
        return Parsed(None, {}, ("JSON too large or too deeply nested to read",))
    if not isinstance(data, dict):
        return Parsed(None, {}, ("not a JSON object",))
    problems: list[str] = []
    done = _valid_done(data.get("done"), problems)
    machine, stamp = data.get("machine"), data.get("last_run")
    if not isinstance(machine, str) or not machine.strip() or len(machine) > 200 or not machine.isprintable():
        problems.append(f"machine is {machine!r}, not a machine name")
        return Parsed(None, done, tuple(problems))
    try:
        last_run = aware(datetime.fromisoformat(stamp)) if isinstance(stamp, str) else None
    except ValueError:
        last_run = None
    if last_run is None:
        problems.append(f"last_run is {stamp!r}, not a date and time")
        return Parsed(None, done, tuple(problems))
    return Parsed(Lease(machine.strip(), last_run, done), done, tuple(problems))


def _valid_done(raw: Any, problems: list[str]) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        problems.append(f"done is {type(raw).__name__}, not an object")
        return {}
    done: dict[str, str] = {}
    for job, period in raw.items():
        shape = _SHAPES.get(job)
        if isinstance(period, str) and (shape.match(period) if shape else any(
            pattern.match(period) for pattern in _SHAPES.values()
        )):
            done[job] = period
        else:
            problems.append(f"done[{job!r}] = {period!r} is not a period")
    return done


def judge(lease: Lease | None, machine: str, now: datetime, hours: float, seen_since: datetime,
          back: datetime | None = None) -> LeaseCheck:
    """May `machine` run the leased jobs at `now`? (rules 1 to 3; `seen_since`: when it first saw this lease,
    `back`: when it last came back from being away, if it ever was)."""
    if lease is None:
        return LeaseCheck(True, "no usable lease; this machine takes it", None)
    if lease.machine == machine:
        return LeaseCheck(True, "this machine holds the lease", lease, lease.expires(hours))
    now, seen = aware(now), aware(seen_since)
    # Never renewed later than this machine first saw it so: a clock running ahead gains nothing.
    renewed = min(lease.last_run, seen + SKEW_TOLERANCE)
    ahead = lease.last_run - seen
    expires = renewed + timedelta(hours=hours)
    skew = f" (its timestamp was {span(ahead)} ahead of this machine's clock, so it is not trusted)" \
        if ahead > SKEW_TOLERANCE else ""
    if now >= expires and back is not None and now < aware(back) + RETURN_GRACE:
        # Its view of the curator is as old as its absence: the engine may not have delivered the news yet.
        wait = aware(back) + RETURN_GRACE
        return LeaseCheck(False, f"{lease.machine} curates this vault and looks silent, but this machine was away "
                                 f"until {show(back)}: it waits until {show(wait)} for the sync engine to bring the "
                                 "curator's latest runs; to move curation here now, run `wolfmem curator take`",
                          lease, wait)
    if now >= expires:
        return LeaseCheck(True, f"{lease.machine}'s lease went stale at {show(expires)}{skew}; "
                                "this machine takes over", lease, expires)
    return LeaseCheck(
        False,
        f"{lease.machine} curates this vault (lease fresh until {show(expires)}){skew}; "
        "to move curation here, run `wolfmem curator take` on this machine",
        lease,
        expires,
    )


def plausible(period: str, now: datetime) -> bool:
    """Whether a completed period could be over by now, give or take CLAIM_HORIZON (rule 4)."""
    horizon = (aware(now) + CLAIM_HORIZON).date()
    if _DAY.match(period):
        return period <= horizon.isoformat()
    if _MONTH.match(period):
        return period <= f"{horizon.year:04d}-{horizon.month:02d}"
    if _WEEK.match(period):
        year, week, _ = horizon.isocalendar()
        return period <= f"{year:04d}-W{week:02d}"
    return False


def aware(moment: datetime) -> datetime:
    """Naive datetimes are taken as UTC so that two machines' times always compare."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def show(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def span(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{hours / 24:.1f} days" if hours >= 48 else f"{hours:.1f} hours"
