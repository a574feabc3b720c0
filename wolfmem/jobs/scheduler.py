"""APScheduler wiring: cron triggers and a heartbeat that hand the clock's time to the job path.

APScheduler alone does not catch up: a job missed by more than its grace time is skipped, and during
suspend its wait runs on the monotonic clock, so a laptop that wakes at 07:00 may sleep on past the 03:00
job (apscheduler#794). So the triggers here are only prompts. Each calls `JobRunner`, which decides from
its persisted records what is overdue and runs it once; the heartbeat (and the check at start) is what
makes missed nights, suspend and restarts safe. Only the process holding the daemon's single-instance
lock should start a Scheduler; the job locks make a second one harmless anyway.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, tzinfo
from typing import Any

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from wolfmem.jobs.runner import JOB_NAMES, JobRunner
from wolfmem.storage.services import VaultServices

log = logging.getLogger(__name__)

HEARTBEAT_ID = "heartbeat"


class Scheduler:
    """Fires each job on its schedule and checks for overdue jobs at start and every few minutes."""

    def __init__(
        self,
        services: VaultServices,
        *,
        runner: JobRunner | None = None,
        timezone: tzinfo | None = None,
    ) -> None:
        self.services = services
        self.config = services.config
        self.clock = services.clock
        self.runner = runner or JobRunner(services)
        # None: APScheduler uses the machine's zone (tzlocal), so cron times follow DST.
        self.timezone = timezone
        self._scheduler: BackgroundScheduler | None = None
        self._guard = threading.Lock()
        self.heartbeats = 0

    def start(self) -> None:
        """Start the background scheduler and run the start-up check at once; a second call does nothing."""
        with self._guard:
            if self._scheduler is not None:
                return
            options: dict[str, Any] = {
                "job_defaults": {"misfire_grace_time": None, "coalesce": True, "max_instances": 1},
            }
            if self.timezone is not None:
                options["timezone"] = self.timezone
            scheduler = BackgroundScheduler(**options)
            zone = scheduler.timezone
            for name, schedule in self.runner.schedules.items():
                if schedule is None:
                    continue
                scheduler.add_job(
                    self._fire, CronTrigger(timezone=zone, **schedule.cron()), args=[name], id=name,
                    name=f"{name} ({schedule.text})",
                )
            # The first heartbeat runs immediately: that is the start-up catch-up check.
            scheduler.add_job(
                self._heartbeat,
                IntervalTrigger(minutes=max(1, self.config.schedule_heartbeat_minutes), timezone=zone),
                id=HEARTBEAT_ID,
                name="heartbeat: run overdue jobs",
                next_run_time=datetime.now(zone),
            )
            scheduler.start()
            self._scheduler = scheduler
            log.info("scheduler started: %s", ", ".join(f"{k} next {v}" for k, v in self.next_runs().items()))

    def stop(self, wait: bool = True) -> None:
        """Stop the scheduler; with wait, let a running job finish first."""
        with self._guard:
            scheduler, self._scheduler = self._scheduler, None
        if scheduler is not None:
            scheduler.shutdown(wait=wait)

    @property
    def running(self) -> bool:
        """Whether start() has been called and stop() has not."""
        return self._scheduler is not None

    def next_runs(self) -> dict[str, str | None]:
        """Each job's next fire time (None when turned off or not started)."""
        scheduler = self._scheduler
        out: dict[str, str | None] = {name: None for name in JOB_NAMES}
        if scheduler is None:
            return out
        for job in scheduler.get_jobs():
            if job.id in out:
                out[job.id] = job.next_run_time.isoformat(timespec="seconds") if job.next_run_time else None
        return out

    # -- triggers: never raise into APScheduler ------------------------------------------------------------
    def _fire(self, name: str) -> None:
        try:
            self.runner.run_scheduled(name, self.clock())
        except Exception:  # the daemon's edge: log and keep the scheduler alive
            log.exception("scheduled %s failed", name)

    def _heartbeat(self) -> None:
        try:
            self.runner.run_due(self.clock())
        except Exception:  # the daemon's edge: log and keep the scheduler alive
            log.exception("heartbeat failed")
        finally:
            self.heartbeats += 1
