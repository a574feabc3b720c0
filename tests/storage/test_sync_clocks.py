"""Two machines' clocks moved with libfaketime, a vault kept in step by Syncthing: one curator per period.

Each machine is a real `wolfmem daemon` (and CLI processes) under libfaketime at a chosen time, over a
folder two Syncthing instances on 127.0.0.1 keep in step. Curation due on both at once, and a machine
offline for two days then back, each end with every acknowledged fact and hand line in people.md on both
machines, no conflict copy left, no line twice, and each period curated once (or twice to one result).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_until
from synckit import (
    Machine,
    acknowledged,
    clock_shim,
    conflict_copies,
    converged,
    have_engines,
    have_faketime,
    lines_of,
    syncthing_pair,
)

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (have_engines() and have_faketime()), reason="needs syncthing and libfaketime")]

PEOPLE = "knowledge/people.md"
CURATE_ON = {"WOLFMEM_SCHEDULE_CURATE": "03:00"}
CURATED = ("ok", "landed", "noop")
TODAY = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _facts(machine: str, day: int, count: int = 4) -> list[tuple[str, str]]:
    return [(f"Ann{machine}{n % 2} from {machine} on day {day} likes dish {n}.", f"Ann{machine}{n % 2}")
            for n in range(count)]


def _hand_line(root: Path, line: str) -> None:
    """A person's line, typed at the end of people.md on this machine."""
    with open(root / PEOPLE, "a", encoding="utf-8") as handle:
        handle.write(f"- {line}\n")


def _curate_record(machine: Machine) -> dict[str, Any]:
    """This machine's curation job record, as `wolfmem status --json` shows it ({} before any run)."""
    status = json.loads(machine.cli("status", "--json").stdout)
    return status["jobs"]["jobs"]["curate"]["last_run"] or {}


def _ran(machine: Machine, period: str) -> bool:
    record = _curate_record(machine)
    return record.get("period") == period and record.get("status") in (*CURATED, "skipped")


def _assert_nothing_lost(roots: tuple[Path, Path], saved: list[str], hand: list[str]) -> None:
    for root in roots:
        have = lines_of(root)
        assert [fact for fact in saved + hand if fact not in have] == [], root
        assert conflict_copies(root) == [], root
        text = (root / PEOPLE).read_text("utf-8")
        assert [fact for fact in saved + hand if text.count(f"- {fact}\n") != 1] == [], "no line twice"
    assert (roots[0] / PEOPLE).read_bytes() == (roots[1] / PEOPLE).read_bytes()


def _curated_by(root: Path) -> dict[str, str]:
    """Each machine file's last curated period, as the vault records it."""
    out = {}
    for path in (root / ".wolfmem" / "machines").glob("*.json"):
        out[path.stem] = json.loads(path.read_text()).get("done", {}).get("curate", "")
    return out


def _machines(tmp_path: Path) -> tuple[Machine, Machine]:
    a_root, b_root = tmp_path / "a" / "vault", tmp_path / "b" / "vault"
    return Machine(a_root, tmp_path / "a" / "state"), Machine(b_root, tmp_path / "b" / "state")


def _save_day(machines: dict[str, Machine], day: int) -> list[str]:
    """Each machine saves a few facts into people.md at once; the facts acknowledged."""
    savers = [machine.save_many(_facts(name, day), 0.2) for name, machine in machines.items()]
    return [fact for process in savers for fact in acknowledged(process)]


def _night(machine: Machine, day: datetime, shim: Path) -> dict[str, Any]:
    """The machine's daemon starts just after 03:00 on `day`; its curation record once the night's job ran."""
    period = (day - timedelta(days=1)).date().isoformat()
    machine.set_clock(day + timedelta(hours=3, seconds=5), shim)
    machine.env.update(CURATE_ON)
    machine.start()
    try:
        wait_until(lambda: _ran(machine, period), timeout=30, interval=1)
    finally:
        machine.stop()
    return _curate_record(machine)


def _lease(machine: Machine) -> dict[str, Any]:
    return dict(json.loads(machine.cli("curator", "--json").stdout))


