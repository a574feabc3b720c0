"""The job path: periods, catch-up, DST, backoff, locks across processes, and the digest."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from apscheduler.triggers.cron import CronTrigger
from conftest import REPO

from wolfmem import Config, Memory
from wolfmem.errors import ConfigError, LLMError, UsageError
from wolfmem.jobs.runner import RECORD_PREFIX, JobRunner
from wolfmem.jobs.schedule import parse_schedule
from wolfmem.jobs.tasks import JobResult, JobRun, JobStatus

TZ = ZoneInfo("Europe/Berlin")
NY = ZoneInfo("America/New_York")


def at(day: str, hhmm: str = "07:00", tz: ZoneInfo = TZ, fold: int = 0) -> datetime:
    """A fixed, zone-aware local time."""
    return datetime.fromisoformat(f"{day}T{hhmm}").replace(tzinfo=tz, fold=fold)


class Calls:
    """Fake job functions that record each run instead of curating."""

    def __init__(self) -> None:
        self.runs: list[JobRun] = []
        self.fail: Exception | None = None

    def __call__(self, run: JobRun) -> dict:
        self.runs.append(run)
        if self.fail is not None:
            raise self.fail
        return {"status": "ok", "summary": f"{run.name} {run.period}"}

    def of(self, name: str) -> list[JobRun]:
        return [run for run in self.runs if run.name == name]


@pytest.fixture
def calls() -> Calls:
    return Calls()


def make_runner(vault: Path, tmp_path: Path, calls: Calls, now: datetime, **settings) -> JobRunner:
    config = Config(state_dir=str(tmp_path / "state"), **settings)
    memory = Memory(vault, config, clock=lambda: now)
    return JobRunner(memory.services, jobs={"curate": calls, "audit": calls, "digest": calls})


def set_success(runner: JobRunner, name: str, period: str) -> None:
    runner.services.state.put_run_record(RECORD_PREFIX + name, {"status": "ok", "last_success": period})


# -- schedules ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("03:00", {"hour": 3, "minute": 0}),
        ("1 04:00", {"hour": 4, "minute": 0, "day": "1"}),
        ("31 04:00", {"hour": 4, "minute": 0, "day": "last"}),
        ("sun 19:00", {"hour": 19, "minute": 0, "day_of_week": "sun"}),
        ("Sunday 19:00", {"hour": 19, "minute": 0, "day_of_week": "sun"}),
    ],
)
def test_parse_schedule(text, expect):
    assert parse_schedule("x", text).cron() == expect


@pytest.mark.parametrize("text", ["25:00", "3", "every day", "32 04:00", "sun mon 19:00", "su 19:00"])
def test_bad_schedule_says_how_to_write_one(text):
    with pytest.raises(ConfigError, match=r"schedule\.x"):
        parse_schedule("x", text)


def test_off_is_no_schedule():
    assert parse_schedule("digest", "off") is None


@pytest.mark.parametrize(
    ("text", "now", "last", "nxt"),
    [
        ("03:00", "2026-11-05T02:59", "2026-11-04T03:00", "2026-11-05T03:00"),
        ("03:00", "2026-11-05T03:00", "2026-11-05T03:00", "2026-11-06T03:00"),
        ("1 04:00", "2026-11-01T03:00", "2026-10-01T04:00", "2026-11-01T04:00"),
        ("31 04:00", "2026-11-30T05:00", "2026-11-30T04:00", "2026-12-31T04:00"),
        ("sun 19:00", "2026-11-04T12:00", "2026-11-01T19:00", "2026-11-08T19:00"),
        # Day 30 is the 30th, or the last day of a shorter month, once a month.
        ("30 04:00", "2026-03-31T05:00", "2026-03-30T04:00", "2026-04-30T04:00"),
        ("30 04:00", "2026-03-01T05:00", "2026-02-28T04:00", "2026-03-30T04:00"),
        ("29 04:00", "2028-03-01T00:00", "2028-02-29T04:00", "2028-03-29T04:00"),  # a leap year
        ("29 04:00", "2027-03-01T00:00", "2027-02-28T04:00", "2027-03-29T04:00"),
        ("31 04:00", "2026-05-01T00:00", "2026-04-30T04:00", "2026-05-31T04:00"),
        ("1 04:00", "2026-01-01T03:59", "2025-12-01T04:00", "2026-01-01T04:00"),
        ("fri 18:30", "2026-11-06T18:29:59.9", "2026-10-30T18:30", "2026-11-06T18:30"),
        ("fri 18:30", "2026-11-06T18:30:00.1", "2026-11-06T18:30", "2026-11-13T18:30"),
    ],
)
def test_last_and_next_fire(text, now, last, nxt):
    schedule = parse_schedule("x", text)
    moment = datetime.fromisoformat(now).replace(tzinfo=TZ)
    assert schedule.last_fire(moment) == datetime.fromisoformat(last)
    assert schedule.next_fire(moment) == datetime.fromisoformat(nxt)


# -- catch-up --------------------------------------------------------------------------------------------------
def test_missed_night_runs_once_at_start(vault, tmp_path, calls):
    # Curated through Nov 3 at 03:00 on Nov 4; down from 22:00 on Nov 4 to 07:00 on Nov 5.
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"), schedule_digest="off")
    set_success(runner, "curate", "2026-11-03")
    set_success(runner, "audit", "2026-10")

    results = runner.run_due(at("2026-11-05", "07:00"))

    assert [(r.job, r.status) for r in results] == [("curate", "ok")]
    (run,) = calls.of("curate")
    assert (run.day, run.since, run.period) == (date(2026, 11, 4), date(2026, 11, 4), "2026-11-04")
    assert runner.run_due(at("2026-11-05", "07:05")) == []
    assert runner.record("curate")["last_success"] == "2026-11-04"


def test_three_missed_nights_make_one_run_covering_all(vault, tmp_path, calls):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"), schedule_digest="off")
    set_success(runner, "curate", "2026-11-01")
    set_success(runner, "audit", "2026-10")

    runner.run_due(at("2026-11-05", "07:00"))
    runner.run_due(at("2026-11-05", "07:05"))

    (run,) = calls.of("curate")
    assert (run.since, run.day) == (date(2026, 11, 2), date(2026, 11, 4))


def test_first_run_ever_curates_but_does_not_report_on_the_past(vault, tmp_path, calls):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"))
    runner.run_due(at("2026-11-05", "07:00"))
    assert calls.of("curate")[0].since is None
    assert calls.of("audit") == [] and calls.of("digest") == []
    # The report jobs start with the next period: the next month's audit does run.
    runner.run_due(at("2026-12-01", "05:00"))
    assert [run.period for run in calls.of("audit")] == ["2026-11"]
    assert [run.period for run in calls.of("digest")] == ["2026-W48"]


def test_not_due_before_the_scheduled_time(vault, tmp_path, calls):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"), schedule_digest="off")
    set_success(runner, "curate", "2026-11-03")
    set_success(runner, "audit", "2026-10")
    assert runner.run_due(at("2026-11-05", "02:59")) == []
    assert len(runner.run_due(at("2026-11-05", "03:00"))) == 1


def test_dst_fall_back_double_fire_runs_once(vault, tmp_path, calls):
    # 01:30 happens twice in New York on 2026-11-01; APScheduler fires at both.
    trigger = CronTrigger(hour=1, minute=30, timezone=NY)
    first = trigger.get_next_fire_time(None, datetime(2026, 10, 31, 12, tzinfo=NY))
    second = trigger.get_next_fire_time(first, first + timedelta(seconds=1))
    assert first.replace(tzinfo=None) == second.replace(tzinfo=None)
    assert first.utcoffset() != second.utcoffset()

    runner = make_runner(vault, tmp_path, calls, first, schedule_curate="01:30", schedule_digest="off")
    set_success(runner, "curate", "2026-10-30")
    set_success(runner, "audit", "2026-10")

    assert runner.run_scheduled("curate", first).status == "ok"
    assert runner.run_scheduled("curate", second) is None
    assert runner.run_due(second + timedelta(minutes=5)) == []
    assert [run.day for run in calls.of("curate")] == [date(2026, 10, 31)]


# -- failures ---------------------------------------------------------------------------------------------------
def test_failure_is_recorded_and_retried_with_backoff(vault, tmp_path, calls):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"), schedule_digest="off")
    set_success(runner, "curate", "2026-11-03")
    set_success(runner, "audit", "2026-10")
    calls.fail = RuntimeError("LLM endpoint down")

    (result,) = runner.run_due(at("2026-11-05", "03:00"))
    assert result.status == "failed"
    record = runner.record("curate")
    assert record["reason"] == "RuntimeError: LLM endpoint down"
    assert record["failures"] == 1
    assert record["last_success"] == "2026-11-03"

    assert runner.run_due(at("2026-11-05", "03:04")) == []  # backing off: 5 min
    assert runner.run_due(at("2026-11-05", "03:05"))[0].status == "failed"
    assert runner.record("curate")["failures"] == 2
    assert runner.run_due(at("2026-11-05", "03:14")) == []  # now 10 min

    calls.fail = None
    assert runner.run_due(at("2026-11-05", "03:15"))[0].status == "ok"
    record = runner.record("curate")
    assert (record["failures"], record["retry_at"], record["last_success"]) == (0, None, "2026-11-04")
    assert len(calls.of("curate")) == 3
    assert {run.since for run in calls.of("curate")} == {date(2026, 11, 4)}


@pytest.mark.parametrize(("error", "traceback"), [(LLMError("the model is down"), False),
                                                  (RuntimeError("a bug"), True)], ids=["expected", "unexpected"])
def test_only_an_unexpected_failure_is_logged_with_its_traceback(vault, tmp_path, calls, caplog, error, traceback):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"))
    calls.fail = error
    with caplog.at_level("INFO", logger="wolfmem"):
        assert runner.run_now("curate", at("2026-11-05"), day=date(2026, 11, 4)).status == "failed"
    failed = [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert any(f"{type(error).__name__}: {error}" in r.getMessage() for r in failed)
    assert any(r.exc_info for r in failed) is traceback


def test_a_failed_status_from_the_job_counts_as_failure(vault, tmp_path):
    config = Config(state_dir=str(tmp_path / "state"), schedule_digest="off")
    memory = Memory(vault, config, clock=lambda: at("2026-11-05"))
    runner = JobRunner(memory.services, jobs={"curate": lambda run: {"status": "failed", "summary": "timeout"}})
    set_success(runner, "audit", "2026-10")
    assert runner.run_due(at("2026-11-05"))[0].status == "failed"
    assert runner.record("curate")["reason"] == "timeout"


def test_backoff_is_capped(vault, tmp_path, calls):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"))
    runner.services.state.put_run_record(RECORD_PREFIX + "curate", {"status": "failed", "failures": 30})
    calls.fail = RuntimeError("still down")
    runner.run_now("curate", at("2026-11-05", "08:00"))
    assert runner.record("curate")["retry_at"] == at("2026-11-05", "14:00").isoformat()


# -- manual runs ------------------------------------------------------------------------------------------------
def test_run_now_today_leaves_tonights_run_due(vault, tmp_path, calls):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05", "14:00"))
    set_success(runner, "curate", "2026-11-03")

    result = runner.run_now("curate", at("2026-11-05", "14:00"))
    assert result.status == "ok"
    assert (calls.runs[0].since, calls.runs[0].day) == (date(2026, 11, 4), date(2026, 11, 5))
    assert runner.record("curate")["last_success"] == "2026-11-04"  # today is not over yet

    runner.run_scheduled("curate", at("2026-11-06", "03:00"))
    assert (calls.runs[1].since, calls.runs[1].day) == (date(2026, 11, 5), date(2026, 11, 5))


def test_run_now_dry_run_records_nothing(vault, tmp_path, calls):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"))
    result = runner.run_now("curate", at("2026-11-05"), dry_run=True)
    assert result.status == "ok" and calls.runs[0].dry_run
    assert runner.record("curate") is None
    assert not (vault / ".wolfmem" / "lease.json").exists()


def test_run_now_passes_apply_and_day(vault, tmp_path, calls):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"))
    runner.run_now("audit", at("2026-11-05"), day=date(2026, 10, 12), apply=False)
    (run,) = calls.runs
    assert (run.period, run.day, run.apply) == ("2026-10", date(2026, 10, 31), False)
    assert runner.record("audit")["last_success"] == "2026-10"


def test_unknown_job_is_misuse(vault, tmp_path, calls):
    with pytest.raises(UsageError, match="curate, audit, digest"):
        make_runner(vault, tmp_path, calls, at("2026-11-05")).run_now("curation", at("2026-11-05"))


def test_job_running_in_another_thread_is_busy(vault, tmp_path):
    started, release = threading.Event(), threading.Event()

    def slow(run):
        started.set()
        release.wait(10)
        return {"status": "ok", "summary": "done"}

    config = Config(state_dir=str(tmp_path / "state"))
    memory = Memory(vault, config, clock=lambda: at("2026-11-05"))
    runner = JobRunner(memory.services, jobs={"curate": slow})
    worker = threading.Thread(target=runner.run_now, args=("curate", at("2026-11-05")))
    worker.start()
    try:
        assert started.wait(10)
        assert runner.run_now("curate", at("2026-11-05")).status == "busy"
    finally:
        release.set()
        worker.join(10)


SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from datetime import datetime
    from zoneinfo import ZoneInfo
    from wolfmem import Config, Memory
    from wolfmem.jobs.runner import JobRunner

    vault, state, ran, go, mode = sys.argv[1:6]
    now = datetime(2026, 11, 5, 7, 0, tzinfo=ZoneInfo("Europe/Berlin"))

    def slow(run):
        with open(ran, "a") as handle:
            handle.write(f"{os.getpid()} {run.period}\\n")
        time.sleep(0.5)
        return {"status": "ok", "summary": "curated"}

    config = Config(state_dir=state, schedule_digest="off", schedule_audit="off")
    memory = Memory(vault, config, clock=lambda: now)
    runner = JobRunner(memory.services, jobs={"curate": slow})
    while not os.path.exists(go):
        time.sleep(0.005)
    if mode == "run_due":
        print([r.status.value for r in runner.run_due(now)])
    else:
        from wolfmem.jobs.scheduler import Scheduler

        results = []
        real = runner.run_due
        runner.run_due = lambda when: results.extend(real(when)) or results
        scheduler = Scheduler(memory.services, runner=runner)
        scheduler.start()
        while scheduler.heartbeats < 1:
            time.sleep(0.01)
        scheduler.stop()
        print([r.status.value for r in results])
    """
)


