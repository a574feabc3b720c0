"""`.bak` diff and restore after a curated write."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from wolfmem import Config, Memory
from wolfmem.curation.backups import curated_rel, diff_backup, restore_backup, restore_version
from wolfmem.curation.contract import Change, ChangeKind
from wolfmem.curation.landing import RunEvidence, apply_rewrite
from wolfmem.errors import NotFound, OutsideVault
from wolfmem.storage.vault import content_hash
from wolfmem.storage.writer import Cause, Edit

NOW = datetime(2026, 11, 29, 3, 0, tzinfo=UTC)
PEOPLE = "knowledge/people.md"


@pytest.fixture
def memory(tmp_path):
    """A vault with one saved fact, at a fixed clock."""
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state")), clock=lambda: NOW) as mem:
        mem.save("Tom lives in Berlin.", "people", "Tom")
        yield mem


def read(memory, rel=PEOPLE) -> str:
    return (memory.vault.root / rel).read_text("utf-8")


def curate_once(memory) -> tuple[str, str]:
    old = read(memory)
    new = old.replace("Berlin", "Oslo")
    change = Change(ChangeKind.SUPERSEDED, ("- Tom lives in Berlin.",), "- Tom lives in Oslo.", "moved")
    evidence = RunEvidence(("Tom said he moved to Oslo.",))  # what a supersession needs: newer evidence
    outcome = apply_rewrite(memory.services, PEOPLE, old, new, [change], base_revision=content_hash(old.encode()),
                            run=evidence)
    assert outcome.status == "written"
    return old, new


@pytest.mark.parametrize(
    ("typed", "rel"),
    [
        ("people", PEOPLE),
        ("people.md", PEOPLE),
        ("knowledge/people.md", PEOPLE),
        ("./knowledge/people.md.bak", PEOPLE),
        ("knowledge/recipes.md", "knowledge/recipes.md"),
    ],
)
def test_curated_rel(typed, rel):
    assert curated_rel(typed) == rel


def test_diff_without_a_backup_says_so(memory):
    with pytest.raises(NotFound, match=r"knowledge/people.md has no backup"):
        diff_backup(memory.services, "people")


def test_diff_shows_backup_against_current(memory):
    curate_once(memory)
    diff = diff_backup(memory.services, "people")
    assert diff.startswith("--- knowledge/people.md.bak\n+++ knowledge/people.md\n")
    assert "-- Tom lives in Berlin.\n+- Tom lives in Oslo.\n" in diff


def test_restore_swaps_back_and_keeps_what_it_replaced(memory):
    old, new = curate_once(memory)
    message = restore_backup(memory.services, "people.md")
    assert message.startswith("restored knowledge/people.md from knowledge/people.md.bak")
    assert read(memory) == old and read(memory, PEOPLE + ".bak") == new
    assert [h.text for h in memory.search("Where does Tom live?")][:1] == ["Tom lives in Berlin."]
    # A restore composes nothing: the lines it brings back keep whatever provenance they had (hand lines stay hand).
    assert "- Tom lives in Berlin." not in memory.state.snapshot_lines(PEOPLE)
    assert "- Tom lives in Oslo." not in memory.state.snapshot_lines(PEOPLE)
    # Restoring again undoes the restore.
    restore_backup(memory.services, "people")
    assert read(memory) == new and read(memory, PEOPLE + ".bak") == old


def test_restore_of_an_identical_backup_does_nothing(memory):
    curate_once(memory)
    restore_backup(memory.services, "people")
    (memory.vault.root / PEOPLE).write_text(read(memory, PEOPLE + ".bak"), "utf-8")
    assert "already matches" in restore_backup(memory.services, "people")


def test_paths_outside_the_vault_are_refused(memory):
    with pytest.raises(OutsideVault):
        diff_backup(memory.services, "../elsewhere.md")


@pytest.mark.slow
def test_a_week_of_bad_nights_is_undone_from_history(tmp_path):
    clock = SimpleNamespace(now=NOW)
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state")), clock=lambda: clock.now) as memory:
        for fact in ("Tom lives in Berlin.", "Tom has two kids.", "Tom plays chess."):
            memory.save(fact, "people", "Tom")
        good = read(memory)
        for night in range(1, 8):
            # Each night a run of 6 rounds, each rewriting the file a little worse.
            clock.now = NOW + timedelta(days=night)
            for round_number in range(6):
                clock.now += timedelta(seconds=1)
                memory.services.writer.edit(
                    PEOPLE, lambda text, n=round_number: Edit(text.replace(".\n", f" (round {n}).\n", 1)),
                    cause=Cause.CURATION)
            clock.now += timedelta(hours=9)
            memory.save(f"Tom went climbing on night {night}.", "people", "Tom")
        assert read(memory) != good
        message = restore_version(memory.services, "people", NOW.date().isoformat())
        assert message.startswith("restored knowledge/people.md")
        assert read(memory) == good
