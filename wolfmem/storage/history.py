"""Past versions of knowledge files and episode logs, kept per machine in the state folder (never in the vault).

Every write wolfmem makes to a `knowledge/` or `episodes/` file records the new version with its date and cause.
If the file changed by hand since wolfmem last recorded it, the hand-edited version is recorded
first (cause "hand edit"), so the timeline has no holes; the sync records a hand edit it sees too.
Every version of the last `RECENT` is kept as written (at most `MAX_RECENT` of them): any of them
may be the one a person's editor loaded, the base a later merge needs (storage/reconcile.py).
Older versions are thinned: saves on one day coalesce into the day's last, so a busy day of saves
cannot push the curation versions out, and the newest `GENERATIONS` older versions are kept,
compressed. A damaged history file is moved aside and a new, empty one started (see db.py).
"""

from __future__ import annotations

import sqlite3
import threading
import zlib
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from wolfmem.storage.db import Store, guarded, open_db, rollback
from wolfmem.storage.vault import content_hash

GENERATIONS = 30
RECENT = timedelta(hours=24)
MAX_RECENT = 500
HAND_EDIT = "hand edit"
SAVE = "save"

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
                self._insert(db, rel, stamp, cause, content_hash(after), after)
                self._thin(db, rel, at)
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise

    @guarded
    def note(self, rel: str, data: bytes, cause: str, at: datetime) -> bool:
        """Record data as rel's newest version unless it already is (a hand edit the sync saw); whether it was new."""
        with self._guard:
            db = self._conn()
            db.execute("BEGIN IMMEDIATE")
            try:
                latest = db.execute(
                    "SELECT revision FROM versions WHERE path = ? ORDER BY id DESC LIMIT 1", (rel,)
                ).fetchone()
                revision = content_hash(data)
                new = latest is None or latest[0] != revision
                if new:
                    self._insert(db, rel, at.isoformat(timespec="seconds"), cause, revision, data)
                    self._thin(db, rel, at)
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise
        return new

    def _thin(self, db: sqlite3.Connection, rel: str, now: datetime) -> None:
        """Keep the recent versions as they are (up to MAX_RECENT); coalesce older saves by day, keep GENERATIONS."""
        rows = db.execute("SELECT id, at, cause FROM versions WHERE path = ? ORDER BY id DESC", (rel,)).fetchall()
        cutoff = now - RECENT
        recent = [row for row in rows if _recent(row[1], cutoff)]
        older = [row for row in rows if not _recent(row[1], cutoff)]
        drop = [row[0] for row in recent[MAX_RECENT:]]
        kept_older = []
        newer: tuple[int, str, str] | None = recent[-1] if recent else None
        for row in older:
            # A save followed (on the same day) by another save is what the day's last save already holds.
            if newer is not None and row[2] == SAVE == newer[2] and row[1][:10] == newer[1][:10]:
                drop.append(row[0])
            else:
                kept_older.append(row[0])
            newer = row
        drop += kept_older[self.generations:]
        db.executemany("DELETE FROM versions WHERE id = ?", ((number,) for number in drop))

    @staticmethod
    def _insert(db: sqlite3.Connection, rel: str, stamp: str, cause: str, revision: str, data: bytes) -> None:
        db.execute(
            "INSERT INTO versions (path, at, cause, revision, size, data) VALUES (?, ?, ?, ?, ?, ?)",
            # A day's saves keep replacing one version, each time compressing the whole file: the fast
            # level costs a sixth of the default (0.4 vs 2.4 ms for a 170 kB file) for ~25% more bytes.
            (rel, stamp, cause, revision, len(data), zlib.compress(data, 1 if cause == SAVE else 6)),
        )

    @guarded
    def texts(self, rel: str, limit: int) -> list[tuple[Version, bytes]]:
        """The newest `limit` kept versions of rel with their bytes, newest first."""
        with self._guard:
            rows = self._conn().execute(
                "SELECT id, path, at, cause, revision, size, data FROM versions WHERE path = ? "
                "ORDER BY id DESC LIMIT ?",
                (rel, limit),
            ).fetchall()
        return [(Version(*row[:6]), zlib.decompress(row[6])) for row in rows]

    @guarded
    def versions(self, rel: str) -> list[Version]:
        """Every kept version of rel, newest first."""
        with self._guard:
            rows = self._conn().execute(
                "SELECT id, path, at, cause, revision, size FROM versions WHERE path = ? ORDER BY id DESC", (rel,)
            ).fetchall()
        return [Version(*row) for row in rows]

    @guarded
    def latest(self, rel: str) -> Version | None:
        """The newest kept version of rel, if any."""
        with self._guard:
            row = self._conn().execute(
                "SELECT id, path, at, cause, revision, size FROM versions WHERE path = ? ORDER BY id DESC LIMIT 1",
                (rel,),
            ).fetchone()
        return Version(*row) if row else None

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


def _recent(stamp: str, cutoff: datetime) -> bool:
    try:
        at = datetime.fromisoformat(stamp)
    except ValueError:
        return False
    if (at.tzinfo is None) != (cutoff.tzinfo is None):  # a clock with and one without a zone: compare wall times
        at, cutoff = at.replace(tzinfo=None), cutoff.replace(tzinfo=None)
    return at >= cutoff
