"""Opening wolfmem's small SQLite databases the same way everywhere."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_SECONDS = 60.0


def open_db(path: Path, schema: str) -> sqlite3.Connection:
    """A WAL-mode connection in autocommit mode, usable from any thread (callers serialise its use).

    Switching a new file to WAL needs a moment of exclusive access, and SQLite does not wait for it
    when another process is creating the same file, so that step is retried here.
    """
    db = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(schema)
            return db
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                db.close()
                raise
            time.sleep(0.01)


@contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction that takes SQLite's write lock up front, rolled back on any error.

    IMMEDIATE: a read-then-write transaction could not upgrade its lock once another process wrote,
    and SQLite would fail it at once instead of waiting.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
