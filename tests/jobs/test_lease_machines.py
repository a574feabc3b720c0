"""The lease across machines: two state folders on one vault, each with its own injected clock.

Covers the contested takeover (atomic through the writer's compare-and-exchange), the takeover that
can curate, damaged lease files, clocks running ahead or behind, and a sync tool's conflict copy.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from leasekit import published

from wolfmem import Config, Memory
from wolfmem.curation import run as curate
from wolfmem.curation.contract import Change, ChangeKind, CurationRequest, FileProposal, Proposal
from wolfmem.jobs.lease import CURATOR_REL, LEASE_REL, judge, parse_lease
from wolfmem.jobs.runner import JobRun, JobRunner
from wolfmem.storage.writer import Stage

NOW = datetime(2026, 11, 5, 7, 0, tzinfo=UTC)
PEOPLE = "knowledge/people.md"
BUDGET = "Sarah Chen approved the Q4 budget."
MANAGER = "Sarah Chen is my manager."


class Machine:
    """One machine: its own state folder, clock and job runner over the shared vault."""

    def __init__(self, vault: Path, tmp_path: Path, name: str, job=None, skew: timedelta = timedelta()) -> None:
        self.name = name
        self.skew = skew
        self.now = NOW
        self.runs: list[JobRun] = []
        config = Config(state_dir=str(tmp_path / f"state-{name}"), schedule_audit="off", schedule_digest="off")
        self.memory = Memory(vault, config, clock=self.clock)

        def recorded(run: JobRun):
            self.runs.append(run)
            return (job or (lambda _run: {"status": "ok", "summary": "curated"}))(run)

        self.runner = JobRunner(self.memory.services, jobs={"curate": recorded})

    def clock(self) -> datetime:
        return self.now + self.skew

    def due(self, at: datetime) -> list[dict]:
        self.now = at
        return self.runner.run_due(self.clock())

    def covered(self) -> list[tuple[date | None, date]]:
        return [(run.since, run.day) for run in self.runs]

    def close(self) -> None:
        self.memory.close()


@pytest.fixture
def machines(vault, tmp_path):
    made: list[Machine] = []

    def make(name: str, **options) -> Machine:
        made.append(Machine(vault, tmp_path, name, **options))
        return made[-1]

    yield make
    for machine in made:
        machine.close()


def lease_of(vault: Path) -> dict:
    return published(vault)


def write_lease(vault: Path, text: str) -> None:
    (vault / LEASE_REL).parent.mkdir(parents=True, exist_ok=True)
    (vault / LEASE_REL).write_text(text)


def stale_lease(vault: Path, done: str = "2026-11-02") -> None:
    write_lease(vault, json.dumps({"machine": "old-laptop-0000", "last_run": (NOW - timedelta(hours=40)).isoformat(),
                                   "done": {"curate": done}}))


# -- a contested takeover -----------------------------------------------------------------------------------
def test_a_contested_stale_lease_goes_to_exactly_one_machine(vault, machines):
    stale_lease(vault)
    a, b = machines("a"), machines("b")
    raced = []

    def b_takes_it_meanwhile(stage: Stage, rel: str) -> None:
        # A has read the stale lease and works out its takeover; B takes the lease in that instant.
        if rel == CURATOR_REL and stage is Stage.READ and not raced:
            raced.append(b.due(NOW))

    a.memory.writer.on_stage = b_takes_it_meanwhile
    (result_a,) = a.due(NOW)

    assert [r.status for r in raced[0]] == ["ok"] and len(b.runs) == 1
    assert result_a.status == "skipped" and a.runs == []
    assert f"{b.runner.lease.machine} curates this vault" in result_a.summary
    assert lease_of(vault)["machine"] == b.runner.lease.machine
    assert lease_of(vault)["done"] == {"curate": "2026-11-04"}


def test_takeover_starts_right_after_the_last_period_done(vault, machines):
    stale_lease(vault, done="2026-11-01")
    b = machines("b")
    b.due(NOW)
    assert b.covered() == [(date(2026, 11, 2), date(2026, 11, 4))]  # no day left out, none twice


# -- the machine that takes over can curate ------------------------------------------------------------------
class Tidy:
    """A canned curator: files the Unfiled line about Sarah under her section (a reorder)."""

    label = "canned curator"
    reads_episodes = False

    def propose(self, request: CurationRequest) -> Proposal:
        files = {}
        for rel, item in request.files.items():
            if rel == PEOPLE and f"- {BUDGET}\n" in item.text:
                text = item.text.replace(f"- {BUDGET}\n", "").replace(f"- {MANAGER}\n", f"- {MANAGER}\n- {BUDGET}\n")
                files[rel] = FileProposal("rewrite", text, [Change(ChangeKind.FILED, (BUDGET,), BUDGET,
                                                                   "names Sarah Chen")])
            else:
                files[rel] = FileProposal("unchanged")
        return Proposal(files)

    def close(self) -> None:
        pass


def curate_with_tidy(run: JobRun) -> dict:
    return curate.run(run.services, Tidy(), run.day, since=run.since).to_dict()


@pytest.mark.parametrize("with_log", [True, False])
def test_the_machine_that_takes_over_can_curate(vault, tmp_path, machines, with_log):
    a = machines("a")
    a.memory.save(BUDGET, "people")
    a.memory.save(MANAGER, "people", "Sarah Chen")
    a.due(NOW)  # a holds the lease and has curated through 2026-11-04 (nothing to tidy yet: it is a job stub)
    a.close()
    if not with_log:
        for log in (vault / ".wolfmem" / "provenance").rglob("*.jsonl"):
            log.unlink()
    b = machines("b", job=curate_with_tidy)

    (result,) = b.due(NOW + timedelta(hours=40))

    outcome = result.detail["files"][PEOPLE]
    if with_log:
        assert result.status == "landed" and outcome["status"] == "written", outcome
        text = (vault / PEOPLE).read_text()
        assert text.index(MANAGER) < text.index(BUDGET) and text.count(BUDGET) == 1
    else:  # what the log fixes: without it, every line looks hand-written here
        assert outcome["status"] == "rejected" and "reorders hand-edited lines" in outcome["reasons"][0]


# -- a damaged lease file -------------------------------------------------------------------------------------
FRESH = (NOW - timedelta(hours=1)).isoformat()


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "null",
        "[1, 2]",
        '"a string"',
        json.dumps({"machine": None, "last_run": FRESH}),
        json.dumps({"machine": 42, "last_run": FRESH}),
        json.dumps({"machine": "", "last_run": FRESH}),
        json.dumps({"machine": "desk-1", "last_run": None}),
        json.dumps({"machine": "desk-1", "last_run": 1730790000}),
        json.dumps({"machine": "desk-1", "last_run": "yesterday"}),
        json.dumps({"machine": "desk-1"}),
        "<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> theirs\n",
    ],
)
def test_a_damaged_lease_is_stale_with_a_warning_and_left_alone(vault, machines, text, caplog):
    write_lease(vault, text)
    b = machines("b")
    (result,) = b.due(NOW)
    assert result.status == "ok" and len(b.runs) == 1
    assert "lease file" in caplog.text and "counts as stale" in caplog.text
    lease = lease_of(vault)
    assert lease["machine"] == b.runner.lease.machine and lease["done"] == {"curate": "2026-11-04"}
    assert (vault / LEASE_REL).read_text() == text


@pytest.mark.parametrize(
    ("done", "runs"),
    [
        ({"curate": None}, True),  # a null period is no period
        ({"curate": 20261104}, True),
        ({"curate": "2026-11"}, True),  # a month is not a curation period
        ({"curate": "9999-12-31"}, True),  # a claim from a broken clock cannot stop curation for good
        ({"curate": "2026-11-04"}, False),  # a real claim is honoured
        ([], True),
    ],
)
def test_wrong_typed_done_entries_are_ignored(vault, machines, done, runs):
    write_lease(vault, json.dumps({"machine": "old-laptop-0000", "last_run": (NOW - timedelta(hours=40)).isoformat(),
                                   "done": done}))
    b = machines("b")
    b.due(NOW)
    assert bool(b.runs) is runs
    assert all(value <= "2026-11-04" for value in lease_of(vault)["done"].values())


def test_parse_lease_names_what_is_wrong():
    text = json.dumps({"machine": "desk-1", "last_run": FRESH, "done": {"curate": 5, "audit": "2026-10"}})
    parsed = parse_lease(text)
    assert parsed.lease is not None and parsed.done == {"audit": "2026-10"}
    assert parsed.problems == ("done['curate'] = 5 is not a period",)


# -- clocks ------------------------------------------------------------------------------------------------------
def test_a_lease_stamped_days_ahead_cannot_lock_the_others_out_for_long(vault, machines):
    def fails(_run: JobRun) -> dict:
        return {"status": "failed", "summary": "the LLM endpoint is down"}

    ahead = machines("ahead", skew=timedelta(days=3), job=fails)
    ahead.due(NOW)  # takes the lease, stamped 3 days in the future, then stops for good
    ahead.close()
    b = machines("b")

    (first,) = b.due(NOW + timedelta(hours=1))
    assert first.status == "skipped" and "not trusted" in first.summary
    (still,) = b.due(NOW + timedelta(hours=36))
    assert still.status == "skipped"
    # Stale lease.hours after b first saw it, not 3 days + lease.hours later.
    (taken,) = b.due(NOW + timedelta(hours=38))
    assert taken.status == "ok" and lease_of(vault)["machine"] == b.runner.lease.machine


def test_a_machine_whose_clock_is_behind_never_reruns_days_done(vault, machines):
    a = machines("a")
    a.due(NOW)  # curates through 2026-11-04
    a.close()
    behind = machines("behind", skew=-timedelta(days=3))
    for day in range(8):
        behind.due(NOW + timedelta(days=day, hours=13))
    assert behind.covered(), "the machine behind takes over once its calendar passes the days done"
    assert min(since for since, _ in behind.covered()) == date(2026, 11, 5)
    days = [d for since, last in behind.covered() for d in _days(since, last)]
    assert len(days) == len(set(days)) and min(days) > date(2026, 11, 4)


def test_judge_trusts_a_stamp_only_up_to_the_tolerance():
    lease = parse_lease(json.dumps({"machine": "desk-1", "last_run": (NOW + timedelta(minutes=5)).isoformat()})).lease
    assert not judge(lease, "me", NOW + timedelta(hours=35), 36, NOW).ok  # 5 min ahead: trusted
    early = parse_lease(json.dumps({"machine": "desk-1", "last_run": (NOW + timedelta(hours=2)).isoformat()})).lease
    assert judge(early, "me", NOW + timedelta(hours=36, minutes=11), 36, NOW).ok  # counted from first sight
    assert not judge(early, "me", NOW + timedelta(hours=35), 36, NOW).ok


# -- sync tools ------------------------------------------------------------------------------------------------
def test_a_double_run_under_sync_delay_loses_nothing_and_converges_on_one_curator(vault, machines):
    a, b = machines("a", job=curate_with_tidy), machines("b", job=curate_with_tidy)
    a.memory.save(BUDGET, "people")
    a.memory.save(MANAGER, "people", "Sarah Chen")
    a.memory.provenance.publish()
    # No atomicity across a sync engine: b has not received a's records yet, and curates the same day.
    a.due(NOW)
    folder = vault / ".wolfmem"
    a_choice, a_file = (folder / "curator.jsonl").read_text(), (folder / "machines" / f"{a.runner.lease.machine}.json")
    a_own = a_file.read_text()
    (folder / "curator.jsonl").unlink()
    a_file.unlink()
    b.due(NOW)
    assert len(b.runs) == 1
    # Then the engine delivers: a's choice as a conflict copy of the record, a's own file (it did 11-05 too).
    (folder / "curator.sync-conflict-20261105-070000-ABCDEFG.jsonl").write_text(a_choice)
    a_file.write_text(a_own.replace("2026-11-04", "2026-11-05"))
    text = (vault / PEOPLE).read_text()
    assert text.count(BUDGET) == 1 and text.count(MANAGER) == 1  # nothing lost, nothing twice
    # Both converge: one curator (the latest choice) on both, and 2026-11-05 is done for both.
    assert a.runner.lease.read().machine == b.runner.lease.read().machine
    assert a.due(NOW + timedelta(days=1)) == [] and b.due(NOW + timedelta(days=1)) == []
    assert lease_of(vault)["done"]["curate"] == "2026-11-05"


def test_a_takeover_is_announced_on_both_machines(vault, machines):
    a, b = machines("a"), machines("b")
    a.due(NOW)
    later = NOW + timedelta(hours=40)  # a has been silent for longer than lease.hours
    (taken,) = b.due(later)
    assert taken.status == "ok"
    for machine in (a, b):
        line = machine.runner.status(later)["lease"]
        assert f"took over from {a.runner.lease.machine}" in line and b.runner.lease.machine in line
    assert a.due(later + timedelta(hours=1)) == [] or all(r.status == "skipped" for r in a.due(later))


def test_wolfmem_curator_take_moves_curation_at_once(vault, machines):
    a, b = machines("a"), machines("b")
    a.due(NOW)
    b.runner.lease.choose(NOW + timedelta(hours=1))
    (skipped,) = a.due(NOW + timedelta(days=1))
    assert skipped.status == "skipped" and f"{b.runner.lease.machine} curates" in skipped.summary
    (ran,) = b.due(NOW + timedelta(days=1))
    assert ran.status == "ok"


def test_a_lost_lease_file_does_not_make_a_period_run_again(vault, machines):
    a, c = machines("a"), machines("c")
    a.due(NOW)
    assert c.due(NOW) == []  # the records say 2026-11-04 is done, and c remembers it
    for path in (vault / ".wolfmem" / "machines").iterdir():
        path.unlink()  # a sync tool lost them, or a person deleted them
    (vault / ".wolfmem" / "curator.jsonl").unlink()
    assert c.due(NOW) == [] and c.runs == []
    write_lease(vault, "{}")
    assert c.due(NOW) == [] and c.runs == []


def _days(since: date | None, last: date) -> list[date]:
    start = since or last
    return [start + timedelta(days=n) for n in range((last - start).days + 1)]


def test_a_machine_back_from_days_away_waits_for_its_engine_before_taking_over(vault, machines):
    a, b = machines("a"), machines("b")
    a.due(NOW)
    b.due(NOW + timedelta(hours=1))  # b's daemon runs and sees a curate
    back = NOW + timedelta(hours=49)  # b's laptop was closed for two days; a's news has not reached it yet
    (first,) = b.due(back)
    assert first.status == "skipped" and "was away" in first.summary
    (still,) = b.due(back + timedelta(minutes=30))  # a heartbeat later: still within the grace
    assert still.status == "skipped"
    (taken,) = b.due(back + timedelta(hours=1, minutes=5))  # nothing came: a really is silent
    assert taken.status == "ok"
    assert f"took over from {a.runner.lease.machine}" in b.runner.status(back + timedelta(hours=2))["lease"]