@pytest.mark.parametrize("mode", ["run_due", "scheduler"])
def test_two_processes_only_the_lock_holder_runs(vault, tmp_path, mode):
    ran, go = tmp_path / "ran.txt", tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(vault), str(tmp_path / "state"), str(ran), str(go), mode],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        for _ in range(2)
    ]
    go.touch()
    outputs = [proc.communicate(timeout=60) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), outputs
    assert len(ran.read_text().splitlines()) == 1
    statuses = [out.strip() for out, _ in outputs]
    # The loser found the lock held, or the period already done (before or after taking the lock).
    assert statuses.count("['ok']") == 1, statuses
    statuses.remove("['ok']")
    assert statuses[0] in ("['busy']", "['done']", "[]")


# -- status and digest ----------------------------------------------------------------------------------------
def test_status_shows_last_and_next_runs(vault, tmp_path, calls):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"))
    runner.run_due(at("2026-11-05", "07:00"))
    status = runner.status(at("2026-11-05", "07:05"))
    curate = status["jobs"]["curate"]
    assert curate["last_run"]["status"] == "ok"
    assert curate["last_run"]["summary"] == "curate 2026-11-04"
    assert curate["next_run"] == at("2026-11-06", "03:00").isoformat()
    assert status["jobs"]["audit"]["next_run"] == at("2026-12-01", "04:00").isoformat()
    assert status["llm"] == "offline"
    assert status["lease"].startswith("this machine")


