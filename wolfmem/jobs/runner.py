"""The job path: run curation, the audit or the digest for a period, once, whoever asks.

Every trigger — the cron job, the heartbeat, the start-up check, `wolfmem curate --now` — comes here.
A run is keyed by its *period*: the day curated through ('2026-11-04'), the month audited ('2026-10') or
the digest's ISO week ('2026-W45'). A persisted record of the last successful period per job makes a
second trigger for the same period (a DST double fire, a heartbeat racing the cron job, another process)
a no-op, and lets a daemon that slept through several nights run once, covering all of them.

Around each run: a per-job lock across threads and processes, the multi-machine lease, and on failure
a recorded reason and a retry at a later heartbeat with exponential backoff. Nothing raises out of here
into the scheduler.
"""

from __future__ import annotations

import calendar
import contextlib
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

import filelock

from wolfmem.config import Config
from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.errors import ConfigError, OutsideVault, UsageError
from wolfmem.jobs.lease import LeaseFile, machine_id
from wolfmem.memory.facade import Memory
from wolfmem.storage.vault import CURATED_PATHS
from wolfmem.storage.writer import Cause

log = logging.getLogger(__name__)

JOB_NAMES = ("curate", "audit", "digest")
FAILED = frozenset({"failed", "error"})
BACKOFF_CAP = timedelta(hours=6)
RECORD_PREFIX = "job:"

_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")

_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


# -- schedules --------------------------------------------------------------------------------------------
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


# -- runs ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JobRun:
    """One run handed to a job function: which period, which days, and how."""

    name: str
    memory: Memory
    config: Config
    now: datetime
    period: str  # '2026-11-04' (curate), '2026-10' (audit), '2026-W45' (digest)
    day: date  # the last day the run covers
    since: date | None  # the first day it covers; None: the job's own default (a first run)
    dry_run: bool = False
    apply: bool | None = None


JobFunc = Callable[[JobRun], Mapping[str, Any]]


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


