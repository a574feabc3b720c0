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

import contextlib
import logging
import threading
from collections.abc import Iterator, Mapping
from datetime import date, datetime, timedelta
from typing import Any

import filelock

from wolfmem.errors import UsageError, WolfmemError
from wolfmem.jobs.lease import LeaseFile
from wolfmem.jobs.schedule import manual_period, period_for, schedules
from wolfmem.jobs.tasks import DEFAULT_JOBS, FAILED, JobFunc, JobResult, JobRun, JobStatus
from wolfmem.storage.machine import machine_id
from wolfmem.storage.services import VaultServices

log = logging.getLogger(__name__)

JOB_NAMES = ("curate", "audit", "digest")
BACKOFF_CAP = timedelta(hours=6)
# The job record (state "job:<name>", this machine's): the truth for which period ran here, and for the
# failures and backoff. For curation it is one of four progress keepers, each needed (curation.coverage).
RECORD_PREFIX = "job:"


_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


class JobRunner:
    """Runs named jobs for periods, once each, under a per-job lock, the lease and failure backoff."""

    def __init__(
        self, services: VaultServices, *, jobs: Mapping[str, JobFunc] | None = None
    ) -> None:
        self.services = services
        self.config = config = services.config
        self.schedules = schedules(config)
        self.jobs: dict[str, JobFunc] = {**DEFAULT_JOBS, **(jobs or {})}
        self.lease = LeaseFile(services.writer, machine_id(config.state_root()), config.lease_hours)

    # -- triggers -------------------------------------------------------------------------------------------
    def run_due(self, now: datetime) -> list[JobResult]:
        """Run each overdue job once (collapsing missed periods into one run); return what was attempted."""
        # Every machine publishes what it wrote, so the one that curates can tell it from hand edits.
        self.services.provenance.publish()
        self.lease.present(now)  # a heartbeat is this machine watching: a long gap between two means it was away
        results = []
        for name in JOB_NAMES:
            result = self.run_scheduled(name, now)
            if result is not None:
                results.append(result)
        return results

    def run_scheduled(self, name: str, now: datetime) -> JobResult | None:
        """Run one job if its latest scheduled period is not done yet; None when there is nothing to do."""
        try:
            schedule = self.schedules[name]
            if schedule is None:
                return None
            period, day = period_for(name, schedule.last_fire(now).date())
            if self._before_vault(name, day, now):
                return None  # nothing to curate, and nothing (record, lease mark, log entry) is written
            if name in BASELINED and self.record(name) is None:
                self._baseline(name, period, now)
                return None
            if not self._wants(name, period, now):
                return None
            return self._attempt(name, now, period, day, manual=False)
        except Exception as exc:  # the scheduler's edge: log it, record it, keep the daemon alive
            if isinstance(exc, WolfmemError):  # a reason, not a bug: one line says it all
                log.warning("job %s could not be checked: %s", name, exc)
            else:
                log.exception("job %s could not be checked", name)
            return JobResult(name, JobStatus.ERROR, f"{type(exc).__name__}: {exc}")

    def run_now(
        self,
        name: str,
        now: datetime,
        *,
        day: date | None = None,
        dry_run: bool = False,
        apply: bool | None = None,
    ) -> JobResult:
        """Run a job now for `day` (default today), ignoring schedule and backoff but not locks or lease."""
        if name not in JOB_NAMES:
            raise UsageError(f"no job called {name!r}; the jobs are {', '.join(JOB_NAMES)}")
        if day is not None and day >= now.date():
            # A run records its period as done; a day not over yet would mark real days done in advance.
            yesterday = now.date() - timedelta(days=1)
            raise UsageError(
                f"{day.isoformat()} is not over yet (today is {now.date().isoformat()}); give a day up to "
                f"{yesterday.isoformat()}, or no day to run {name} for everything so far"
            )
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
        period, day = period_for(name, schedule.last_fire(now).date())
        waiting = (not record and name in BASELINED) or self._before_vault(name, day, now)
        if not waiting and not _done(record, period):
            retry = _retry_at(record, now)
            if retry is not None and retry > now:
                return retry.isoformat(timespec="seconds")
            return "overdue: runs at the next heartbeat"
        return _localise(schedule.next_fire(now), now).isoformat(timespec="seconds")

    def record(self, name: str) -> dict[str, Any] | None:
        """The persisted record of a job's runs on this machine."""
        return self.services.state.run_record(RECORD_PREFIX + name)

    def _first_day(self, now: datetime) -> date | None:
        """The vault's first day: the day wolfmem created it here, if it did (None for a vault it found made).

        A first day later than today was noted by a clock that was ahead: it is not believed, so it holds
        back no night.
        """
        first = self.services.state.vault_created()
        return first if first is not None and first <= now.date() else None

    def _before_vault(self, name: str, day: date, now: datetime) -> bool:
        """Whether `day`, the last day of a curation period, is before the vault's first day: nothing to curate."""
        first = self._first_day(now) if name == "curate" else None
        return first is not None and day < first

    # -- the one path ----------------------------------------------------------------------------------------
    def _wants(self, name: str, period: str, now: datetime) -> bool:
        """Whether a scheduled run of `period` should start: not done, not backing off."""
        record = self._lower_future_marks(name, period, now)
        if _done(record, period) or _done_elsewhere(self.lease, name, period, now):
            return False
        retry = _retry_at(record, now)
        return retry is None or now >= retry

    def _lower_future_marks(self, name: str, period: str, now: datetime) -> dict[str, Any]:
        """The job's record, with a done mark later than `period` (set by a clock that was ahead) lowered to it.

        `period` is the latest one that can have ended by now, so a later mark is from the future. The
        periods up to `period` count as done (they ran, by the clock of the time) and every later one runs
        when it comes. Curation loses nothing either way: it tracks the entries it consumed, not days.
        """
        record = self.record(name) or {}
        mark = str(record.get("last_success") or "")
        if mark > period:
            log.warning("%s: done through %s is after %s, the latest period that can have ended by now; "
                        "the clock was ahead or has been set back, so the mark is lowered to %s",
                        name, mark, period, period)
            record = {**record, "last_success": period}
            self.services.state.put_run_record(RECORD_PREFIX + name, record)
        return record

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
    ) -> JobResult:
        with self._job_lock(name) as held:
            if not held:
                return JobResult(name, JobStatus.BUSY,
                                 f"{name} is already running (another process or thread); nothing done", period)
            # Re-check under the lock: another process may have finished this period while we waited.
            if not manual and not self._wants(name, period, now):
                return JobResult(name, JobStatus.DONE, f"{name} for {period} already ran", period)
            record = self.record(name) or {}
            if not dry_run:
                check = self.lease.acquire(now)
                if not check.ok:
                    return self._skipped(name, now, period, manual, record, check.reason)
            self._absorb_provenance()
            run = JobRun(name, self.services, now, period, day,
                         self._since(name, record, day, now), dry_run, apply)
            return self._execute(run, record, manual)

    def _execute(self, run: JobRun, record: dict[str, Any], manual: bool) -> JobResult:
        name = run.name
        started = run.now.isoformat(timespec="seconds")
        log.info("running %s for %s%s", name, run.period, " (dry run)" if run.dry_run else "")
        try:
            outcome = dict(self.jobs[name](run))
            status = JobStatus(str(outcome.get("status") or "ok"))  # an unknown status is a failing job
            reason = outcome.get("reason") or (outcome.get("summary") if status in FAILED else None)
        except Exception as exc:  # a job's failure is recorded and retried, never raised into the scheduler
            # An expected failure is told by its reason in the warning below; only a bug needs its traceback.
            if not isinstance(exc, WolfmemError):
                log.exception("%s for %s failed unexpectedly", name, run.period)
            outcome, status, reason = {}, JobStatus.FAILED, f"{type(exc).__name__}: {exc}"
        finished = self.services.clock()
        log.info("%s for %s finished in %.1f s: %s (%s)", name, run.period,
                 (finished - run.now).total_seconds(), status, str(outcome.get("summary") or reason or status))
        result = JobResult(
            name,
            status,
            str(outcome.get("summary") or reason or status),
            run.period,
            run.since.isoformat() if run.since else None,
            run.day.isoformat(),
            {k: v for k, v in outcome.items() if k not in {"job", "period", "status", "summary"}},
        )
        if run.dry_run:
            return result
        new = {
            **record,
            "job": name,
            "status": status.value,
            "period": run.period,
            "trigger": "manual" if manual else "schedule",
            "started_at": started,
            "finished_at": _stamp(finished, run.now),
            "summary": result.summary,
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
        self.services.state.put_run_record(RECORD_PREFIX + name, new)
        return result

    def _baseline(self, name: str, period: str, now: datetime) -> None:
        """First sighting of a report job: start its schedule after `period` instead of reporting on the past."""
        self.services.state.put_run_record(RECORD_PREFIX + name, {
            "job": name, "status": "baseline", "period": period, "last_success": period,
            "trigger": "schedule", "finished_at": now.isoformat(timespec="seconds"),
            "summary": f"first seen; the schedule starts after {period}", "failures": 0,
        })

    def _skipped(
        self, name: str, now: datetime, period: str, manual: bool, record: dict[str, Any], reason: str
    ) -> JobResult:
        """Another machine holds the lease: note it (no backoff, no failure) and do nothing."""
        new = {**record, "job": name, "status": "skipped", "period": period, "reason": reason,
               "trigger": "manual" if manual else "schedule", "summary": reason,
               "finished_at": now.isoformat(timespec="seconds")}
        if record.get("status") != "skipped" or record.get("reason") != reason:
            log.info("%s for %s skipped: %s", name, period, reason)
        self.services.state.put_run_record(RECORD_PREFIX + name, new)
        return JobResult(name, JobStatus.SKIPPED, reason, period)

    def _absorb_provenance(self) -> None:
        """Learn which lines any machine's wolfmem wrote, and their first-seen days, before a job reads them."""
        try:
            self.services.provenance.absorb()
        except WolfmemError as exc:  # curation then treats lines it cannot place as hand-written: safe
            log.warning("could not read the vault's provenance log (%s); going on with this machine's own", exc)

    def _since(self, name: str, record: Mapping[str, Any], day: date, now: datetime) -> date | None:
        """The first day a curation run covers: the day after the last one covered, here or on the lease.

        None on a first run of a vault wolfmem did not create: curation's own default then.
        """
        if name != "curate":
            return None
        last = max(str(record.get("last_success") or ""), self.lease.done(name, now))
        if last:
            since: date | None = date.fromisoformat(last) + timedelta(days=1)
        else:  # a first run: a vault wolfmem created is covered from its first day
            since = self._first_day(now)
        return min(since, day) if since else None

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
        path = self.services.vault.state_dir / "jobs" / f"{name}.lock"
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


def _done_elsewhere(lease: LeaseFile, name: str, period: str, now: datetime) -> bool:
    """Another machine already completed this period (so a take-over does not redo it)."""
    return lease.done(name, now) >= period


def _retry_at(record: Mapping[str, Any], now: datetime) -> datetime | None:
    raw = record.get("retry_at")
    if not raw or record.get("status") not in FAILED:
        return None
    try:
        retry = datetime.fromisoformat(raw)
        # No backoff is longer than the cap: a later retry time was set by a clock that was ahead.
        return retry if retry - now <= BACKOFF_CAP else None
    except (ValueError, TypeError):  # unreadable, or one naive and one aware
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
    line = f"{who} ({lease['holder']}), last run {lease['last_run']}, lease {state} until {lease['expires']}"
    if lease.get("why"):  # a takeover is said on every machine, the one taken over from included
        line += f"; curator since {lease['since']}: {lease['why']}"
    return line