def test_status_shows_overdue_and_backoff(vault, tmp_path, calls):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"))
    assert runner.status(at("2026-11-05"))["jobs"]["curate"]["next_run"].startswith("overdue")
    calls.fail = RuntimeError("down")
    runner.run_scheduled("curate", at("2026-11-05", "07:00"))
    assert runner.status(at("2026-11-05", "07:01"))["jobs"]["curate"]["next_run"] == at(
        "2026-11-05", "07:05").isoformat()


def test_digest_counts_the_week(vault, tmp_path):
    now = at("2026-11-08", "19:00")
    config = Config(state_dir=str(tmp_path / "state"))
    memory = Memory(vault, config, clock=lambda: now)
    memory.log_episode(["Paired with Sarah on the importer."], "importer", when=at("2026-11-04", "10:00"))
    memory.log_episode(["Shipped it."], "ship", when=at("2026-11-05", "11:00"))
    memory.log_episode(["Too old."], "old", when=at("2026-10-20", "11:00"))
    memory.save("Sarah manages the platform team.", type="people", topic="Sarah (Manager)")
    runner = JobRunner(memory.services)
    runner.services.state.put_run_record(RECORD_PREFIX + "curate", {"last_success": "2026-11-07"})
    runner.services.state.put_run_record(RECORD_PREFIX + "audit", {"last_success": "2026-10"})
    runner.services.state.put_run_record(RECORD_PREFIX + "digest", {"last_success": "2026-W44"})

    (result,) = runner.run_due(now)

    assert result.status == "ok"
    text = (vault / "consolidated" / "digest-2026-W45.md").read_text()
    assert "- Episode entries: 2" in text
    assert "- Facts saved: 1" in text
    assert "people.md: Sarah (Manager)" in text
    assert memory.search("Facts saved", sources="consolidated")