class JobRunner:
    """Runs named jobs for periods, once each, under a per-job lock, the lease and failure backoff."""

    def __init__(
        self, memory: Memory, config: Config, *, jobs: Mapping[str, JobFunc] | None = None
    ) -> None:
        self.memory = memory
        self.config = config
        self.schedules = schedules(config)
        self.jobs: dict[str, JobFunc] = {**DEFAULT_JOBS, **(jobs or {})}
        self.lease = LeaseFile(memory.writer, machine_id(config.state_root()), config.lease_hours)

    # -- triggers -------------------------------------------------------------------------------------------
    def run_due(self, now: datetime) -> list[dict[str, Any]]:
        """Run each overdue job once (collapsing missed periods into one run); return what was attempted."""
        results = []
        for name in JOB_NAMES:
            result = self.run_scheduled(name, now)
            if result is not None:
                results.append(result)
        return results

    def run_scheduled(self, name: str, now: datetime) -> dict[str, Any] | None:
        """Run one job if its latest scheduled period is not done yet; None when there is nothing to do."""
        try:
            schedule = self.schedules[name]
            if schedule is None:
                return None
            period, day = period_for(name, schedule.last_fire(now).date())
            if name in BASELINED and self.record(name) is None:
                self._baseline(name, period, now)
                return None
            if not self._wants(name, period, now):
                return None
            return self._attempt(name, now, period, day, manual=False)
        except Exception as exc:  # the scheduler's edge: log it, record it, keep the daemon alive
            log.exception("job %s could not be checked", name)
            return {"job": name, "status": "error", "summary": f"{type(exc).__name__}: {exc}"}

    def run_now(
        self,
        name: str,
        now: datetime,
        *,
        day: date | None = None,
        dry_run: bool = False,
        apply: bool | None = None,
    ) -> dict[str, Any]:
        """Run a job now for `day` (default today), ignoring schedule and backoff but not locks or lease."""
        if name not in JOB_NAMES:
            raise UsageError(f"no job called {name!r}; the jobs are {', '.join(JOB_NAMES)}")
        period, last_day = manual_period(name, day or now.date())
        return self._attempt(name, now, period, last_day, manual=True, dry_run=dry_run, apply=apply)

    # -- status --------------------------------------------------------------------------------------------
    def status(self, now: datetime) -> dict[str, Any]:
        """Each job's last run and next run, who holds the lease, and whether an LLM is configured."""
        jobs = {}
        for name in JOB_NAMES:
            record = self.record(name) or {}
            schedule = self.schedules[name]
            jobs[name] = {
                "schedule": schedule.text if schedule else "off",
                "last_run": {
                    key: record.get(key)
                    for key in ("status", "period", "started_at", "finished_at", "summary", "reason", "trigger")
                } if record else None,
                "last_success_period": record.get("last_success"),
                "failures": record.get("failures", 0),
                "next_run": self._next_run(name, now, record),
            }
        lease = self.lease.status(now)
        return {
            "jobs": jobs,
            "lease": _lease_line(lease),
            "lease_detail": lease,
            "llm": "llm " + str(self.config.llm_model) if self.config.llm_model else "offline",
        }

    def _next_run(self, name: str, now: datetime, record: Mapping[str, Any]) -> str | None:
        schedule = self.schedules[name]
        if schedule is None:
            return None
        period, _ = period_for(name, schedule.last_fire(now).date())
        first_sighting = not record and name in BASELINED
        if not first_sighting and not _done(record, period):
            retry = _retry_at(record)
            if retry is not None and retry > now:
                return retry.isoformat(timespec="seconds")
            return "overdue: runs at the next heartbeat"
        return _localise(schedule.next_fire(now), now).isoformat(timespec="seconds")

    def record(self, name: str) -> dict[str, Any] | None:
        """The persisted record of a job's runs on this machine."""
        return self.memory.state.run_record(RECORD_PREFIX + name)

    # -- the one path ----------------------------------------------------------------------------------------
    def _wants(self, name: str, period: str, now: datetime) -> bool:
        """Whether a scheduled run of `period` should start: not done, not backing off."""
        record = self.record(name) or {}
        if _done(record, period) or _done_elsewhere(self.lease, name, period):
            return False
        retry = _retry_at(record)
        return retry is None or now >= retry

    def _attempt(
        self,
        name: str,
        now: datetime,
        period: str,
        day: date,
        *,
        manual: bool,
        dry_run: bool = False,
        apply: bool | None = None,
    ) -> dict[str, Any]:
        with self._job_lock(name) as held:
            if not held:
                return {"job": name, "status": "busy", "period": period,
                        "summary": f"{name} is already running (another process or thread); nothing done"}
            # Re-check under the lock: another process may have finished this period while we waited.
            if not manual and not self._wants(name, period, now):
                return {"job": name, "status": "done", "period": period,
                        "summary": f"{name} for {period} already ran"}
            record = self.record(name) or {}
            if not dry_run:
                check = self.lease.check(now)
                if not check.ok:
                    return self._skipped(name, now, period, manual, record, check.reason)
                self.lease.renew(now)
            run = JobRun(name, self.memory, self.config, now, period, day,
                         self._since(name, record, day), dry_run, apply)
            return self._execute(run, record, manual)

    def _execute(self, run: JobRun, record: dict[str, Any], manual: bool) -> dict[str, Any]:
        name = run.name
        started = run.now.isoformat(timespec="seconds")
        log.info("running %s for %s%s", name, run.period, " (dry run)" if run.dry_run else "")
        try:
            outcome = dict(self.jobs[name](run))
            status = str(outcome.get("status") or "ok")
            reason = outcome.get("reason") or (outcome.get("summary") if status in FAILED else None)
        except Exception as exc:  # a job's failure is recorded and retried, never raised into the scheduler
            log.exception("%s for %s failed", name, run.period)
            outcome, status, reason = {}, "failed", f"{type(exc).__name__}: {exc}"
        finished = self.memory.clock()
        result = {
            "job": name,
            "period": run.period,
            "since": run.since.isoformat() if run.since else None,
            "day": run.day.isoformat(),
            **{k: v for k, v in outcome.items() if k not in {"job", "period"}},
            "status": status,
            "summary": str(outcome.get("summary") or reason or status),
        }
        if run.dry_run:
            return result
        new = {
            **record,
            "job": name,
            "status": status,
            "period": run.period,
            "trigger": "manual" if manual else "schedule",
            "started_at": started,
            "finished_at": _stamp(finished, run.now),
            "summary": result["summary"],
            "reason": reason,
        }
        if status in FAILED:
            failures = int(record.get("failures", 0)) + 1
            retry = run.now + min(timedelta(minutes=self.config.schedule_heartbeat_minutes) * 2 ** (failures - 1),
                                  BACKOFF_CAP)
            new.update(failures=failures, retry_at=retry.isoformat(timespec="seconds"))
            log.warning("%s for %s failed (%s); retrying after %s", name, run.period, reason, new["retry_at"])
        else:
            covered = self._covered(run, manual)
            if covered is not None and covered > str(record.get("last_success") or ""):
                new["last_success"] = covered
                self.lease.renew(run.now, name, covered)
            new.update(failures=0, retry_at=None, last_success_at=new["finished_at"])
        self.memory.state.put_run_record(RECORD_PREFIX + name, new)
        return result

    def _baseline(self, name: str, period: str, now: datetime) -> None:
        """First sighting of a report job: start its schedule after `period` instead of reporting on the past."""
        self.memory.state.put_run_record(RECORD_PREFIX + name, {
            "job": name, "status": "baseline", "period": period, "last_success": period,
            "trigger": "schedule", "finished_at": now.isoformat(timespec="seconds"),
            "summary": f"first seen; the schedule starts after {period}", "failures": 0,
        })

    def _skipped(
        self, name: str, now: datetime, period: str, manual: bool, record: dict[str, Any], reason: str
    ) -> dict[str, Any]:
        """Another machine holds the lease: note it (no backoff, no failure) and do nothing."""
        new = {**record, "job": name, "status": "skipped", "period": period, "reason": reason,
               "trigger": "manual" if manual else "schedule", "summary": reason,
               "finished_at": now.isoformat(timespec="seconds")}
        if record.get("status") != "skipped" or record.get("reason") != reason:
            log.info("%s for %s skipped: %s", name, period, reason)
        self.memory.state.put_run_record(RECORD_PREFIX + name, new)
        return {"job": name, "status": "skipped", "period": period, "summary": reason}

    def _since(self, name: str, record: Mapping[str, Any], day: date) -> date | None:
        """The first day a curation run covers: the day after the last one covered, here or on the lease."""
        if name != "curate":
            return None
        lease = self.lease.read()
        last = max(str(record.get("last_success") or ""), (lease.done.get(name, "") if lease else ""))
        if not last:
            return None
        since = date.fromisoformat(last) + timedelta(days=1)
        return min(since, day)

    @staticmethod
    def _covered(run: JobRun, manual: bool) -> str | None:
        """The period this successful run completes; a manual run of an unfinished period completes less."""
        if not manual or run.now.date() > run.day:
            return run.period
        if run.name == "curate":
            # Curating today so far completes every day before it; tonight's run still covers today.
            return (run.day - timedelta(days=1)).isoformat()
        return None

    @contextlib.contextmanager
    def _job_lock(self, name: str) -> Iterator[bool]:
        """Hold the job's lock if free, across threads and processes; yield whether it was taken."""
        path = self.memory.vault.state_dir / "jobs" / f"{name}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        with _THREAD_LOCKS_GUARD:
            thread_lock = _THREAD_LOCKS.setdefault(str(path), threading.Lock())
        if not thread_lock.acquire(blocking=False):
            yield False
            return
        try:
            file_lock = filelock.FileLock(str(path), thread_local=False, is_singleton=False)
            try:
                file_lock.acquire(timeout=0)
            except filelock.Timeout:
                yield False
                return
            try:
                yield True
            finally:
                file_lock.release()
        finally:
            thread_lock.release()


