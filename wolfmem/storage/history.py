"""Past versions of knowledge files and episode logs, kept per machine in the state folder (never in the vault).

Every write wolfmem makes to a `knowledge/` or `episodes/` file records the new version with its date and cause.
If the file changed by hand since wolfmem last recorded it, the hand-edited version is recorded
first (cause "hand edit"), so the timeline has no holes; the sync records a hand edit it sees too.
Versions are thinned by age, never by count alone, so a busy night cannot push out the
copy a person needs to undo it:

- every version of the last `RECENT` (24 h) is kept as written, up to `MAX_RECENT` of them: any of
  them may be the one a person's editor loaded, the base a later merge needs (storage/reconcile.py);
  past that, the older ones of the window keep one an hour;
- then the last version of each day for `DAILY` (a month), and of each ISO week for `WEEKLY` (a year);
- the newest version and the first one recorded (the file as wolfmem first met it) are always kept.

A bad night is undone from the day before's version, a bad week from the week before's.

A version that the next one only appended to (every memory_log of an episode day) is kept as its
size alone, an empty blob: its bytes are the start of the next version that holds bytes. A day of
appends to a 1.8 MB log stored the whole file again per entry (1.8 MB each, up to `MAX_RECENT`);
now the newest copy and the sizes. When thinning drops a version that holds bytes, the newest kept
version before it that holds none is given its part of them.
A damaged history file is moved aside and a new, empty one started (see db.py).
"""

from __future__ import annotations

import sqlite3
import threading
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from wolfmem.storage.db import Store, guarded, open_db, rollback
from wolfmem.storage.vault import content_hash

RECENT = timedelta(hours=24)
MAX_RECENT = 500
DAILY = timedelta(days=31)
WEEKLY = timedelta(days=366)
HAND_EDIT = "hand edit"
SAVE = "save"
FAST = (SAVE, "episode")  # causes compressed at the fast level (`_insert`)
PREFIX = b""  # the data of a version the next one appended to: its bytes are the next holder's start

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

    def __init__(self, path: Path) -> None:
        self.path = path
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
                held = latest[0] if latest is not None and latest[2] == before_rev else None
                if before and held is None:
                    cause_before = "original" if latest is None else HAND_EDIT
                    held = self._insert(db, rel, stamp, cause_before, before_rev, before)
                self._insert(db, rel, stamp, cause, content_hash(after), after)
                if before and held is not None and after.startswith(before):
                    db.execute("UPDATE versions SET data = ? WHERE id = ?", (PREFIX, held))
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
        """Drop the versions of rel that the age tiers (module docstring) do not keep."""
        rows = db.execute(
            "SELECT id, at, length(data) = 0, size FROM versions WHERE path = ? ORDER BY id DESC", (rel,)
        ).fetchall()
        keep = kept([(number, stamp) for number, stamp, *_ in rows], now)
        pending: tuple[int, int] | None = None  # the newest kept version since the last holder that holds none
        for number, _stamp, prefix_only, size in reversed(rows):  # oldest first
            if prefix_only:
                pending = (number, size) if number in keep else pending
                continue
            if number not in keep and pending is not None:  # its bytes go to the version that needs them
                data = zlib.decompress(db.execute("SELECT data FROM versions WHERE id = ?", (number,)).fetchone()[0])
                db.execute("UPDATE versions SET data = ? WHERE id = ?", (zlib.compress(data[: pending[1]], 1),
                                                                         pending[0]))
            pending = None
        db.executemany("DELETE FROM versions WHERE id = ?", ((row[0],) for row in rows if row[0] not in keep))

    @staticmethod
    def _insert(db: sqlite3.Connection, rel: str, stamp: str, cause: str, revision: str, data: bytes) -> int:
        cursor = db.execute(
            "INSERT INTO versions (path, at, cause, revision, size, data) VALUES (?, ?, ?, ?, ?, ?)",
            # A day's saves and log entries keep replacing one version, each time compressing the whole
            # file: the fast level costs a sixth of the default (0.4 vs 2.4 ms for a 170 kB file) for
            # ~25% more bytes.
            (rel, stamp, cause, revision, len(data), zlib.compress(data, 1 if cause in FAST else 6)),
        )
        return cursor.lastrowid or 0

    @guarded
    def texts(self, rel: str, limit: int) -> list[tuple[Version, bytes]]:
        """The newest `limit` kept versions of rel with their bytes, newest first."""
        with self._guard:
            rows = self._conn().execute(
                "SELECT id, path, at, cause, revision, size, data FROM versions WHERE path = ? "
                "ORDER BY id DESC LIMIT ?",
                (rel, limit),
            ).fetchall()
        out: list[tuple[Version, bytes]] = []
        for row in rows:
            version = Version(*row[:6])
            if row[6] != PREFIX:
                out.append((version, zlib.decompress(row[6])))
            else:  # the start of the newer version just read (the newest always holds its bytes)
                out.append((version, out[-1][1][: version.size] if out else self.data(version.id) or b""))
        return out

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
            db = self._conn()
            row = db.execute("SELECT data, path, size FROM versions WHERE id = ?", (version_id,)).fetchone()
            if row is None:
                return None
            if row[0] != PREFIX:
                return zlib.decompress(row[0])
            holder = db.execute(
                "SELECT data FROM versions WHERE path = ? AND id > ? AND length(data) > 0 ORDER BY id LIMIT 1",
                (row[1], version_id),
            ).fetchone()
        return zlib.decompress(holder[0])[: row[2]] if holder else None

    def find(self, rel: str, wanted: str) -> Version | None:
        """The version a person names: its id ("12"), or a date ("2026-11-20": the last version that day or before)."""
        kept = self.versions(rel)
        if wanted.isdigit():
            return next((version for version in kept if version.id == int(wanted)), None)
        day = date.fromisoformat(wanted).isoformat()
        return next((version for version in kept if version.at[:10] <= day), None)