def test_real_curation_job_covers_the_missed_days(vault, tmp_path):
    config = Config(state_dir=str(tmp_path / "state"), schedule_digest="off", schedule_audit="off")
    memory = Memory(vault, config, clock=lambda: at("2026-11-05"))
    memory.log_episode(["Sarah moved to the data team."], "sarah", when=at("2026-11-02", "10:00"))
    runner = JobRunner(memory.services)
    set_success(runner, "curate", "2026-11-01")

    (result,) = runner.run_due(at("2026-11-05", "07:00"))

    assert result.status in {"noop", "landed"}, result
    assert result.since == "2026-11-02" and result.day == "2026-11-04"
    record = memory.state.run_record("curate")
    assert record["since"] == "2026-11-02" and record["day"] == "2026-11-04"
    assert "from 2026-11-02 through 2026-11-04" in record["summary"]
    assert runner.record("curate")["last_success"] == "2026-11-04"



# -- a vault's first day ---------------------------------------------------------------------------------------
def test_a_new_vaults_first_start_curates_nothing_before_it_and_the_next_night_curates_its_first_day(tmp_path):
    now = {"t": at("2026-11-05", "09:00")}
    root = tmp_path / "new-vault"
    config = Config(state_dir=str(tmp_path / "state"), schedule_digest="off")
    with Memory(root, config, clock=lambda: now["t"]) as memory:
        runner = JobRunner(memory.services)
        # Nov 4 ended before the vault existed: nothing to curate, and nothing is written for it.
        assert runner.run_due(now["t"]) == []
        assert runner.record("curate") is None
        assert not (root / "consolidated").exists()
        assert not (root / ".wolfmem" / "lease.json").exists()
        assert runner.status(now["t"])["jobs"]["curate"]["next_run"] == at("2026-11-06", "03:00").isoformat()
        memory.log_episode(["Sarah moved to the data team."], "sarah", when=at("2026-11-05", "10:00"))
        now["t"] = at("2026-11-06", "07:00")

        (result,) = runner.run_due(now["t"])
        record = memory.state.run_record("curate")

    # The first real period is the vault's first day.
    assert (result.job, result.period, result.since, result.day) == ("curate", "2026-11-05", "2026-11-05", "2026-11-05")
    assert (record["since"], record["day"]) == ("2026-11-05", "2026-11-05")
    assert result.detail["entries"] == 1, result
    assert "2026-11-05" in (root / "consolidated" / "2026-W45.md").read_text()