# Report jobs do not report on periods from before wolfmem first saw the vault.
BASELINED = ("audit", "digest")


def _done(record: Mapping[str, Any], period: str) -> bool:
    return str(record.get("last_success") or "") >= period


def _done_elsewhere(lease: LeaseFile, name: str, period: str) -> bool:
    """Another machine already completed this period (so a take-over does not redo it)."""
    current = lease.read()
    return current is not None and current.done.get(name, "") >= period


def _retry_at(record: Mapping[str, Any]) -> datetime | None:
    raw = record.get("retry_at")
    if not raw or record.get("status") not in FAILED:
        return None
    try:
        return datetime.fromisoformat(raw)
    except ValueError:
        return None


def _stamp(finished: datetime, started: datetime) -> str:
    """The finish time; a frozen or unrelated clock never makes a run finish before it started."""
    try:
        return max(finished, started).isoformat(timespec="seconds")
    except TypeError:  # one naive, one aware
        return started.isoformat(timespec="seconds")


def _localise(wall: datetime, now: datetime) -> datetime:
    return wall.replace(tzinfo=now.tzinfo) if now.tzinfo else wall


def _lease_line(lease: Mapping[str, Any]) -> str:
    if not lease.get("holder"):
        return f"no machine yet (this one is {lease['this_machine']})"
    who = "this machine" if lease.get("is_this_machine") else lease["holder"]
    state = "fresh" if lease.get("fresh") else "stale"
    return f"{who} ({lease['holder']}), last run {lease['last_run']}, lease {state} until {lease['expires']}"


# -- the jobs ------------------------------------------------------------------------------------------------
def curate_job(run: JobRun) -> Mapping[str, Any]:
    """Nightly curation of every day from `since` through `day`."""
    from wolfmem.curation import run as curate

    curator = curate.make_curator(run.config)
    # curate.run's `since` is the last day already covered (exclusive); ours is the first day to cover.
    covered = run.since - timedelta(days=1) if run.since else None
    try:
        result = curate.run(run.memory, curator, run.day, since=covered, dry_run=run.dry_run)
    finally:
        curator.close()
    return result.to_dict()


def audit_job(run: JobRun) -> Mapping[str, Any]:
    """The monthly adversarial audit of the period's month."""
    from wolfmem.curation.audit.run import run_audit

    return run_audit(run.memory, run.config, run.period, run.now, apply=run.apply)


def digest_job(run: JobRun) -> Mapping[str, Any]:
    """The weekly digest of the seven days ending on `day` (no LLM)."""
    return write_digest(run.memory, run.period, run.day, dry_run=run.dry_run)


DEFAULT_JOBS: dict[str, JobFunc] = {"curate": curate_job, "audit": audit_job, "digest": digest_job}


def write_digest(memory: Memory, week: str, last_day: date, *, dry_run: bool = False) -> dict[str, Any]:
    """Write `consolidated/digest-<week>.md`: the week's episodes, saves and new sections, in a few lines."""
    first_day = last_day - timedelta(days=6)
    days = {(first_day + timedelta(days=n)).isoformat() for n in range(7)}
    entries = 0
    for day in sorted(days):
        try:
            data = memory.vault.read_bytes(f"episodes/{day}.md")
        except (OSError, OutsideVault):
            continue
        entries += len(markdown.parse(data.decode("utf-8", errors="replace")).sections)
    saves = 0
    new_sections: list[str] = []
    for rel in CURATED_PATHS:
        seen = memory.state.first_seen(rel)
        saves += sum(1 for day in seen.values() if day in days)
        try:
            parsed = markdown.parse(memory.vault.read_bytes(rel).decode("utf-8", errors="replace"))
        except (OSError, OutsideVault):
            continue
        for section in parsed.sections:
            firsts = [seen.get(fact_key(f.text)) for f in parsed.facts if f.section == section.heading]
            dated = [d for d in firsts if d]
            if dated and min(dated) in days:
                new_sections.append(f"{rel.rsplit('/', 1)[-1]}: {section.heading}")
    lines = [
        f"# Digest {week}",
        "",
        f"{first_day.isoformat()} – {last_day.isoformat()}",
        "",
        f"- Episode entries: {entries}",
        f"- Facts saved: {saves}",
        f"- New sections: {len(new_sections)}",
    ]
    lines += [f"  - {name}" for name in new_sections]
    conflicts = memory.vault.conflict_copies()
    if conflicts:
        lines += ["", "## Conflict copies (never curated; merge them by hand)"]
        lines += [f"- {rel}" for rel in conflicts]
    text = "\n".join(lines) + "\n"
    rel = f"consolidated/digest-{week}.md"
    summary = f"{entries} episode entries, {saves} facts saved, {len(new_sections)} new sections"
    if not dry_run:
        memory.writer.put(rel, text, cause=Cause.DIGEST)
    return {"status": "ok", "summary": summary, "path": rel}
