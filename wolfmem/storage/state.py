"""wolfmem's own durable records for one vault on this machine, in SQLite (safe across processes).

- receipts: the answer given to each memory_save request_id, so a retry writes nothing;
- first_seen: the day each knowledge line first appeared, the evidence for "newest wins";
- snapshot: the lines wolfmem itself wrote or accepted in each curated file, to tell hand edits apart;
- runs: the last outcome of each scheduled job;
- issued: the fact each line ref last handed to a caller named, so an update or forget by ref acts
  only on the line the caller actually read.
- displaced: versions of files an exchange swapped out but kept (a writer may still be writing to them),
  with the bytes each held then, until `storage/displaced.py` merges or deletes them;
- inodes: the inode numbers each file had lately, which a new version of it must not take again;
- put_back: the lines (by hash) wolfmem put back into a file after an editor dropped them: removed
  again, they are obeyed, never put back twice;
- stale_buffers: the versions (by revision) of a file written from an editor's stale buffer, lines put back
  over them: a write started from one is that buffer written again, whose lines are put back again;
- repairs: what wolfmem put back or archived as "removed by hand" after an outside write, for the
  log of `status` and the one notice the next agent call touching the file gets;
- outbox: provenance changes (snapshot and first-seen) not yet published to the vault's
  `.wolfmem/provenance/` log, where another machine that takes over curation reads them;
- meta: the day wolfmem created the vault here (its first day: no night before it is curated).

The methods of displaced, inodes, put_back, stale_buffers, unchecked and repairs are in `storage/repairrecords.py`.
Every method fails only with WolfmemErrors; a damaged file is moved aside and recreated empty (see db.py).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

from wolfmem.errors import StorageError, storage_error
from wolfmem.storage.db import Store, begin, guarded, open_db, rollback
from wolfmem.storage.kept import Kept
from wolfmem.storage.repairrecords import RepairRecords, line_hash

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS receipts (request_id TEXT PRIMARY KEY, receipt TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS first_seen (path TEXT NOT NULL, key TEXT NOT NULL, day TEXT NOT NULL,
                                       PRIMARY KEY (path, key));
CREATE TABLE IF NOT EXISTS snapshot (path TEXT NOT NULL, line TEXT NOT NULL, PRIMARY KEY (path, line));
CREATE TABLE IF NOT EXISTS snapshot_files (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS runs (job TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS issued (path TEXT NOT NULL, line INTEGER NOT NULL, key TEXT NOT NULL,
                                   PRIMARY KEY (path, line));
CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS displaced (rel TEXT PRIMARY KEY, path TEXT NOT NULL, base BLOB NOT NULL,
                                      prior BLOB NOT NULL DEFAULT x'');
CREATE TABLE IF NOT EXISTS inodes (seq INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, ino INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS inodes_by_path ON inodes (path, seq);
CREATE TABLE IF NOT EXISTS put_back (path TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (path, hash));
CREATE TABLE IF NOT EXISTS stale_buffers (seq INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL,
                                          revision TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS unchecked (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS affirmed (path TEXT NOT NULL, line TEXT NOT NULL, PRIMARY KEY (path, line));
CREATE TABLE IF NOT EXISTS repairs (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, record TEXT NOT NULL,
                                    told INTEGER NOT NULL DEFAULT 0);
"""
# Files whose first-seen days this process keeps, and how many keys a note looks up one by one.
SEEN_FILES = 16
SEEN_LOOKUP = 500
# Handed-out refs this process remembers having written (a few searches' worth), to skip writing them again.
ISSUED_REMEMBERED = 4096