def test_a_vault_wolfmem_did_not_create_is_curated_on_its_first_start(vault, tmp_path, calls):
    # The `vault` fixture was laid out by another state folder: this one has no first day for it.
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"), schedule_digest="off")
    runner.run_due(at("2026-11-05", "07:00"))
    assert [run.period for run in calls.of("curate")] == ["2026-11-04"]


def test_a_first_day_from_a_clock_that_was_ahead_blocks_no_night(tmp_path, calls):
    root = tmp_path / "new-vault"
    with Memory(root, Config(state_dir=str(tmp_path / "state")), clock=lambda: at("2026-11-20")):
        pass  # created with the clock 15 days ahead
    runner = make_runner(root, tmp_path, calls, at("2026-11-05"), schedule_digest="off")
    runner.run_due(at("2026-11-05", "07:00"))
    assert [run.period for run in calls.of("curate")] == ["2026-11-04"]


# -- `since`: the first day a curation run covers, the same day on both sides of jobs/tasks.py ----------------
@pytest.mark.parametrize(
    ("saved_on", "listed"),
    [
        ("2026-11-03", False),  # the day of the last success: covered by that run
        ("2026-11-04", True),  # since: the first day this run covers
        ("2026-11-05", True),  # day: the last day it covers
        ("2026-11-06", False),  # today: not over yet, the next run covers it
    ],
)
def test_since_is_the_first_day_covered_by_runner_curation_and_record(vault, fake, llm_config, saved_on, listed):
    now = {"t": at(saved_on, "12:00")}
    with Memory(vault, llm_config, clock=lambda: now["t"]) as memory:
        memory.save("Sarah Chen is my manager.", "people", "Sarah Chen")
        runner = JobRunner(memory.services)
        set_success(runner, "curate", "2026-11-03")
        now["t"] = at("2026-11-06", "07:00")

        (result,) = runner.run_due(now["t"])

        record = memory.state.run_record("curate")
        assert result.since == record["since"] == "2026-11-04" and result.day == record["day"] == "2026-11-05"
        assert "from 2026-11-04 through 2026-11-05" in record["summary"]
        user = fake.requests[-1]["messages"][1]["content"]
        assert ("Sarah Chen is my manager." in user.split("Facts saved since the last curation")[-1]) == listed


def test_a_job_result_prints_as_the_json_it_always_was(vault, tmp_path, calls):
    runner = make_runner(vault, tmp_path, calls, at("2026-11-05"))
    result = runner.run_now("curate", at("2026-11-05"), day=date(2026, 11, 4))
    assert result.to_dict() == {"job": "curate", "period": "2026-11-04", "since": None, "day": "2026-11-04",
                                "status": "ok", "summary": "curate 2026-11-04"}
    assert JobResult("curate", JobStatus.BUSY, "already running", "2026-11-04").to_dict() == {
        "job": "curate", "status": "busy", "period": "2026-11-04", "summary": "already running"}
    calls.fail = RuntimeError("down")
    failed = runner.run_now("curate", at("2026-11-05"), day=date(2026, 11, 4))
    assert failed.failed and failed.status is JobStatus.FAILED and failed.summary == "RuntimeError: down"
