"""Fact vectors on this machine: a float32 matrix file plus a SQLite table of which row holds which text.

One folder per vector space (model, endpoint and prefixes) under the vault's state folder, never in
the vault. A vector is keyed by its fact's content (`sync.fact_key`), so a fact that moves, or a
file that is re-indexed unchanged, is never embedded twice.

- vectors: content key → row of `vectors.f32` (rows are appended, never rewritten);
- files / facts: the layout — which key sits on which line of each file, as of the index revision
  the embedder last saw — so a search can give a line part of its neighbours' similarity;
- meta: the row count, dimension, a generation bumped by every change, and the endpoint's state.

Safe across processes: an append takes SQLite's write lock (BEGIN IMMEDIATE) first, writes and
fsyncs the rows past the committed count, then commits the keys, so a reader never sees a key whose
row is not on disk, and a writer that dies midway leaves only bytes the next one overwrites.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from wolfmem.errors import WolfmemError
from wolfmem.storage.db import immediate, open_db

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, row INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, revision TEXT NOT NULL, gen INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS facts (path TEXT NOT NULL, line INTEGER NOT NULL, key TEXT NOT NULL,
                                  PRIMARY KEY (path, line));
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('rows', '0'), ('dim', '0'), ('generation', '0');
"""
_MATRIX = "vectors.f32"
DTYPE = np.float32

EndpointState = Literal["ok", "down", "unknown"]


class VectorSpaceMismatch(WolfmemError):
    """The endpoint now returns vectors of another size than this store holds."""


@dataclass(frozen=True)
class Endpoint:
    """The embeddings endpoint as last seen by any process on this machine."""

    state: EndpointState
    error: str = ""
    since: float | None = None


@dataclass(frozen=True)
class Fallback:
    """The searches that answered (partly) lexically although hybrid search is on: how many, the last one."""

    count: int = 0
    reason: str = ""
    at: float | None = None


@dataclass(frozen=True)
class FileLayout:
    """One file's facts as (line, key) pairs, and their rows, for the dense view."""

    lines: np.ndarray
    rows: np.ndarray
    keys: tuple[str, ...]