def test_curation_due_on_both_machines_at_once_runs_to_one_result(tmp_path: Path) -> None:
    shim = clock_shim(tmp_path)
    a, b = _machines(tmp_path)
    assert a.cli("init").returncode == 0
    with syncthing_pair(tmp_path, a.root, b.root) as pair:
        converged(pair, a.root, b.root)
        for machine in (a, b):  # the day: both save into people.md, a person writes a line on each
            machine.set_clock(TODAY + timedelta(hours=15), shim)
            machine.start()
        try:
            # Work for the night: saved apart, A's `## Bea` and B's `## Bea (Chef)` are for curation to join.
            pair[1].pause()
            bea = [("Bea swims at dawn.", "Bea"), ("Bea cooks for the team.", "Bea (Chef)")]
            saved = [fact for machine, item in zip((a, b), bea, strict=True)
                     for fact in acknowledged(machine.save_many([item], 0))]
            pair[1].pause(False)
            saved += _save_day({"A": a, "B": b}, 1)
            hand = ["Written by hand on A: Ann loves the sea.", "Written by hand on B: Ann hates the rain."]
            _hand_line(a.root, hand[0])
            _hand_line(b.root, hand[1])
            converged(pair, a.root, b.root, quiet=4)
        finally:
            for machine in (a, b):
                machine.stop()
        period = TODAY.date().isoformat()
        for machine in (a, b):  # the night: both daemons start just after 03:00, so curation is due on both
            machine.set_clock(TODAY + timedelta(days=1, hours=3, seconds=5), shim)
            machine.env.update(CURATE_ON)
            machine.start()
        try:
            wait_until(lambda: all(_ran(machine, period) for machine in (a, b)), timeout=40, interval=1)
            converged(pair, a.root, b.root, quiet=4)
        finally:
            for machine in (a, b):
                machine.stop()
        converged(pair, a.root, b.root)
    assert len(saved) == 10
    _assert_nothing_lost((a.root, b.root), saved, hand)
    records = [_curate_record(machine) for machine in (a, b)]
    assert [record for record in records if record.get("status") in ("ok", "landed")], records
    text = (a.root / PEOPLE).read_text("utf-8")
    assert "## Bea\n" not in text and text.index("## Bea (Chef)") < text.index("Bea swims"), "the night was curated"
    for root in (a.root, b.root):
        assert set(_curated_by(root).values()) <= {period}, _curated_by(root)
    holders = {_lease(machine)["holder"] for machine in (a, b)}
    assert len(holders) == 1, "both machines agree on who curates"


def test_a_machine_offline_for_two_days_comes_back_without_curating_again(tmp_path: Path) -> None:
    shim = clock_shim(tmp_path)
    a, b = _machines(tmp_path)
    assert a.cli("init").returncode == 0
    hand = ["Written by hand on B, offline: Ann sails in May.", "Written by hand on A: Ann reads at night."]
    with syncthing_pair(tmp_path, a.root, b.root) as pair:
        for machine in (a, b):
            machine.set_clock(TODAY + timedelta(hours=10), shim)
        assert a.cli("curator", "take").returncode == 0  # A is the vault's curator, and B knows it
        converged(pair, a.root, b.root)
        assert _lease(b)["holder"] == _lease(a)["this_machine"]
        for machine in (a, b):  # the first day: both daemons run (B's skips curation: A curates)
            machine.env.update(CURATE_ON)
            machine.start()
        try:
            saved = _save_day({"A": a, "B": b}, 1)
            converged(pair, a.root, b.root)
        finally:
            for machine in (a, b):
                machine.stop()
        pair[1].pause()  # B's laptop goes offline for two days; B still saves, and a person writes there
        b.set_clock(TODAY + timedelta(hours=16), shim)
        saved += acknowledged(b.save_many(_facts("B", 2), 0.1))
        _hand_line(b.root, hand[0])
        a_nights = [_night(a, TODAY + timedelta(days=1), shim)]  # A curates both nights, saving in between
        a.set_clock(TODAY + timedelta(days=1, hours=12), shim)
        saved += acknowledged(a.save_many(_facts("A", 3), 0.1))
        _hand_line(a.root, hand[1])
        a_nights.append(_night(a, TODAY + timedelta(days=2), shim))
        assert [night["status"] for night in a_nights] != ["skipped", "skipped"], a_nights
        back = TODAY + timedelta(days=2, hours=9)  # B opens the laptop: its daemon starts before the network
        for machine in (a, b):
            machine.set_clock(back, shim)
            machine.env.update(CURATE_ON)
            machine.start()
        try:
            night = (back - timedelta(days=1)).date().isoformat()
            wait_until(lambda: _curate_record(b).get("period") == night, timeout=30, interval=1)  # start-up check
            pair[1].pause(False)
            converged(pair, a.root, b.root, quiet=5)
        finally:
            for machine in (a, b):
                machine.stop()
        converged(pair, a.root, b.root)
    assert len(saved) == 16
    _assert_nothing_lost((a.root, b.root), saved, hand)
    b_record = _curate_record(b)
    assert b_record["status"] == "skipped", b_record  # B did not curate A's nights again
    lease = _lease(b)
    assert lease["holder"] == _lease(a)["this_machine"] != lease["this_machine"], lease
    assert _curated_by(b.root) == {lease["holder"]: night}
