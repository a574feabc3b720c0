"""Handed-out line refs: written once while nothing else changed, written again after another writer."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from wolfmem.storage.state import StateStore

REFS = [("knowledge/people.md", 3, "sarah runs"), ("knowledge/people.md", 4, "sarah swims")]


def commits(path: Path):
    """A callable telling whether anyone committed to the database since it was last called."""
    observer = sqlite3.connect(path)
    seen = [observer.execute("PRAGMA data_version").fetchone()[0]]

    def changed() -> bool:
        now = observer.execute("PRAGMA data_version").fetchone()[0]
        moved, seen[0] = now != seen[0], now
        return moved

    return changed


def test_the_same_refs_again_write_nothing(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.sqlite")
    changed = commits(tmp_path / "state.sqlite")
    store.note_issued(REFS)
    assert changed()
    store.note_issued(REFS)
    store.note_issued(REFS[:1])
    assert not changed()
    store.note_issued([("knowledge/people.md", 3, "sarah jogs")])  # another fact now on that line
    assert changed()
    assert store.issued_key("knowledge/people.md", 3) == "sarah jogs"


def test_another_writer_between_makes_the_refs_written_again(tmp_path: Path) -> None:
    mine, theirs = StateStore(tmp_path / "state.sqlite"), StateStore(tmp_path / "state.sqlite")
    mine.note_issued(REFS)
    theirs.note_issued([("knowledge/people.md", 3, "tom cycles")])  # another process handed out line 3
    mine.note_issued(REFS)
    assert mine.issued_key("knowledge/people.md", 3) == "sarah runs"
    assert theirs.issued_key("knowledge/people.md", 3) == "sarah runs"


def test_a_reopened_store_writes_again(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.sqlite")
    store.note_issued(REFS)
    store.close()
    with sqlite3.connect(tmp_path / "state.sqlite") as db:  # changed while the store was closed
        db.execute("DELETE FROM issued")
    assert store.issued_key("knowledge/people.md", 4) is None  # reopens the connection
    store.note_issued(REFS)
    assert store.issued_key("knowledge/people.md", 4) == "sarah swims"
