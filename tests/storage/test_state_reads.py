"""The state store's reads take no write lock: another process's write transaction never holds them up.

Every search and save reads the state store several times (displaced names, recent inodes, first-seen
days); with each read opening an IMMEDIATE transaction, four agents and a daemon queued behind each
other's writes on the one state database (issue 28's contention run waited 16 s in them).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from wolfmem.storage.state import StateStore

PEOPLE = "knowledge/people.md"


@contextmanager
def another_writer(path: Path) -> Iterator[None]:
    """Another connection in the middle of a write transaction (it holds the write lock, uncommitted)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO unchecked VALUES ('knowledge/uncommitted.md')")
    try:
        yield
    finally:
        db.execute("ROLLBACK")
        db.close()


def test_reads_go_on_while_another_connection_writes(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.sqlite")
    store.note_first_seen(PEOPLE, ["ann"], "2026-01-01")
    store.add_displaced("knowledge/people (displaced).md", PEOPLE, b"- Ann\n")
    store.note_inodes(PEOPLE, [11, 12])
    store.note_unchecked(PEOPLE)
    store.note_issued([(PEOPLE, 3, "ann")])
    store.put_receipt("req-1", {"status": "saved"}, "2026-01-01")
    assert store._db is not None
    store._db.execute("PRAGMA busy_timeout = 100")  # a read that waits for the lock fails at once
    reader = StateStore(tmp_path / "state.sqlite")  # nothing of it kept: the first-seen days are read
    reader.receipt("warm")
    assert reader._db is not None
    reader._db.execute("PRAGMA busy_timeout = 100")
    with another_writer(tmp_path / "state.sqlite"):
        assert store.displaced_names() == {"knowledge/people (displaced).md": PEOPLE}
        assert set(store.displaced(path=PEOPLE)) == {"knowledge/people (displaced).md"}
        assert store.recent_inodes(PEOPLE) == {11, 12}
        assert store.unchecked() == {PEOPLE}  # the other's uncommitted row is not seen
        assert store.issued_key(PEOPLE, 3) == "ann"
        assert store.receipt("req-1") == {"status": "saved"}
        assert store.snapshot_lines(PEOPLE) is None
        assert reader.first_seen(PEOPLE) == {"ann": "2026-01-01"}


def test_days_read_while_another_connection_commits_are_read_again(tmp_path: Path) -> None:
    mine, theirs = StateStore(tmp_path / "state.sqlite"), StateStore(tmp_path / "state.sqlite")
    theirs.note_first_seen(PEOPLE, ["ann"], "2026-01-01")
    assert mine.first_seen(PEOPLE) == {"ann": "2026-01-01"}  # read without the lock, then kept
    theirs.note_first_seen(PEOPLE, ["bob"], "2026-02-01")
    assert mine.first_seen(PEOPLE) == {"ann": "2026-01-01", "bob": "2026-02-01"}


def test_a_notice_is_handed_out_once_and_looking_for_none_writes_nothing(tmp_path: Path) -> None:
    mine, theirs = StateStore(tmp_path / "state.sqlite"), StateStore(tmp_path / "state.sqlite")
    mine.add_repair(PEOPLE, {"message": "put back 1 line"})
    assert mine._db is not None
    ran: list[str] = []
    mine._db.set_trace_callback(ran.append)
    assert mine.take_notices(["knowledge/projects.md"]) == []
    assert not [sql for sql in ran if sql.startswith("BEGIN IMMEDIATE")]
    told = theirs.take_notices([PEOPLE]) + mine.take_notices([PEOPLE])
    assert told == [{"message": "put back 1 line"}]
    assert theirs.take_notices([PEOPLE]) == []


def test_an_affirmed_line_is_taken_once_and_looking_for_none_writes_nothing(tmp_path: Path) -> None:
    mine, theirs = StateStore(tmp_path / "state.sqlite"), StateStore(tmp_path / "state.sqlite")
    mine.note_affirmed(PEOPLE, "- Ann rows.")
    assert mine._db is not None
    ran: list[str] = []
    mine._db.set_trace_callback(ran.append)
    assert mine.take_affirmed("knowledge/projects.md") == set()  # every outside write asks; seldom is there one
    assert not [sql for sql in ran if sql.startswith("BEGIN IMMEDIATE")]
    assert theirs.take_affirmed(PEOPLE) | mine.take_affirmed(PEOPLE) == {"- Ann rows."}
    assert mine.take_affirmed(PEOPLE) == theirs.take_affirmed(PEOPLE) == set()