def kept(rows: Sequence[tuple[int, str]], now: datetime) -> set[int]:
    """The ids to keep of one file's versions, given as (id, stamp) newest first (rule in the module docstring)."""
    if not rows:
        return set()
    keep = {rows[0][0], rows[-1][0]}
    tiers: dict[str, list[tuple[int, str]]] = {"recent": [], "daily": [], "weekly": []}
    for number, stamp in rows:
        age = _age(stamp, now)
        tier = "recent" if age < RECENT else "daily" if age < DAILY else "weekly" if age < WEEKLY else None
        if tier is not None:
            tiers[tier].append((number, stamp))
    recent = tiers["recent"]
    keep.update(number for number, _ in recent[:MAX_RECENT])
    keep |= _last_of_each(recent[MAX_RECENT:], lambda stamp: stamp[:13])  # one an hour past the cap
    keep |= _last_of_each(tiers["daily"], lambda stamp: stamp[:10])
    keep |= _last_of_each(tiers["weekly"], _week)
    return keep


def thinned(version: Version, now: datetime) -> bool:
    """Whether `version` may stand for versions thinning dropped: it is older than `RECENT`, where one a day is kept."""
    return _age(version.at, now) >= RECENT


def _last_of_each(rows: Sequence[tuple[int, str]], bucket: Callable[[str], object]) -> set[int]:
    """The newest version of each bucket (rows come newest first)."""
    seen: set[object] = set()
    out = set()
    for number, stamp in rows:
        key = bucket(stamp)
        if key not in seen:
            seen.add(key)
            out.add(number)
    return out


def _week(stamp: str) -> object:
    try:
        return date.fromisoformat(stamp[:10]).isocalendar()[:2]
    except ValueError:
        return stamp[:10]


def _age(stamp: str, now: datetime) -> timedelta:
    """How long before `now` a version was recorded: zero from a clock that ran ahead; an unreadable stamp, a month."""
    try:
        at = datetime.fromisoformat(stamp)
    except ValueError:
        return DAILY
    if (at.tzinfo is None) != (now.tzinfo is None):  # a clock with and one without a zone: compare wall times
        at, now = at.replace(tzinfo=None), now.replace(tzinfo=None)
    return max(now - at, timedelta(0))
