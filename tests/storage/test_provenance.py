"""The provenance log in `.wolfmem/provenance/`: what curation must know travels with the vault.

Two machines are two state folders on one vault. Lines machine A's wolfmem wrote must not look
hand-written to machine B, first-seen days must be the earliest any machine saw, and the log must
survive a sync tool: conflict copies, cut-off lines, garbage.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from faultkit import unprivileged

from wolfmem import Config, Memory
from wolfmem.core.facts import fact_key
from wolfmem.curation.landing import check_rewrite, hand_lines_of
from wolfmem.storage.provenance import PROVENANCE_DIR, Union
from wolfmem.storage.state import StateStore, line_hash

PEOPLE = "knowledge/people.md"
BUDGET = "Sarah Chen approved the Q4 budget."
MANAGER = "Sarah Chen is my manager."
H1, H2 = "0123456789abcdef", "fedcba9876543210"


def machine(vault: Path, tmp_path: Path, name: str, day: str = "2026-11-02") -> Memory:
    return Memory(vault, Config(state_dir=str(tmp_path / name)), clock=lambda: datetime.fromisoformat(f"{day}T10:00"))


def tidy(text: str) -> str:
    """What a curator proposes: file the Unfiled line about Sarah under her section (it reorders lines)."""
    moved = text.replace(f"- {BUDGET}\n", "")
    return moved.replace(f"- {MANAGER}\n", f"- {MANAGER}\n- {BUDGET}\n")


def saved_by_a(vault: Path, tmp_path: Path) -> None:
    with machine(vault, tmp_path, "a") as a:
        a.save(BUDGET, "people")  # no section names Sarah yet: it goes to Unfiled
        a.save(MANAGER, "people", "Sarah Chen")
        a.save("Tom Price plays chess on Sundays.", "people")


# -- the merge rules --------------------------------------------------------------------------------------
def test_first_seen_is_the_earliest_day_any_machine_saw():
    union = Union()
    union.add({"at": 5, "path": PEOPLE, "seen": {H1: "2026-11-04"}}, "b")
    union.add({"at": 1, "path": PEOPLE, "seen": {H1: "2026-11-02", H2: "2026-11-03"}}, "a")
    union.add({"at": 9, "path": PEOPLE, "seen": {H1: "2026-11-09"}}, "c")
    assert union.first_seen == {PEOPLE: {H1: "2026-11-02", H2: "2026-11-03"}}


@pytest.mark.parametrize(
    ("records", "own"),
    [
        ([(1.0, "a", "own"), (2.0, "b", "drop")], False),  # the newest word wins
        ([(2.0, "b", "drop"), (1.0, "a", "own")], False),  # in whatever order the files are read
        ([(1.0, "a", "drop"), (2.0, "b", "own")], True),
        ([(3.0, "a", "own"), (3.0, "b", "drop")], False),  # a tie goes to the later machine name
        ([(3.0, "b", "drop"), (3.0, "a", "own")], False),
    ],
)
def test_a_line_is_wolfmems_when_the_newest_record_says_so(records, own):
    union = Union()
    for at, name, kind in records:
        union.add({"at": at, "path": PEOPLE, kind: [H1]}, name)
    assert union.claims[PEOPLE][H1].own is own


@pytest.mark.parametrize(
    "record",
    [
        None, [], "text", {"path": PEOPLE, "own": [H1]},  # no timestamp
        {"at": True, "path": PEOPLE, "own": [H1]},
        {"at": 1, "path": "../outside.md", "own": [H1]},
        {"at": 1, "path": "/etc/passwd", "own": [H1]},
        {"at": 1, "path": "episodes/2026-11-02.md", "own": [H1]},
        {"at": 1, "path": PEOPLE, "own": ["Sarah Chen is my manager."]},  # words, not a hash
        {"at": 1, "path": PEOPLE, "own": H1},
        {"at": 1, "path": PEOPLE, "seen": {H1: "2026-02-30"}},
        {"at": 1, "path": PEOPLE, "seen": {H1: None}},
        {"at": 1, "path": PEOPLE, "seen": [H1]},
    ],
)
def test_a_malformed_record_is_counted_and_ignored(record):
    union = Union()
    union.add(record, "a")
    assert union.rejected == 1 and not union.claims and not union.first_seen


# -- two machines ------------------------------------------------------------------------------------------
def test_the_machine_that_takes_over_tells_wolfmems_lines_from_hand_edits(vault, tmp_path):
    saved_by_a(vault, tmp_path)
    text = (vault / PEOPLE).read_text()
    with machine(vault, tmp_path, "b") as b:
        before, _ = check_rewrite(b, PEOPLE, text, tidy(text), [])
        assert before.status == "rejected" and "reorders hand-edited lines" in before.reasons[0]
        b.provenance.absorb()
        after, proposed = check_rewrite(b, PEOPLE, text, tidy(text), [])
        assert after.status == "proposed" and proposed == tidy(text)
        # A line a person adds on this machine is still a hand line.
        (vault / PEOPLE).write_text(text + "- Sarah Chen prefers email.\n")
        assert hand_lines_of(b, PEOPLE, (vault / PEOPLE).read_text()) == {"- Sarah Chen prefers email."}


def test_first_seen_days_travel_and_redate_the_index(vault, tmp_path):
    saved_by_a(vault, tmp_path)
    with machine(vault, tmp_path, "b", day="2026-11-09") as b:
        assert {hit.date for hit in b.search("Sarah Chen budget")} == {"2026-11-09"}  # first seen here
        assert b.provenance.absorb() == [PEOPLE]
        assert b.state.first_seen(PEOPLE)[fact_key(BUDGET)] == "2026-11-02"
        assert [hit.date for hit in b.search("Sarah Chen budget") if hit.text == BUDGET] == ["2026-11-02"]
        assert b.search("Sarah Chen budget", before="2026-11-03")


def test_the_log_names_lines_by_hash_and_never_repeats_their_words(vault, tmp_path):
    saved_by_a(vault, tmp_path)
    logs = list((vault / PROVENANCE_DIR).rglob("*.jsonl"))
    assert len(logs) == 1
    text = logs[0].read_text()
    assert "Sarah" not in text and "budget" not in text
    assert line_hash(f"- {BUDGET}") in text


def test_a_log_that_cannot_be_written_keeps_its_records_queued(vault, tmp_path):
    folder = vault / ".wolfmem"
    folder.mkdir(exist_ok=True)
    with machine(vault, tmp_path, "a") as a, unprivileged():
        folder.chmod(0o555)
        try:
            assert a.save(BUDGET, "people").status == "saved"  # the save itself is not held up
            assert a.provenance.publish() == 0
            assert a.state.outbox()
        finally:
            folder.chmod(0o755)
        assert a.provenance.publish() > 0 and not a.state.outbox()
    with machine(vault, tmp_path, "b") as b:
        b.provenance.absorb()
        assert f"- {BUDGET}" not in hand_lines_of(b, PEOPLE, (vault / PEOPLE).read_text())


def test_conflict_copies_cut_off_lines_and_garbage_lose_only_themselves(vault, tmp_path, caplog):
    saved_by_a(vault, tmp_path)
    (log,) = (vault / PROVENANCE_DIR).rglob("*.jsonl")
    records = log.read_text().splitlines()
    # A sync tool kept the first half as a conflict copy and cut the original off mid-line.
    shutil.copy(log, log.with_name(f"{log.stem}.sync-conflict-20261103-101010-ABCDEFG.jsonl"))
    log.write_text("\n".join(records[:1]) + "\n" + records[1][: len(records[1]) // 2] + "\n<<<<<<< HEAD\n")
    text = (vault / PEOPLE).read_text()
    with machine(vault, tmp_path, "b") as b:
        b.provenance.absorb()
        assert check_rewrite(b, PEOPLE, text, tidy(text), [])[0].status == "proposed"
    assert "ignored 2 malformed provenance record(s)" in caplog.text


def test_a_state_folder_from_before_the_log_publishes_what_it_knew(tmp_path):
    state = StateStore(tmp_path / "state.db")
    state.update_snapshot(PEOPLE, [f"- {MANAGER}"], [])
    state.note_first_seen(PEOPLE, [fact_key(MANAGER)], "2026-10-01")
    with state._connect() as db:  # as an older wolfmem left it: no queue, never published
        db.execute("DELETE FROM outbox")
        db.execute("DELETE FROM meta")
    state.close()
    reopened = StateStore(tmp_path / "state.db")
    queued = [record for _, record in reopened.outbox()]
    assert {"at": 0.0, "path": PEOPLE, "own": [line_hash(f"- {MANAGER}")], "drop": []} in queued
    assert {"at": 0.0, "path": PEOPLE, "seen": {fact_key(MANAGER): "2026-10-01"}} in queued
    assert json.dumps(queued)  # plain JSON, as the vault log stores it


def test_a_cancelled_call_still_publishes_the_provenance_of_a_change_it_made(vault: Path, tmp_path: Path,
                                                                             caplog: pytest.LogCaptureFixture):
    from wolfmem.cancellation import cancellable

    with machine(vault, tmp_path, "a") as a:
        a.save(MANAGER, "people", "Sarah Chen")
        # The save landed; then its caller gave up, while the provenance of the save was still queued.
        with cancellable(lambda: True):
            published = a.provenance.publish()
    assert published > 0
    assert "nothing was changed" not in caplog.text
