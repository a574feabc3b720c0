"""The index's own bookkeeping in SQLite, beside the Whoosh files (and disposable with them).

- files: the manifest — what the index last saw of each file (stat, revision, why it was skipped);
- docs: every indexed fact's id, its current line number and a digest of its indexed fields, so a
  changed file costs index writes only for the facts that changed, and line shifts cost none;
- meta: a generation counter bumped by every change, so another process's commit is noticed with
  one cheap read.

Every method fails only with WolfmemErrors; a damaged catalog raises DatabaseDamaged, and the index
that owns it rebuilds both from the files.
"""

from __future__ import annotations

import bisect
import contextlib
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from wolfmem.storage.db import Store, guarded, open_db, rollback

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
    revision TEXT NOT NULL, checked_ns INTEGER NOT NULL, skipped TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS docs (
    doc_id TEXT PRIMARY KEY, path TEXT NOT NULL, line INTEGER NOT NULL, digest TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_by_path ON docs (path);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('generation', 0);
"""


@dataclass(frozen=True)
class ManifestEntry:
    """What the index last saw of one file."""

    mtime_ns: int
    size: int
    revision: str
    checked_ns: int
    skipped: str = ""


class DocRow(NamedTuple):
    """One indexed fact's bookkeeping: where it is now and what was indexed.

    A tuple, not a dataclass: a whole commit of a big file reads and compares every row of it, and a
    tuple is made and compared several times faster.
    """

    doc_id: str
    line: int
    digest: str


class Catalog(Store):
    """One SQLite connection per process-side index handle; safe across processes (WAL, busy timeout)."""

    SCHEMA = _SCHEMA
    MEND_DAMAGE = False
    _db: sqlite3.Connection  # opened for the catalog's whole life, never closed to None

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = open_db(path, _SCHEMA, recover=False)
        self._guard = threading.Lock()
        self._manifest: dict[str, ManifestEntry] = {}
        self._manifest_generation = -1
        # The rows this process last committed for a few files, valid while no other commit came in
        # between: a save then neither reads its file's rows back nor rewrites the unchanged ones.
        self._recent: OrderedDict[str, tuple[int, dict[str, DocRow]]] = OrderedDict()

    def close(self) -> None:
        """Close the connection."""
        with self._guard:
            self._db.close()

    @guarded
    def generation(self) -> int:
        """A number that changes whenever any process changes the catalog."""
        with self._guard:
            return int(self._db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])

    @guarded
    def synced_at(self) -> int | None:
        """When any process last committed a change (Unix seconds)."""
        with self._guard:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'synced_at'").fetchone()
        return int(row[0]) if row else None

    @guarded
    def manifest(self) -> dict[str, ManifestEntry]:
        """Every file the index knows, re-read only when another change was committed."""
        generation = self.generation()
        if generation != self._manifest_generation:
            with self._guard:
                rows = self._db.execute(
                    "SELECT path, mtime_ns, size, revision, checked_ns, skipped FROM files"
                ).fetchall()
            self._manifest = {row[0]: ManifestEntry(*row[1:]) for row in rows}
            self._manifest_generation = generation
        return self._manifest

    @guarded
    def doc_rows(self, path: str) -> dict[str, DocRow]:
        """The indexed facts of one file by id."""
        with self._guard:
            return dict(self._rows(path, self._current_generation()))

    @guarded
    def entry_rows(self, path: str) -> tuple[ManifestEntry | None, dict[str, DocRow]]:
        """One file's manifest entry and its rows, read in one snapshot (no lock needed).

        Every commit that changes a file's rows writes its entry too, with a new check time, so while
        the entry stays the same the rows read here stay current: a commit plans against them before
        it takes the index lock and checks under it only that the entry has not changed.
        """
        with self._guard:
            self._db.execute("BEGIN")
            try:
                row = self._db.execute(
                    "SELECT mtime_ns, size, revision, checked_ns, skipped FROM files WHERE path = ?", (path,)
                ).fetchone()
                rows = dict(self._rows(path, self._current_generation()))
            finally:
                self._db.execute("COMMIT")
        return (ManifestEntry(*row) if row else None), rows

    def _current_generation(self) -> int:
        return int(self._db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])

    def _rows(self, path: str, generation: int) -> dict[str, DocRow]:
        """A file's rows, from the recent commits of this process when nothing was committed since."""
        recent = self._recent.get(path)
        if recent is not None and recent[0] == generation:
            return recent[1]
        rows = self._db.execute("SELECT doc_id, line, digest FROM docs WHERE path = ?", (path,)).fetchall()
        return {row[0]: DocRow._make(row) for row in rows}

    @guarded
    def file_lines(self, paths: Sequence[str]) -> dict[str, list[tuple[str, int]]]:
        """Each file's indexed facts as (id, line), in one query for all of them (a search's line maps)."""
        found: dict[str, list[tuple[str, int]]] = {path: [] for path in paths}
        if not found:
            return found
        marks = ",".join("?" * len(found))
        with self._guard:
            rows = self._db.execute(f"SELECT path, doc_id, line FROM docs WHERE path IN ({marks})", list(found))
            for path, doc_id, line in rows.fetchall():
                found[path].append((doc_id, line))
        return found

    @guarded
    def lines(self, doc_ids: Sequence[str]) -> dict[str, int]:
        """The current line of each of the given facts that is still indexed."""
        if not doc_ids:
            return {}
        marks = ",".join("?" * len(doc_ids))
        with self._guard:
            rows = self._db.execute(f"SELECT doc_id, line FROM docs WHERE doc_id IN ({marks})", list(doc_ids))
            return dict(rows.fetchall())

    @guarded
    def at_lines(self, path: str, lines: Iterable[int]) -> dict[int, str]:
        """The doc id on each of these lines of one file that holds a fact."""
        wanted = sorted(set(lines))
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        with self._guard:
            rows = self._db.execute(f"SELECT line, doc_id FROM docs WHERE path = ? AND line IN ({marks})",
                                    [path, *wanted])
            return dict(rows.fetchall())

    @guarded
    def commit(
        self,
        entries: Mapping[str, ManifestEntry | None],
        docs: Mapping[str, Iterable[DocRow]],
        writes: Mapping[str, RowWrites] | None = None,
    ) -> None:
        """In one transaction: set or drop (None) manifest entries, and make the doc rows of files these.

        Only rows that changed are written; a run of facts that only moved (lines inserted above
        them) is shifted by one UPDATE, so a save to a big file costs about as much as to a small one.
        `writes`: the row writes of some of these files, worked out by the caller from their current rows
        (`row_writes` from `entry_rows`, checked under the index lock it still holds), so the rows are
        neither read nor compared again.
        """
        with self._guard, self._transaction() as (db, generation):
            for path, entry in entries.items():
                if entry is None:
                    db.execute("DELETE FROM files WHERE path = ?", (path,))
                    db.execute("DELETE FROM docs WHERE path = ?", (path,))
                else:
                    _put_entry(db, path, entry)
            written = {}
            for path, given in docs.items():
                new = {row.doc_id: row for row in given}
                if writes and path in writes:
                    _apply(db, path, writes[path])
                else:
                    _apply(db, path, row_writes(self._rows(path, generation), new))
                written[path] = new
        self._committed(generation, entries, written)

    @guarded
    def revision(self, path: str) -> str | None:
        """The revision the catalog records for one file, read now (None: not indexed)."""
        with self._guard:
            row = self._db.execute("SELECT revision FROM files WHERE path = ?", (path,)).fetchone()
        return row[0] if row else None

    @guarded
    def commit_shift(
        self, path: str, entry: ManifestEntry, expected: str, removed: Iterable[str], after_line: int, delta: int,
        added: Iterable[DocRow],
    ) -> bool:
        """In one transaction, if the file's recorded revision is still `expected`: drop the `removed` rows,
        move the rows below `after_line` by `delta` lines, add `added`, and set the file's entry.

        False (nothing changed) when another commit recorded another revision of the file meanwhile.
        """
        try:
            with self._guard, self._transaction() as (db, generation):
                row = db.execute("SELECT revision FROM files WHERE path = ?", (path,)).fetchone()
                if row is None or row[0] != expected:
                    raise _Stale
                db.executemany("DELETE FROM docs WHERE doc_id = ?", ((doc_id,) for doc_id in removed))
                if delta:
                    db.execute("UPDATE docs SET line = line + ? WHERE path = ? AND line > ?", (delta, path, after_line))
                db.executemany("INSERT OR REPLACE INTO docs VALUES (?, ?, ?, ?)",
                               ((row.doc_id, path, row.line, row.digest) for row in added))
                _put_entry(db, path, entry)
        except _Stale:
            return False
        self._recent.pop(path, None)  # its rows are read back when a whole build next needs them
        self._committed(generation, {path: entry}, {})
        return True

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[tuple[sqlite3.Connection, int]]:
        """One write transaction (under the guard): the connection and the generation it starts from, bumped."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db, self._current_generation()
            _bump(db)
            db.execute("COMMIT")
        except BaseException:
            rollback(db)
            self._recent.clear()
            raise

    def _committed(
        self, generation: int, entries: Mapping[str, ManifestEntry | None], written: Mapping[str, dict[str, DocRow]],
    ) -> None:
        """After this process committed over `generation`: keep what it holds of the manifest and rows current."""
        if self._manifest_generation == generation:
            # The manifest this process holds was current just before this commit: apply it there
            # too, so the next sync does not read every file's entry back.
            manifest = {**self._manifest, **{path: e for path, e in entries.items() if e is not None}}
            for path, entry in entries.items():
                if entry is None:
                    manifest.pop(path, None)
            self._manifest, self._manifest_generation = manifest, generation + 1
        for path, (seen, rows) in list(self._recent.items()):
            # Rows remembered as current just before this commit stay current after it, unless it wrote them
            # (a file shrunk below the size worth remembering would keep its old rows).
            if (path in entries and entries[path] is None) or path in written or seen != generation:
                del self._recent[path]
            else:
                self._recent[path] = (generation + 1, rows)
        for path, new in written.items():
            if len(new) >= _RECENT_MIN_ROWS:
                self._recent[path] = (generation + 1, new)
                self._recent.move_to_end(path)
        while len(self._recent) > _RECENT_FILES:
            self._recent.popitem(last=False)


class _Stale(Exception):
    """The file's recorded revision is not the one a change was worked out from."""


def _put_entry(db: sqlite3.Connection, path: str, entry: ManifestEntry) -> None:
    db.execute(
        "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)",
        (path, entry.mtime_ns, entry.size, entry.revision, entry.checked_ns, entry.skipped),
    )


def _bump(db: sqlite3.Connection) -> None:
    """Mark a change: every process re-reads what it holds of the catalog."""
    db.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    db.execute("INSERT OR REPLACE INTO meta VALUES ('synced_at', ?)", (int(time.time()),))


# A shift of fewer rows than this is cheaper as row-by-row upserts.
_SHIFT_MIN_ROWS = 8
# Only files this big are worth remembering, and only this many of them (memory stays small).
_RECENT_MIN_ROWS = 64
_RECENT_FILES = 8


@dataclass(frozen=True)
class RowWrites:
    """The row writes that turn one file's rows into another set (`row_writes`)."""

    deleted: tuple[str, ...]
    shifts: tuple[tuple[int, int, int], ...]  # (first old line, last old line, delta): one UPDATE each
    upserts: tuple[DocRow, ...]


def row_writes(old: Mapping[str, DocRow], new: Mapping[str, DocRow]) -> RowWrites:
    """How to turn a file's rows from `old` into `new` with as few row writes as possible (pure)."""
    moved = sorted(
        (before.line, row.line - before.line, doc_id)
        for doc_id, row in new.items()
        if (before := old.get(doc_id)) is not None and before.digest == row.digest and before.line != row.line
    )
    shifts = []
    shifted: set[str] = set()
    for low, high, delta, run in _runs(moved, sorted(row.line for row in old.values())):
        if len(run) >= _SHIFT_MIN_ROWS:
            shifts.append((low, high, delta))
            shifted.update(run)
    upserts = tuple(row for doc_id, row in new.items() if doc_id not in shifted and old.get(doc_id) != row)
    return RowWrites(tuple(old.keys() - new.keys()), tuple(shifts), upserts)


def _apply(db: sqlite3.Connection, path: str, writes: RowWrites) -> None:
    """Make the row writes `writes` of one file."""
    db.executemany("DELETE FROM docs WHERE doc_id = ?", ((doc_id,) for doc_id in writes.deleted))
    for low, high, delta in writes.shifts:
        # Negated first, so a later run's range never catches rows this one already moved.
        db.execute("UPDATE docs SET line = -(line + ?) WHERE path = ? AND line BETWEEN ? AND ?",
                   (delta, path, low, high))
    if writes.shifts:
        db.execute("UPDATE docs SET line = -line WHERE path = ? AND line < 0", (path,))
    db.executemany("INSERT OR REPLACE INTO docs VALUES (?, ?, ?, ?)",
                   ((row.doc_id, path, row.line, row.digest) for row in writes.upserts))


def _runs(
    moved: list[tuple[int, int, str]], old_lines: list[int]
) -> Iterator[tuple[int, int, int, list[str]]]:
    """Runs of moved rows, adjacent in the old order, sharing one shift, that hold every old row of
    their line range: (first old line, last old line, shift, doc ids)."""
    start = 0
    while start < len(moved):
        end = start
        while end + 1 < len(moved) and moved[end + 1][1] == moved[start][1]:
            end += 1
        low, high = moved[start][0], moved[end][0]
        inside = bisect.bisect_right(old_lines, high) - bisect.bisect_left(old_lines, low)
        if inside == end - start + 1:
            yield low, high, moved[start][1], [doc_id for _, _, doc_id in moved[start:end + 1]]
        start = end + 1
