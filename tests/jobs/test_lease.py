"""The multi-machine curation lease in <vault>/.wolfmem/lease.json."""

from __future__ import annotations

import json
import socket
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from leasekit import published

from wolfmem import Config, Memory
from wolfmem.jobs.lease import LEASE_REL, LeaseFile, machine_id
from wolfmem.jobs.runner import RECORD_PREFIX, JobRunner
from wolfmem.jobs.tasks import JobStatus

NOW = datetime(2026, 11, 5, 7, 0, tzinfo=UTC)


def write_lease(vault: Path, machine: str, last_run: datetime, done: dict | None = None) -> None:
    path = vault / LEASE_REL
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "machine": machine, "last_run": last_run.isoformat(),
                                "done": done or {}}))


def runner_for(vault: Path, tmp_path: Path, runs: list) -> JobRunner:
    config = Config(state_dir=str(tmp_path / "state"), schedule_digest="off", schedule_audit="off")
    memory = Memory(vault, config, clock=lambda: NOW)

    def job(run):
        runs.append(run)
        return {"status": "ok", "summary": "curated"}

    return JobRunner(memory.services, jobs={"curate": job})


def test_machine_id_is_hostname_plus_a_stable_random_suffix(tmp_path):
    first = machine_id(tmp_path / "state")
    assert first == machine_id(tmp_path / "state")
    host, suffix = first.rsplit("-", 1)
    assert len(suffix) == 8 and host[:3] == socket.gethostname()[:3]
    assert first != machine_id(tmp_path / "other-state")


def test_no_lease_is_taken(tmp_path):
    memory = Memory(tmp_path / "v", Config(state_dir=str(tmp_path / "s")))
    lease = LeaseFile(memory.writer, "me-1", 36)
    assert lease.check(NOW).ok
    lease.renew(NOW, "curate", "2026-11-04")
    data = published(tmp_path / "v")
    assert data["machine"] == "me-1" and data["done"] == {"curate": "2026-11-04"}
    assert lease.check(NOW + timedelta(days=10)).ok  # our own lease never blocks us


def test_another_machines_fresh_lease_blocks(vault, tmp_path):
    write_lease(vault, "desktop-abcd", NOW - timedelta(hours=20))
    runs: list = []
    runner = runner_for(vault, tmp_path, runs)

    (result,) = runner.run_due(NOW)

    assert result.status == "skipped"
    assert "desktop-abcd curates this vault" in result.summary
    assert runs == []
    assert runner.record("curate")["status"] == "skipped"
    assert runner.record("curate").get("failures", 0) == 0
    assert "desktop-abcd" in runner.status(NOW)["lease"]
    # The manual path respects the lease too.
    assert runner.run_now("curate", NOW).status == "skipped"


def test_stale_lease_is_taken_over_from_where_the_holder_stopped(vault, tmp_path):
    write_lease(vault, "desktop-abcd", NOW - timedelta(hours=37), {"curate": "2026-11-02"})
    runs: list = []
    runner = runner_for(vault, tmp_path, runs)
    runner.services.state.put_run_record(RECORD_PREFIX + "curate", {"last_success": "2026-09-01"})

    (result,) = runner.run_due(NOW)

    assert result.status == "ok"
    assert (runs[0].since, runs[0].day) == (date(2026, 11, 3), date(2026, 11, 4))
    lease = published(vault)
    assert lease["machine"] == runner.lease.machine
    assert lease["done"]["curate"] == "2026-11-04"


def test_a_period_done_by_the_old_holder_is_not_redone(vault, tmp_path):
    write_lease(vault, "desktop-abcd", NOW - timedelta(hours=40), {"curate": "2026-11-04"})
    runs: list = []
    assert runner_for(vault, tmp_path, runs).run_due(NOW) == []
    assert runs == []


def test_unreadable_lease_is_up_for_grabs(tmp_path):
    memory = Memory(tmp_path / "v", Config(state_dir=str(tmp_path / "s")))
    (memory.vault.root / ".wolfmem").mkdir(parents=True)
    (memory.vault.root / LEASE_REL).write_text("{not json")
    assert LeaseFile(memory.writer, "me-1", 36).check(NOW).ok


@pytest.mark.parametrize("text", ["1" * 5000, "[" * 100_000], ids=["number over 4,300 digits", "nested too deep"])
def test_json_too_big_to_read_is_an_unreadable_lease(tmp_path, text):
    # json.loads raises a plain ValueError or a RecursionError here, not JSONDecodeError.
    memory = Memory(tmp_path / "v", Config(state_dir=str(tmp_path / "s")))
    (memory.vault.root / ".wolfmem").mkdir(parents=True)
    (memory.vault.root / LEASE_REL).write_text(text)
    assert LeaseFile(memory.writer, "me-1", 36).check(NOW).ok


def test_lease_file_is_not_indexed(vault, tmp_path):
    write_lease(vault, "desktop-abcd", NOW)
    with Memory(vault, Config(state_dir=str(tmp_path / "state"))) as memory:
        assert not any(".wolfmem" in rel for rel in memory.vault.scan())


def test_a_lease_that_is_not_utf8_is_stale_and_left_as_it_was(vault, tmp_path):
    damaged = b"\xff\xfe{\x00\"machine\": \"laptop-1234\"}\x00"  # a binary sync conflict, a bad sector
    (vault / ".wolfmem").mkdir(exist_ok=True)
    (vault / LEASE_REL).write_bytes(damaged)
    config = Config(state_dir=str(tmp_path / "state"), schedule_digest="off", schedule_audit="off")
    with Memory(vault, config, clock=lambda: NOW) as memory:
        memory.log_episode(["Tom moved to Oslo."], when=NOW - timedelta(days=1))
        runner = JobRunner(memory.services)  # the real curation job, offline curator

        result = runner.run_now("curate", NOW, day=date(2026, 11, 4))

        assert result.status not in {JobStatus.FAILED, JobStatus.ERROR, JobStatus.SKIPPED}, result
        lease = published(vault)
        assert lease["machine"] == runner.lease.machine and lease["done"] == {"curate": "2026-11-04"}
        assert (vault / LEASE_REL).read_bytes() == damaged  # the old shared file is only read, never rewritten
        assert runner.lease.check(NOW).ok