class StateStore(Store, RepairRecords):
    """A small SQLite database in the vault's machine-local state folder."""

    SCHEMA = _SCHEMA

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise storage_error(exc, "create the state folder", path.parent) from None
        # One connection, used by one thread at a time; every operation is its own transaction,
        # so no lock is held between calls and other processes see each write at once.
        self._db: sqlite3.Connection | None = open_db(path, _SCHEMA)
        self._guard = threading.Lock()
        # The refs this connection last wrote to `issued`, and first-seen days of recently used files.
        self._issued: Kept[dict[tuple[str, int], str]] = Kept(dict)
        self._seen: Kept[dict[str, dict[str, str]]] = Kept(dict)
        # Called after a change that the vault's provenance log should hear about (see provenance.py).
        self.on_change: Callable[[], None] | None = None
        try:
            self._seed_outbox()
        except StorageError as exc:  # a read-only or full state folder still serves reads
            log.warning("%s; what this machine knows reaches the vault's provenance log later", exc)

    @contextmanager
    def _connect(self, *, reading: bool = False) -> Iterator[sqlite3.Connection]:
        # IMMEDIATE: a read-then-write transaction could not upgrade its lock once another
        # process wrote, and SQLite would fail it at once instead of waiting. A transaction that
        # only reads takes no lock (`reading`): in WAL mode it reads its snapshot while others write,
        # where waiting for the write lock queued every search and save behind other processes' writes.
        with self._guard:
            if self._db is None:  # closed: reopened on use, like History
                self._db = open_db(self.path, _SCHEMA)
            db = self._db
            db.execute("BEGIN" if reading else begin(db))
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise

    def close(self) -> None:
        """Close the connection, which also folds SQLite's write-ahead log into the file (reopened on next use)."""
        with self._guard:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    # -- receipts -------------------------------------------------------------
    @guarded
    def receipt(self, request_id: str) -> dict[str, Any] | None:
        """The receipt recorded for a request id, if any."""
        with self._connect(reading=True) as db:
            row = db.execute("SELECT receipt FROM receipts WHERE request_id = ?", (request_id,)).fetchone()
        return json.loads(row[0]) if row else None

    @guarded
    def put_receipt(self, request_id: str, receipt: dict[str, Any], day: str) -> None:
        """Remember the answer to a request id (the first one wins)."""
        with self._connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO receipts VALUES (?, ?, ?)", (request_id, json.dumps(receipt), day)
            )

    # -- first seen -----------------------------------------------------------
    @guarded
    def note_first_seen(self, path: str, keys: Iterable[str], day: str) -> None:
        """Record day as the first-seen date of each line key not seen before in path."""
        keys = set(keys)
        with self._connect() as db:
            mark = self._seen.begin(db)
            known = self._seen_days(db, path, keys)
            new = sorted(keys - known.keys())
            db.executemany("INSERT OR IGNORE INTO first_seen VALUES (?, ?, ?)", ((path, key, day) for key in new))
            if new:
                _post(db, {"path": path, "seen": dict.fromkeys(new, day)})
                if path in self._seen.data:
                    self._seen.data[path].update(dict.fromkeys(new, day))
        self._landed(self._seen, mark)
        if new:
            self._changed()

    @guarded
    def first_seen(self, path: str) -> dict[str, str]:
        """Line key → first-seen day for one file.

        A save asks for its file's days twice (a 2,000-fact file's rows were a tenth of the save): the
        days this connection read or wrote are kept while no other connection has written (`Kept`).
        """
        with self._guard:
            if path in self._seen.data and self._seen.valid(self._db):
                return dict(self._seen.data[path])
        # Read without the write lock: the mark is taken before the read's snapshot, so the days read are at
        # least as new as it, and any commit after the mark makes them stale to `valid`.
        with self._connect(reading=True) as db:
            mark = self._seen.begin(db)
            days = self._seen_days(db, path, None)
        self._landed(self._seen, mark)
        return dict(days)

    def _seen_days(self, db: sqlite3.Connection, path: str, keys: set[str] | None) -> dict[str, str]:
        """Inside a transaction `_seen` began: path's days (those of `keys` at least), kept when read whole."""
        kept = self._seen.data
        if path in kept:
            return kept[path]
        if keys is not None and len(keys) <= SEEN_LOOKUP:  # a few keys: no need to read the file's every row
            marks = ",".join("?" * len(keys))
            rows = db.execute(f"SELECT key, day FROM first_seen WHERE path = ? AND key IN ({marks})", (path, *keys))
            return dict(rows.fetchall())
        if len(kept) >= SEEN_FILES:
            kept.clear()
        kept[path] = dict(db.execute("SELECT key, day FROM first_seen WHERE path = ?", (path,)).fetchall())
        return kept[path]

    def _landed(self, kept: Kept[Any], mark: tuple[tuple[sqlite3.Connection, int], int]) -> None:
        with self._guard:
            kept.landed(mark)

    # -- snapshots ------------------------------------------------------------
    @guarded
    def snapshot_lines(self, path: str) -> set[str] | None:
        """The lines wolfmem wrote or accepted in a file, or None when it has no snapshot yet."""
        with self._connect(reading=True) as db:
            known = db.execute("SELECT 1 FROM snapshot_files WHERE path = ?", (path,)).fetchone()
            if not known:
                return None
            rows = db.execute("SELECT line FROM snapshot WHERE path = ?", (path,)).fetchall()
        return {row[0] for row in rows}

    @guarded
    def update_snapshot(self, path: str, added: Iterable[str], removed: Iterable[str]) -> None:
        """Record lines wolfmem composed in a file, and forget lines no longer in it."""
        added, removed = sorted(set(added)), sorted(set(removed))
        with self._connect() as db:
            db.execute("INSERT OR IGNORE INTO snapshot_files VALUES (?)", (path,))
            db.executemany("DELETE FROM snapshot WHERE path = ? AND line = ?", ((path, line) for line in removed))
            db.executemany("INSERT OR IGNORE INTO snapshot VALUES (?, ?)", ((path, line) for line in added))
            if added or removed:
                _post(db, {"path": path, "own": [line_hash(x) for x in added], "drop": [line_hash(x) for x in removed]})
        if added or removed:
            self._changed()

    # -- runs -----------------------------------------------------------------
    @guarded
    def run_record(self, job: str) -> dict[str, Any] | None:
        """The last recorded outcome of a job."""
        with self._connect(reading=True) as db:
            row = db.execute("SELECT record FROM runs WHERE job = ?", (job,)).fetchone()
        return json.loads(row[0]) if row else None

    @guarded
    def put_run_record(self, job: str, record: dict[str, Any]) -> None:
        """Store a job's latest outcome."""
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO runs VALUES (?, ?)", (job, json.dumps(record)))

    # -- the vault's first day --------------------------------------------------
    @guarded
    def note_vault_created(self, day: date) -> None:
        """Remember `day` as the day wolfmem created the vault (the first one noted stays)."""
        with self._connect() as db:
            db.execute("INSERT OR IGNORE INTO meta VALUES ('vault_created', ?)", (day.isoformat(),))

    @guarded
    def vault_created(self) -> date | None:
        """The day wolfmem created the vault on this machine; None when it found the folder a vault already."""
        with self._connect(reading=True) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'vault_created'").fetchone()
        try:
            return date.fromisoformat(row[0]) if row else None
        except ValueError:  # not a day: as if unknown, so it holds back no night
            return None

    # -- issued refs ----------------------------------------------------------
    @guarded
    def note_issued(self, refs: Iterable[tuple[str, int, str]]) -> None:
        """Remember which fact (by key) each handed-out line ref (path, line) named.

        Refs this connection wrote last are not written again while no other connection has written to
        the database since (SQLite's data_version): a search handing out the same lines writes nothing.
        """
        wanted = {(path, line): key for path, line, key in refs}
        with self._guard:
            if self._issued.valid(self._db):
                wanted = {ref: key for ref, key in wanted.items() if self._issued.data.get(ref) != key}
        if not wanted:
            return
        with self._connect() as db:
            mark = self._issued.begin(db)
            if len(self._issued.data) >= ISSUED_REMEMBERED:
                self._issued.data.clear()
            db.executemany("INSERT OR REPLACE INTO issued VALUES (?, ?, ?)",
                           [(path, line, key) for (path, line), key in wanted.items()])
            self._issued.data.update(wanted)
        self._landed(self._issued, mark)

    @guarded
    def issued_key(self, path: str, line: int) -> str | None:
        """The key of the fact last handed out under a line ref, if any."""
        with self._connect(reading=True) as db:
            row = db.execute("SELECT key FROM issued WHERE path = ? AND line = ?", (path, line)).fetchone()
        return row[0] if row else None

    # -- provenance: what other machines learn from this one, and the reverse ----------------------
    @guarded
    def outbox(self, limit: int = 500) -> list[tuple[int, dict[str, Any]]]:
        """The oldest provenance records not yet published to the vault, with their ids."""
        with self._connect(reading=True) as db:
            rows = db.execute("SELECT id, record FROM outbox ORDER BY id LIMIT ?", (limit,)).fetchall()
        return [(row[0], json.loads(row[1])) for row in rows]

    @guarded
    def clear_outbox(self, ids: Iterable[int]) -> None:
        """Forget records the vault's log now holds."""
        with self._connect() as db:
            db.executemany("DELETE FROM outbox WHERE id = ?", ((number,) for number in ids))

    @guarded
    def absorb_first_seen(self, path: str, days: Mapping[str, str]) -> bool:
        """Take another machine's first-seen days where they are earlier (or new); whether anything changed."""
        with self._connect() as db:
            before = db.total_changes
            db.executemany(
                "INSERT INTO first_seen VALUES (?, ?, ?) ON CONFLICT (path, key) DO UPDATE SET day = excluded.day "
                "WHERE excluded.day < first_seen.day",
                ((path, key, day) for key, day in days.items()),
            )
            self._seen.data.pop(path, None)
            return db.total_changes != before

    @guarded
    def absorb_snapshot(self, path: str, own: Iterable[str], not_own: Iterable[str]) -> None:
        """Take the vault log's word on which lines of a file wolfmem wrote (not published again)."""
        with self._connect() as db:
            db.execute("INSERT OR IGNORE INTO snapshot_files VALUES (?)", (path,))
            db.executemany("DELETE FROM snapshot WHERE path = ? AND line = ?", ((path, line) for line in not_own))
            db.executemany("INSERT OR IGNORE INTO snapshot VALUES (?, ?)", ((path, line) for line in own))

    @guarded
    def _seed_outbox(self) -> None:
        """Publish what this state folder knew before the vault log existed, once (an upgrade, a first run)."""
        with self._connect() as db:
            if db.execute("SELECT 1 FROM meta WHERE key = 'journal'").fetchone():
                return
            # Stamped 0: anything recorded since, on any machine, is newer.
            for (path,) in db.execute("SELECT path FROM snapshot_files").fetchall():
                lines = [row[0] for row in db.execute("SELECT line FROM snapshot WHERE path = ?", (path,))]
                _post(db, {"path": path, "own": [line_hash(x) for x in lines], "drop": []}, at=0.0)
            for (path,) in db.execute("SELECT DISTINCT path FROM first_seen").fetchall():
                days = dict(db.execute("SELECT key, day FROM first_seen WHERE path = ?", (path,)).fetchall())
                _post(db, {"path": path, "seen": days}, at=0.0)
            db.execute("INSERT INTO meta VALUES ('journal', '1')")


def _post(db: sqlite3.Connection, record: dict[str, Any], at: float | None = None) -> None:
    """Queue a provenance record, stamped with the wall clock (the vault log orders records by it)."""
    stamped = {"at": round(time.time() if at is None else at, 6), **record}
    db.execute("INSERT INTO outbox (record) VALUES (?)", (json.dumps(stamped, sort_keys=True),))
