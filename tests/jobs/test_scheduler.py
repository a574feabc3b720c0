"""The APScheduler wiring: the start-up check, idempotent start, next runs, and never raising."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from conftest import wait_until

from wolfmem import Config, Memory
from wolfmem.jobs.runner import RECORD_PREFIX, JobRunner
from wolfmem.jobs.scheduler import Scheduler

TZ = ZoneInfo("Europe/Berlin")
# The daemon was down from 22:00 to 07:00: the 03:00 curation was missed.
WOKE = datetime(2026, 11, 5, 7, 0, tzinfo=TZ)


@pytest.fixture
def setup(vault, tmp_path):
    runs: list = []

    def job(run):
        runs.append(run)
        return {"status": "ok", "summary": f"{run.name} {run.period}"}

    config = Config(state_dir=str(tmp_path / "state"), schedule_digest="off")
    memory = Memory(vault, config, clock=lambda: WOKE)
    runner = JobRunner(memory.services, jobs={"curate": job, "audit": job})
    memory.state.put_run_record(RECORD_PREFIX + "curate", {"last_success": "2026-11-03"})
    memory.state.put_run_record(RECORD_PREFIX + "audit", {"last_success": "2026-10"})
    scheduler = Scheduler(memory.services, runner=runner, timezone=TZ)
    yield scheduler, runs
    scheduler.stop()
    memory.close()


def test_start_runs_the_missed_night_once(setup):
    scheduler, runs = setup
    scheduler.start()
    scheduler.start()  # idempotent
    wait_until(lambda: scheduler.heartbeats >= 1)
    assert [(run.name, run.period) for run in runs] == [("curate", "2026-11-04")]
    # A second check (the next heartbeat, or the cron job) finds nothing left to do.
    scheduler._heartbeat()
    scheduler._fire("curate")
    assert len(runs) == 1


def test_next_runs_lists_each_job(setup):
    scheduler, _ = setup
    assert scheduler.next_runs() == {"curate": None, "audit": None, "digest": None}
    scheduler.start()
    runs = scheduler.next_runs()
    assert runs["curate"].endswith("03:00:00+01:00")
    assert runs["audit"].endswith("04:00:00+01:00") and "-01T" in runs["audit"]
    assert runs["digest"] is None
    scheduler.stop()
    assert not scheduler.running


def test_jobs_are_wired_with_catch_up_options(setup):
    scheduler, _ = setup
    scheduler.start()
    jobs = {job.id: job for job in scheduler._scheduler.get_jobs()}
    assert set(jobs) == {"curate", "audit", "heartbeat"}
    for job in jobs.values():
        assert (job.misfire_grace_time, job.coalesce, job.max_instances) == (None, True, 1)


def test_a_crashing_runner_never_raises_into_the_scheduler(setup, monkeypatch):
    scheduler, _ = setup

    def boom(now):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(scheduler.runner, "run_due", boom)
    monkeypatch.setattr(scheduler.runner, "run_scheduled", lambda name, now: boom(now))
    scheduler._heartbeat()
    scheduler._fire("curate")
    assert scheduler.heartbeats == 1
