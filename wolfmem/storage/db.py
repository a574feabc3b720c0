"""Opening wolfmem's small SQLite databases the same way everywhere."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_fixed

BUSY_SECONDS = 60.0


def open_db(path: Path, schema: str) -> sqlite3.Connection:
    """A WAL-mode connection in autocommit mode, usable from any thread (callers serialise its use).

    Switching a new file to WAL needs a moment of exclusive access, and SQLite does not wait for it
    when another process is creating the same file, so that step is retried here.
    """
    db = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    try:
        _SETUP_RETRY(_set_up, db, schema)
    except sqlite3.Error:
        db.close()
        raise
    return db


def _set_up(db: sqlite3.Connection, schema: str) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(schema)


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


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


_SETUP_RETRY = Retrying(
    retry=retry_if_exception(_locked), stop=stop_after_delay(BUSY_SECONDS), wait=wait_fixed(0.01), reraise=True
)
