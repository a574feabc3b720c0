"""What the state store does not write or read again while nothing changed, and does after any write.

Handed-out line refs are written once; the displaced table is read once, before every search.
"""

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


def test_displaced_versions_are_read_again_after_any_write(tmp_path: Path) -> None:
    mine, theirs = StateStore(tmp_path / "state.sqlite"), StateStore(tmp_path / "state.sqlite")
    assert mine.displaced() == {}
    mine.add_displaced("knowledge/a.md.displaced", "knowledge/a.md", b"one")
    assert mine.displaced() == {"knowledge/a.md.displaced": ("knowledge/a.md", b"one", b"")}
    theirs.add_displaced("knowledge/b.md.displaced", "knowledge/b.md", b"two")  # another process
    assert set(mine.displaced()) == {"knowledge/a.md.displaced", "knowledge/b.md.displaced"}
    mine.drop_displaced("knowledge/a.md.displaced")
    assert set(mine.displaced()) == {"knowledge/b.md.displaced"}
    mine.displaced()["knowledge/c.md.displaced"] = ("knowledge/c.md", b"", b"")  # a caller's own copy
    assert set(mine.displaced()) == {"knowledge/b.md.displaced"}


def test_displaced_versions_unchanged_are_not_read_again(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.sqlite")
    store.add_displaced("knowledge/a.md.displaced", "knowledge/a.md", b"one")
    store.displaced()
    statements: list[str] = []
    assert store._db is not None  # counting the work: the store's one connection
    store._db.set_trace_callback(statements.append)
    for _ in range(5):
        store.displaced()
    assert not [sql for sql in statements if "FROM displaced" in sql]
