"""wolfmem's own durable records for one vault on this machine, in SQLite (safe across processes).

- receipts: the answer given to each memory_save request_id, so a retry writes nothing;
- first_seen: the day each knowledge line first appeared, the evidence for "newest wins";
- snapshot: the lines wolfmem itself wrote or accepted in each curated file, to tell hand edits apart;
- runs: the last outcome of each scheduled job;
- issued: the fact each line ref last handed to a caller named, so an update or forget by ref acts
  only on the line the caller actually read.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wolfmem.storage.db import open_db

_SCHEMA = """
CREATE TABLE IF NOT EXISTS receipts (request_id TEXT PRIMARY KEY, receipt TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS first_seen (path TEXT NOT NULL, key TEXT NOT NULL, day TEXT NOT NULL,
                                       PRIMARY KEY (path, key));
CREATE TABLE IF NOT EXISTS snapshot (path TEXT NOT NULL, line TEXT NOT NULL, PRIMARY KEY (path, line));
CREATE TABLE IF NOT EXISTS snapshot_files (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS runs (job TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS issued (path TEXT NOT NULL, line INTEGER NOT NULL, key TEXT NOT NULL,
                                   PRIMARY KEY (path, line));
"""


class StateStore:
    """A small SQLite database in the vault's machine-local state folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # One connection, used by one thread at a time; every operation is its own transaction,
        # so no lock is held between calls and other processes see each write at once.
        self._db = open_db(path, _SCHEMA)
        self._guard = threading.Lock()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # IMMEDIATE: a read-then-write transaction could not upgrade its lock once another
        # process wrote, and SQLite would fail it at once instead of waiting.
        with self._guard:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- receipts -------------------------------------------------------------
    def receipt(self, request_id: str) -> dict[str, Any] | None:
        """The receipt recorded for a request id, if any."""
        with self._connect() as db:
            row = db.execute("SELECT receipt FROM receipts WHERE request_id = ?", (request_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_receipt(self, request_id: str, receipt: dict[str, Any], day: str) -> None:
        """Remember the answer to a request id (the first one wins)."""
        with self._connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO receipts VALUES (?, ?, ?)", (request_id, json.dumps(receipt), day)
            )

    # -- first seen -----------------------------------------------------------
    def note_first_seen(self, path: str, keys: Iterable[str], day: str) -> None:
        """Record day as the first-seen date of each line key not seen before in path."""
        with self._connect() as db:
            db.executemany(
                "INSERT OR IGNORE INTO first_seen VALUES (?, ?, ?)", ((path, key, day) for key in keys)
            )

    def first_seen(self, path: str) -> dict[str, str]:
        """Line key → first-seen day for one file."""
        with self._connect() as db:
            rows = db.execute("SELECT key, day FROM first_seen WHERE path = ?", (path,)).fetchall()
        return dict(rows)

    # -- snapshots ------------------------------------------------------------
    def snapshot_lines(self, path: str) -> set[str] | None:
        """The lines wolfmem wrote or accepted in a file, or None when it has no snapshot yet."""
        with self._connect() as db:
            known = db.execute("SELECT 1 FROM snapshot_files WHERE path = ?", (path,)).fetchone()
            if not known:
                return None
            rows = db.execute("SELECT line FROM snapshot WHERE path = ?", (path,)).fetchall()
        return {row[0] for row in rows}

    def update_snapshot(self, path: str, added: Iterable[str], removed: Iterable[str]) -> None:
        """Record lines wolfmem composed in a file, and forget lines no longer in it."""
        with self._connect() as db:
            db.execute("INSERT OR IGNORE INTO snapshot_files VALUES (?)", (path,))
            db.executemany("DELETE FROM snapshot WHERE path = ? AND line = ?", ((path, line) for line in removed))
            db.executemany("INSERT OR IGNORE INTO snapshot VALUES (?, ?)", ((path, line) for line in added))

    # -- runs -----------------------------------------------------------------
    def run_record(self, job: str) -> dict[str, Any] | None:
        """The last recorded outcome of a job."""
        with self._connect() as db:
            row = db.execute("SELECT record FROM runs WHERE job = ?", (job,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_run_record(self, job: str, record: dict[str, Any]) -> None:
        """Store a job's latest outcome."""
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO runs VALUES (?, ?)", (job, json.dumps(record)))

    # -- issued refs ----------------------------------------------------------
    def note_issued(self, refs: Iterable[tuple[str, int, str]]) -> None:
        """Remember which fact (by key) each handed-out line ref (path, line) named."""
        with self._connect() as db:
            db.executemany("INSERT OR REPLACE INTO issued VALUES (?, ?, ?)", refs)

    def issued_key(self, path: str, line: int) -> str | None:
        """The key of the fact last handed out under a line ref, if any."""
        with self._connect() as db:
            row = db.execute("SELECT key FROM issued WHERE path = ? AND line = ?", (path, line)).fetchone()
        return row[0] if row else None
