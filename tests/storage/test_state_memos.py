"""What the state store does not write or read again while no one else wrote, and does after.

Handed-out line refs are written once; a file's first-seen days are read once (a save asks twice).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from wolfmem.storage.kept import Kept
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


PEOPLE = "knowledge/people.md"


def statements(store: StateStore) -> list[str]:
    """Every SQL statement the store's one connection runs from now on (counting the work)."""
    seen: list[str] = []
    assert store._db is not None
    store._db.set_trace_callback(seen.append)
    return seen


def test_first_seen_days_are_read_once_and_follow_this_stores_writes(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.sqlite")
    store.note_first_seen(PEOPLE, ["ann", "bob"], "2026-01-01")
    assert store.first_seen(PEOPLE) == {"ann": "2026-01-01", "bob": "2026-01-01"}
    ran = statements(store)
    store.note_first_seen(PEOPLE, ["bob", "cid"], "2026-02-01")  # bob keeps his first day
    assert store.first_seen(PEOPLE) == {"ann": "2026-01-01", "bob": "2026-01-01", "cid": "2026-02-01"}
    assert not [sql for sql in ran if sql.startswith("SELECT key, day FROM first_seen")]
    store.absorb_first_seen(PEOPLE, {"cid": "2025-12-24"})  # another machine saw cid earlier
    assert store.first_seen(PEOPLE)["cid"] == "2025-12-24"


def test_first_seen_days_written_by_another_connection_are_read_again(tmp_path: Path) -> None:
    mine, theirs = StateStore(tmp_path / "state.sqlite"), StateStore(tmp_path / "state.sqlite")
    mine.note_first_seen(PEOPLE, ["ann"], "2026-01-01")
    assert mine.first_seen(PEOPLE) == {"ann": "2026-01-01"}
    theirs.note_first_seen(PEOPLE, ["dan"], "2026-03-01")
    theirs.absorb_first_seen(PEOPLE, {"ann": "2025-11-11"})
    assert mine.first_seen(PEOPLE) == {"ann": "2025-11-11", "dan": "2026-03-01"}
    mine.note_first_seen(PEOPLE, ["dan"], "2026-04-01")  # known from the other process: not new
    assert mine.first_seen(PEOPLE)["dan"] == "2026-03-01"


def test_noting_a_few_keys_reads_only_those(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.sqlite")
    store.note_first_seen(PEOPLE, [f"fact {n}" for n in range(2000)], "2026-01-01")
    fresh = StateStore(tmp_path / "state.sqlite")  # nothing kept yet
    ran = statements(fresh)
    fresh.note_first_seen(PEOPLE, ["fact 7", "new fact"], "2026-05-01")
    assert [sql for sql in ran if "FROM first_seen" in sql and " IN (" not in sql] == []
    assert fresh.first_seen(PEOPLE)["new fact"] == "2026-05-01"
    assert fresh.first_seen(PEOPLE)["fact 7"] == "2026-01-01"


def test_kept_data_counts_only_once_its_latest_transaction_landed(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "t.sqlite", isolation_level=None)
    kept: Kept[dict[str, int]] = Kept(dict)
    first = kept.begin(db)
    kept.data["a"] = 1
    kept.landed(first)
    assert kept.valid(db)
    unfinished = kept.begin(db)  # a transaction that fails never lands
    assert not kept.valid(db)
    second = kept.begin(db)
    kept.landed(unfinished)  # an older mark does not make data changed since valid
    assert not kept.valid(db)
    kept.landed(second)
    assert kept.valid(db) and kept.data == {}  # what the unfinished one may have changed was dropped
    kept.data["b"] = 2
    sqlite3.connect(tmp_path / "t.sqlite", isolation_level=None).execute("CREATE TABLE t (x)")  # another writer
    assert not kept.valid(db)
    kept.landed(kept.begin(db))
    assert kept.data == {}
