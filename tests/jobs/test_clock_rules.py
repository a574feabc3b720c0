"""The clock rules: no day that is not over is recorded as done, and a clock that moves back loses nothing."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import Clock, run_cli
from leasekit import published

from wolfmem import Config, Memory
from wolfmem.errors import UsageError
from wolfmem.jobs.runner import RECORD_PREFIX, JobRunner
from wolfmem.jobs.tasks import JobRun

TZ = ZoneInfo("Europe/Berlin")


def at(day: str, hhmm: str = "07:00") -> datetime:
    return datetime.fromisoformat(f"{day}T{hhmm}").replace(tzinfo=TZ)


def fake_runner(vault: Path, tmp_path: Path, clock: Clock, runs: list[JobRun]) -> JobRunner:
    """A runner whose curate job records each run instead of curating; the report jobs are off."""
    config = Config(state_dir=str(tmp_path / "state"), schedule_audit="off", schedule_digest="off")
    memory = Memory(vault, config, clock=clock)

    def job(run: JobRun) -> dict:
        runs.append(run)
        return {"status": "ok", "summary": f"curated {run.period}"}

    return JobRunner(memory.services, jobs={"curate": job})


def mark(runner: JobRunner, period: str) -> None:
    runner.services.state.put_run_record(RECORD_PREFIX + "curate", {"status": "ok", "last_success": period})


@pytest.mark.parametrize("days_ahead", [0, 1, 61])
def test_a_day_not_over_yet_is_refused_and_nothing_is_recorded(vault, tmp_path, days_ahead):
    clock = Clock(at("2026-11-05", "14:00"))
    runs: list[JobRun] = []
    runner = fake_runner(vault, tmp_path, clock, runs)
    with pytest.raises(UsageError, match=r"not over yet \(today is 2026-11-05\); give a day up to 2026-11-04"):
        runner.run_now("curate", clock.now, day=date(2026, 11, 5) + timedelta(days=days_ahead))
    assert runs == [] and runner.record("curate") is None
    assert not published(vault)["choices"] and not published(vault)["done"]
    # Yesterday, and no day at all (everything so far), still run.
    assert runner.run_now("curate", clock.now, day=date(2026, 11, 4)).status == "ok"
    assert runner.run_now("curate", clock.now).status == "ok"


def test_a_future_mark_from_an_earlier_version_does_not_block_real_days(vault, tmp_path):
    """`curate --date 2027-01-05` used to record 2027-01-04; the nights after must still run."""
    clock = Clock(at("2026-11-05"))
    runs: list[JobRun] = []
    runner = fake_runner(vault, tmp_path, clock, runs)
    mark(runner, "2027-01-04")

    assert runner.run_due(clock.now) == []  # through the 4th counts as done ...
    assert runner.record("curate")["last_success"] == "2026-11-04"  # ... and no further
    assert runner.status(clock.now)["jobs"]["curate"]["next_run"] == at("2026-11-06", "03:00").isoformat()

    clock.now = at("2026-11-06", "03:00")
    (result,) = runner.run_due(clock.now)
    assert (result.status, result.period) == ("ok", "2026-11-05")
    assert [run.period for run in runs] == ["2026-11-05"]


def test_a_far_future_mark_on_the_lease_blocks_no_night(vault, tmp_path):
    clock = Clock(at("2026-11-05"))
    runs: list[JobRun] = []
    runner = fake_runner(vault, tmp_path, clock, runs)
    mark(runner, "2026-11-03")
    runner.lease.renew(at("2026-11-04"), "curate", "2027-01-04")  # this machine's lease, set while far ahead

    # A period claimed more than a week ahead of this clock is not trusted (the lease rules, README).
    assert [r.period for r in runner.run_due(clock.now)] == ["2026-11-04"]
    clock.now = at("2026-11-06", "03:00")
    assert [r.period for r in runner.run_due(clock.now)] == ["2026-11-05"]


def test_a_backoff_set_by_a_clock_that_was_ahead_is_not_waited_out(vault, tmp_path):
    clock = Clock(at("2026-11-05"))
    runs: list[JobRun] = []
    runner = fake_runner(vault, tmp_path, clock, runs)
    runner.services.state.put_run_record(RECORD_PREFIX + "curate", {
        "status": "failed", "last_success": "2026-11-03", "failures": 1,
        "retry_at": at("2026-11-08").isoformat()})
    assert runner.status(clock.now)["jobs"]["curate"]["next_run"].startswith("overdue")
    assert [r.status for r in runner.run_due(clock.now)] == ["ok"]


def test_a_clock_set_back_runs_no_night_twice(vault, tmp_path):
    clock = Clock(at("2026-11-05", "03:00"))
    runs: list[JobRun] = []
    runner = fake_runner(vault, tmp_path, clock, runs)
    mark(runner, "2026-11-03")
    for day in ("2026-11-05", "2026-11-06", "2026-11-07", "2026-11-08"):
        clock.now = at(day, "03:00")
        runner.run_due(clock.now)
    assert [run.period for run in runs] == ["2026-11-04", "2026-11-05", "2026-11-06", "2026-11-07"]

    clock.now = at("2026-11-06", "09:00")  # set back two days
    assert runner.run_due(clock.now) == []  # the 5th already ran: not again
    clock.now = at("2026-11-07", "03:00")
    runner.run_due(clock.now)
    clock.now = at("2026-11-10", "03:00")
    runner.run_due(clock.now)
    # The nights done before the setback stay done (the lease remembers them); the first new one runs.
    # Entries are curated once either way, since curation tracks entries, not days (the next test).
    assert [run.period for run in runs][4:] == ["2026-11-09"]


def test_the_real_curation_job_gives_each_entry_once_across_a_clock_set_back(vault, tmp_path, fake, llm_config):
    clock = Clock(at("2026-11-05", "03:00"))
    with Memory(vault, llm_config, clock=clock) as memory:
        runner = JobRunner(memory.services)
        runner.services.state.put_run_record(RECORD_PREFIX + "audit", {"last_success": "2026-10"})
        runner.services.state.put_run_record(RECORD_PREFIX + "digest", {"last_success": "2026-W45"})
        logged = []

        def log_now(text: str) -> None:
            memory.log_episode(text)
            logged.append(text)

        for day in ("2026-11-04", "2026-11-05", "2026-11-06", "2026-11-07"):
            clock.now = at(day, "12:00")
            log_now(f"Worked on {day} (first time round).")
            clock.now = at(day, "23:30") + timedelta(hours=4)  # 03:30 the next night
            runner.run_due(clock.now)
        clock.now = at("2026-11-05", "12:00")  # the clock is set back three days
        log_now("Worked on 2026-11-05 (second time round).")
        for day in ("2026-11-06", "2026-11-07", "2026-11-08", "2026-11-09"):
            clock.now = at(day, "03:30")
            runner.run_due(clock.now)
            log_now(f"Worked on {day} (second time round).")
        clock.now = at("2026-11-10", "03:30")
        runner.run_due(clock.now)

    users = [request["messages"][1]["content"] for request in fake.requests]
    files = 5
    assert {text: sum(text in user for user in users) for text in logged} == {text: files for text in logged}


def test_cli_curate_refuses_a_date_not_over_yet_and_records_nothing(tmp_path):
    vault = tmp_path / "vault"
    assert run_cli("init", "--vault", str(vault)).returncode == 0
    today = date.today()
    for day in (today, today + timedelta(days=61)):
        result = run_cli("curate", "--date", day.isoformat(), "--vault", str(vault))
        assert result.returncode == 2, result.stderr
        assert f"{day.isoformat()} is not over yet" in result.stderr
    assert not published(vault)["choices"] and not (vault / ".wolfmem" / "curation").exists()
    yesterday = (today - timedelta(days=1)).isoformat()
    assert run_cli("curate", "--date", yesterday, "--vault", str(vault)).returncode == 0
    assert published(vault)["done"]["curate"] == yesterday
