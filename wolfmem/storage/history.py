"""Past versions of knowledge files, kept per machine in the state folder (never in the vault).

Every write wolfmem makes to a `knowledge/` file records the new version with its date and cause.
If the file changed by hand since wolfmem last recorded it, the hand-edited version is recorded
first (cause "hand edit"), so the timeline has no holes. Saves on one day coalesce into one
generation, so a busy day of saves cannot push the curation versions out. The newest
`GENERATIONS` versions of each file are kept, compressed: the space is bounded by about that many
copies of each file. A damaged history file is moved aside and a new, empty one started (see db.py).
"""

from __future__ import annotations

import sqlite3
import threading
import zlib
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from wolfmem.storage.db import Store, guarded, open_db, rollback
from wolfmem.storage.vault import content_hash

GENERATIONS = 30
HAND_EDIT = "hand edit"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, at TEXT NOT NULL, cause TEXT NOT NULL,
    revision TEXT NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS versions_by_path ON versions (path, id);
"""


@dataclass(frozen=True)
class Version:
    """One recorded version of a file: its id (stable, for `restore --to`), when, why, and its size."""

    id: int
    path: str
    at: str
    cause: str
    revision: str
    size: int


class History(Store):
    """The version store of one vault on this machine."""

    SCHEMA = _SCHEMA

    def __init__(self, path: Path, generations: int = GENERATIONS) -> None:
        self.path = path
        self.generations = generations
        self._db: sqlite3.Connection | None = None
        self._guard = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        # Opened on first use: most processes (searches, the MCP server) never write a knowledge file.
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = open_db(self.path, _SCHEMA)
        return self._db

    def close(self) -> None:
        """Close the database connection (reopened on next use)."""
        with self._guard:
            if self._db is not None:
                self._db.close()
                self._db = None

    @guarded
    def record(self, rel: str, before: bytes, after: bytes, cause: str, at: datetime) -> None:
        """Record `after` as the newest version of rel, written by `cause` over `before`."""
        with self._guard:
            db = self._conn()
            db.execute("BEGIN IMMEDIATE")
            try:
                latest = db.execute(
                    "SELECT id, cause, revision, at FROM versions WHERE path = ? ORDER BY id DESC LIMIT 1", (rel,)
                ).fetchone()
                before_rev, stamp = content_hash(before), at.isoformat(timespec="seconds")
                if before and (latest is None or latest[2] != before_rev):
                    cause_before = "original" if latest is None else HAND_EDIT
                    self._insert(db, rel, stamp, cause_before, before_rev, before)
                elif latest is not None and cause == "save" == latest[1] and latest[3][:10] == stamp[:10]:
                    db.execute("DELETE FROM versions WHERE id = ?", (latest[0],))
                self._insert(db, rel, stamp, cause, content_hash(after), after)
                db.execute(
                    "DELETE FROM versions WHERE path = ? AND id NOT IN "
                    "(SELECT id FROM versions WHERE path = ? ORDER BY id DESC LIMIT ?)",
                    (rel, rel, self.generations),
                )
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise

    @staticmethod
    def _insert(db: sqlite3.Connection, rel: str, stamp: str, cause: str, revision: str, data: bytes) -> None:
        db.execute(
            "INSERT INTO versions (path, at, cause, revision, size, data) VALUES (?, ?, ?, ?, ?, ?)",
            # A day's saves keep replacing one version, each time compressing the whole file: the fast
            # level costs a sixth of the default (0.4 vs 2.4 ms for a 170 kB file) for ~25% more bytes.
            (rel, stamp, cause, revision, len(data), zlib.compress(data, 1 if cause == "save" else 6)),
        )

    @guarded
    def versions(self, rel: str) -> list[Version]:
        """Every kept version of rel, newest first."""
        with self._guard:
            rows = self._conn().execute(
                "SELECT id, path, at, cause, revision, size FROM versions WHERE path = ? ORDER BY id DESC", (rel,)
            ).fetchall()
        return [Version(*row) for row in rows]

    @guarded
    def data(self, version_id: int) -> bytes | None:
        """The bytes of one version, or None if it is no longer kept."""
        with self._guard:
            row = self._conn().execute("SELECT data FROM versions WHERE id = ?", (version_id,)).fetchone()
        return zlib.decompress(row[0]) if row else None

    def find(self, rel: str, wanted: str) -> Version | None:
        """The version a person names: its id ("12"), or a date ("2026-11-20": the last version that day or before)."""
        kept = self.versions(rel)
        if wanted.isdigit():
            return next((version for version in kept if version.id == int(wanted)), None)
        day = date.fromisoformat(wanted).isoformat()
        return next((version for version in kept if version.at[:10] <= day), None)