class VectorStore:
    """The vectors and layout of one vector space; one connection used by one thread at a time."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.matrix_path = folder / _MATRIX
        self._db = open_db(folder / "vectors.sqlite", _SCHEMA)
        self._guard = threading.RLock()

    def close(self) -> None:
        """Close the connection."""
        with self._guard:
            self._db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that also bumps the generation, so readers notice it."""
        with self._guard, immediate(self._db) as db:
            yield db
            db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")

    def _meta(self, key: str, default: str = "") -> str:
        with self._guard:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    # -- vectors ----------------------------------------------------------------
    def generation(self) -> int:
        """A number that changes whenever any process changes the store."""
        return int(self._meta("generation", "0"))

    def shape(self) -> tuple[int, int]:
        """(committed rows, dimension); dimension 0 until the first vector arrives."""
        with self._guard:
            rows = dict(self._db.execute("SELECT key, value FROM meta WHERE key IN ('rows', 'dim')").fetchall())
        return int(rows.get("rows", 0)), int(rows.get("dim", 0))

    def missing(self, keys: Iterable[str]) -> set[str]:
        """The keys that have no vector yet."""
        wanted = set(keys)
        found: set[str] = set()
        chunk = list(wanted)
        with self._guard:
            for start in range(0, len(chunk), 500):
                part = chunk[start:start + 500]
                marks = ",".join("?" * len(part))
                found.update(r[0] for r in self._db.execute(f"SELECT key FROM vectors WHERE key IN ({marks})", part))
        return wanted - found

    def rows_of(self, keys: Sequence[str]) -> dict[str, int]:
        """The row of each key that has a vector."""
        out: dict[str, int] = {}
        with self._guard:
            for start in range(0, len(keys), 500):
                part = list(keys[start:start + 500])
                marks = ",".join("?" * len(part))
                out.update(self._db.execute(f"SELECT key, row FROM vectors WHERE key IN ({marks})", part).fetchall())
        return out

    def add(self, keys: Sequence[str], vectors: np.ndarray) -> int:
        """Store vectors for keys that have none yet; return how many were new."""
        if len(keys) != len(vectors):
            raise ValueError("one vector per key")
        if not keys:
            return 0
        vectors = np.ascontiguousarray(vectors, dtype=DTYPE)
        with self._write() as db:
            rows, dim = (int(v) for v in (self._meta("rows"), self._meta("dim")))
            if dim and vectors.shape[1] != dim:
                raise VectorSpaceMismatch(
                    f"the embeddings model now returns {vectors.shape[1]}-dimensional vectors, not {dim}; "
                    f"if the model changed under the same name, delete {self.folder} to embed again"
                )
            present = set(self.rows_of(list(keys)))
            fresh: dict[str, int] = {}
            for position, key in enumerate(keys):
                if key not in present and key not in fresh:
                    fresh[key] = position
            if not fresh:
                return 0
            block = vectors[list(fresh.values())]
            _append(self.matrix_path, block, rows * vectors.shape[1] * block.itemsize)
            db.executemany("INSERT INTO vectors VALUES (?, ?)", ((key, rows + n) for n, key in enumerate(fresh)))
            db.execute("UPDATE meta SET value = ? WHERE key = 'rows'", (str(rows + len(fresh)),))
            db.execute("UPDATE meta SET value = ? WHERE key = 'dim'", (str(vectors.shape[1]),))
        return len(fresh)

    def matrix(self) -> np.ndarray:
        """The committed vectors, memory-mapped read-only (shared with every process through the page cache)."""
        rows, dim = self.shape()
        if not rows or not dim:
            return np.zeros((0, max(dim, 1)), dtype=DTYPE)
        return np.memmap(self.matrix_path, dtype=DTYPE, mode="r", shape=(rows, dim))

    # -- layout -----------------------------------------------------------------
    def files(self) -> dict[str, str]:
        """Path → the index revision whose facts the layout holds."""
        with self._guard:
            return dict(self._db.execute("SELECT path, revision FROM files").fetchall())

    def file_generations(self) -> dict[str, int]:
        """Path → the generation its layout was last written in."""
        with self._guard:
            return dict(self._db.execute("SELECT path, gen FROM files").fetchall())

    def set_layouts(self, layouts: Mapping[str, tuple[str, Sequence[tuple[int, str]]]]) -> None:
        """Record, for each path, the revision seen and its facts as (line, key) pairs."""
        if not layouts:
            return
        with self._write() as db:
            gen = int(self._meta("generation")) + 1
            for path, (revision, facts) in layouts.items():
                db.execute("DELETE FROM facts WHERE path = ?", (path,))
                db.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?, ?)",
                               ((path, line, key) for line, key in facts))
                db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?)", (path, revision, gen))

    def drop(self, paths: Iterable[str]) -> None:
        """Forget the layout of files the index no longer has (their vectors stay, keyed by content)."""
        paths = list(paths)
        if not paths:
            return
        with self._write() as db:
            for path in paths:
                db.execute("DELETE FROM facts WHERE path = ?", (path,))
                db.execute("DELETE FROM files WHERE path = ?", (path,))

    def layout(self, path: str) -> FileLayout:
        """One file's facts that have vectors, in line order."""
        with self._guard:
            found = self._db.execute(
                "SELECT f.line, v.row, f.key FROM facts f JOIN vectors v ON v.key = f.key "
                "WHERE f.path = ? ORDER BY f.line", (path,)).fetchall()
        return FileLayout(
            np.fromiter((r[0] for r in found), dtype=np.int32, count=len(found)),
            np.fromiter((r[1] for r in found), dtype=np.int64, count=len(found)),
            tuple(r[2] for r in found),
        )

    def fact_count(self) -> int:
        """How many fact lines the layout holds (the facts a search can rank by similarity)."""
        with self._guard:
            return int(self._db.execute("SELECT COUNT(*) FROM facts").fetchone()[0])

    # -- endpoint state -----------------------------------------------------------
    def endpoint(self) -> Endpoint:
        """The endpoint's state as last recorded by any process."""
        state = self._meta("endpoint", "unknown")
        since = self._meta("endpoint_since")
        return Endpoint(state if state in ("ok", "down") else "unknown",  # type: ignore[arg-type]
                        self._meta("endpoint_error"), float(since) if since else None)

    def note_endpoint(self, state: EndpointState, error: str = "") -> None:
        """Record the endpoint's state; a no-op when it is unchanged, so healthy searches never write."""
        current = self.endpoint()
        if current.state == state and current.error == error:
            return
        with self._guard, immediate(self._db) as db:
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
                ("endpoint", state), ("endpoint_error", error), ("endpoint_since", repr(time.time()))])

    def fallback(self) -> Fallback:
        """The searches any process recorded as having fallen back to the lexical ranking."""
        at = self._meta("fallback_at")
        return Fallback(int(self._meta("fallback_count", "0")), self._meta("fallback_reason"),
                        float(at) if at else None)

    def note_fallback(self, searches: int, reason: str, at: float) -> None:
        """Add `searches` fallen-back searches, the last at `at` for `reason` (a write: callers throttle)."""
        with self._guard, immediate(self._db) as db:
            count = int(self._meta("fallback_count", "0")) + searches
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
                ("fallback_count", str(count)), ("fallback_reason", reason), ("fallback_at", repr(at))])


def _append(path: Path, block: np.ndarray, offset: int) -> None:
    """Write rows at a byte offset and make them durable before any key points at them."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        data = block.tobytes()
        written = 0
        while written < len(data):
            written += os.pwrite(fd, data[written:], offset + written)
        os.fsync(fd)
    finally:
        os.close(fd)
