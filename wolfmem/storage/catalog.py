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

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True)
class DocRow:
    """One indexed fact's bookkeeping: where it is now and what was indexed."""

    doc_id: str
    line: int
    digest: str


class Catalog(Store):
    """One SQLite connection per process-side index handle; safe across processes (WAL, busy timeout)."""

    SCHEMA = _SCHEMA
    MEND_DAMAGE = False

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = open_db(path, _SCHEMA, recover=False)
        self._guard = threading.Lock()
        self._manifest: dict[str, ManifestEntry] = {}
        self._manifest_generation = -1

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
            rows = self._db.execute("SELECT doc_id, line, digest FROM docs WHERE path = ?", (path,)).fetchall()
        return {row[0]: DocRow(*row) for row in rows}

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
    def commit(
        self,
        entries: Mapping[str, ManifestEntry | None],
        docs: Mapping[str, Iterable[DocRow]],
    ) -> None:
        """In one transaction: set or drop (None) manifest entries, and replace the doc rows of files."""
        with self._guard:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                for path, entry in entries.items():
                    if entry is None:
                        db.execute("DELETE FROM files WHERE path = ?", (path,))
                        db.execute("DELETE FROM docs WHERE path = ?", (path,))
                    else:
                        db.execute(
                            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)",
                            (path, entry.mtime_ns, entry.size, entry.revision, entry.checked_ns, entry.skipped),
                        )
                for path, rows in docs.items():
                    db.execute("DELETE FROM docs WHERE path = ?", (path,))
                    db.executemany(
                        "INSERT OR REPLACE INTO docs VALUES (?, ?, ?, ?)",
                        ((row.doc_id, path, row.line, row.digest) for row in rows),
                    )
                db.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
                db.execute("INSERT OR REPLACE INTO meta VALUES ('synced_at', ?)", (int(time.time()),))
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise
