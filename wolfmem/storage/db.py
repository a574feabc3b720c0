"""Opening wolfmem's small SQLite databases the same way everywhere, and surviving a damaged or read-only one.

A file that is damaged (garbage bytes, malformed pages) or foreign (another program's tables) is moved
aside as `<name>.damaged-<UTC stamp>` with its -wal and -shm, and a new empty one takes its place: these
files hold only wolfmem's own bookkeeping, never the vault's notes. A database that cannot be opened
for writing (a read-only mount or folder, a full disk) is opened read-only, so reads go on; its writes
fail with a `StorageError` that says how to fix it, and the next write tries the normal way again.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, TypeVar
from urllib.parse import quote

import filelock
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_fixed

from wolfmem.errors import database_error, sqlite_code, storage_error

log = logging.getLogger(__name__)

BUSY_SECONDS = 60.0
ASIDE = "damaged"
_DAMAGE = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
_NOT_WRITABLE = (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH)
# A full disk shows up at open as an I/O error: SQLite cannot size its shared-memory file.
_OPEN_READ_ONLY = (*_NOT_WRITABLE, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL)

F = TypeVar("F", bound=Callable[..., Any])


class ReadOnlyConnection(sqlite3.Connection):
    """A connection opened read-only because the file or its folder refused writes."""


class ForeignDatabase(sqlite3.DatabaseError):
    """The file is a SQLite database, but its tables are not the ones wolfmem made."""

    sqlite_errorcode = sqlite3.SQLITE_NOTADB


def is_damaged(exc: BaseException) -> bool:
    """Whether a SQLite error means the file itself is corrupt or foreign (as opposed to full, locked, read-only)."""
    return isinstance(exc, sqlite3.Error) and sqlite_code(exc) in _DAMAGE


def open_db(path: Path, schema: str, *, recover: bool = True) -> sqlite3.Connection:
    """A WAL-mode connection in autocommit mode, usable from any thread (callers serialise its use).

    A damaged or foreign file is moved aside and recreated (with recover=False: DatabaseDamaged is
    raised, for a caller that rebuilds more than the file); a file that cannot be written is opened
    read-only; any other fault is a StorageError.
    """
    try:
        return _open(path, schema)
    except sqlite3.Error as exc:
        if is_damaged(exc) and recover:
            return recover_db(path, schema, exc)
        if sqlite_code(exc) in _OPEN_READ_ONLY and path.exists():
            return _open_read_only(path, exc)
        raise database_error(exc, path) from None
    except OSError as exc:
        raise storage_error(exc, "open", path) from None


def recover_db(path: Path, schema: str, cause: BaseException) -> sqlite3.Connection:
    """Move a damaged database aside and open a new one, once, even when several processes notice at once."""
    try:
        with filelock.FileLock(str(path) + ".lock", thread_local=False, is_singleton=True):
            # Another process may have recovered it while this one waited for the lock.
            db = _healthy(path, schema)
            if db is not None:
                return db
            aside = move_aside(path)
            log.warning(
                "%s is damaged or not wolfmem's (%s); moved it aside to %s and started a new one",
                path, cause, aside.name,
            )
            return _open(path, schema)
    except sqlite3.Error as exc:
        raise database_error(exc, path) from None
    except OSError as exc:
        raise storage_error(exc, "move aside the damaged", path) from None


def _healthy(path: Path, schema: str) -> sqlite3.Connection | None:
    """A connection to the file if it opens and passes SQLite's quick check, else None."""
    try:
        db = _open(path, schema)
    except sqlite3.Error:
        return None
    try:
        ok = db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    except sqlite3.Error:
        ok = False  # a check that cannot even run has failed
    if ok:
        return db
    db.close()
    return None


def move_aside(path: Path) -> Path:
    """Rename a file (and its SQLite -wal/-shm companions) to `<name>.damaged-<UTC stamp>`; return the new path."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.{ASIDE}-{stamp}")
    number = 1
    while aside.exists():
        number += 1
        aside = path.with_name(f"{path.name}.{ASIDE}-{stamp}-{number}")
    # The -wal first: a new database must never replay the old one's log.
    for suffix in ("-wal", "-shm", ""):
        source = Path(str(path) + suffix)
        if source.exists():
            os.replace(source, Path(str(aside) + suffix))
    return aside


def begin(db: sqlite3.Connection) -> str:
    """The statement that opens a transaction: IMMEDIATE (take the write lock first) unless read-only."""
    return "BEGIN" if isinstance(db, ReadOnlyConnection) else "BEGIN IMMEDIATE"


def rollback(db: sqlite3.Connection) -> None:
    """Undo the open transaction, if the connection still has one (a failed COMMIT may have ended it)."""
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


class Store:
    """Base of the classes that own one SQLite file; `guarded` methods recover through `_recover`."""

    SCHEMA: ClassVar[str]
    # False: a damaged file is not mended in place, because its owner rebuilds more than the file.
    MEND_DAMAGE: ClassVar[bool] = True
    path: Path
    _db: sqlite3.Connection | None
    _guard: threading.Lock

    def _recover(self, exc: sqlite3.Error) -> bool:
        """Swap in the connection `replacement` gives, if any; whether the failed call may run again."""
        if is_damaged(exc) and not self.MEND_DAMAGE:
            return False
        with self._guard:
            fresh = replacement(self._db, exc, self.path, self.SCHEMA) if self._db is not None else None
            if fresh is not None:
                self._db = fresh
        return fresh is not None


def guarded(method: F) -> F:
    """Make a store method fail only with WolfmemErrors, recovering once through `self._recover(exc)`.

    `Store._recover` returns True when it replaced the connection (see `replacement`); the method then
    runs once more.
    """

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            if not self._recover(exc):
                raise database_error(exc, self.path) from None
        except OSError as exc:
            raise storage_error(exc, "use", self.path) from None
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise database_error(exc, self.path) from None
        except OSError as exc:
            raise storage_error(exc, "use", self.path) from None

    return wrapper  # type: ignore[return-value]


def replacement(db: sqlite3.Connection, exc: sqlite3.Error, path: Path, schema: str) -> sqlite3.Connection | None:
    """The connection to use instead of `db` after `exc`, or None when the fault is not one a reopen fixes.

    A damaged file is moved aside and recreated; a read-only fallback whose write failed is reopened
    normally once the file can be written again.
    """
    if is_damaged(exc):
        db.close()
        return recover_db(path, schema, exc)
    if not isinstance(db, ReadOnlyConnection) or sqlite_code(exc) not in _NOT_WRITABLE:
        return None
    try:
        fresh = _open(path, schema)
    except (sqlite3.Error, OSError):
        return None
    db.close()
    log.info("%s is writable again", path)
    return fresh


def _open(path: Path, schema: str) -> sqlite3.Connection:
    """Open, check the tables are wolfmem's, switch to WAL and create what is missing.

    Switching a new file to WAL needs a moment of exclusive access, and SQLite does not wait for it
    when another process is creating the same file, so that step is retried here.
    """
    db = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    try:
        _check_tables(db, schema)
        _SETUP_RETRY(_set_up, db, schema)
    except BaseException:
        db.close()
        raise
    return db


def _set_up(db: sqlite3.Connection, schema: str) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(schema)


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


_SETUP_RETRY = Retrying(
    retry=retry_if_exception(_locked), stop=stop_after_delay(BUSY_SECONDS), wait=wait_fixed(0.01), reraise=True
)


def _open_read_only(path: Path, cause: sqlite3.Error) -> sqlite3.Connection:
    """Open a database that refuses writes, for reading: read-only if SQLite can, else as an immutable file."""
    uri = "file:" + quote(str(path.absolute()))
    for mode in ("mode=ro", "immutable=1"):
        try:
            # Without its -shm file (a clean close deletes it) a WAL database opens read-only only as
            # "immutable": safe here, since nothing can write the file while its folder refuses writes.
            db = sqlite3.connect(f"{uri}?{mode}", uri=True, timeout=BUSY_SECONDS, isolation_level=None,
                                 check_same_thread=False, factory=ReadOnlyConnection)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error:
            continue
        log.warning("%s cannot be written (%s); opened it read-only, so only reads work", path, cause)
        return db
    raise database_error(cause, path)


@functools.cache
def _expected_columns(schema: str) -> dict[str, frozenset[str]]:
    probe = sqlite3.connect(":memory:")
    try:
        probe.executescript(schema)
        return _columns(probe)
    finally:
        probe.close()


def _columns(db: sqlite3.Connection) -> dict[str, frozenset[str]]:
    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {
        table: frozenset(row[1] for row in db.execute(f"PRAGMA table_info({table!r})"))
        for table in tables
        if not table.startswith("sqlite_")
    }


def _check_tables(db: sqlite3.Connection, schema: str) -> None:
    """Raise ForeignDatabase unless every table the file has in common with the schema has its columns.

    Reading the table list also makes SQLite read the header, so garbage shows up here, before WAL
    mode or the schema could change another program's file.
    """
    found = _columns(db)
    if not found:
        return  # a new, empty file
    expected = _expected_columns(schema)
    shared = set(found) & set(expected)
    if not shared or any(not expected[table] <= found[table] for table in shared):
        raise ForeignDatabase(f"its tables ({', '.join(sorted(found))}) are not wolfmem's")


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


