"""What one SQLite connection last read or wrote of a table, kept while no other connection has written.

SQLite's `data_version` changes whenever another connection commits (this connection's own commits
leave it be), so data this connection read or wrote stays the database's for as long as the number
holds. The connection itself is held with the number, so one replaced after damage never passes for it.
A change to the kept data is made inside the write transaction that makes it in the database; it counts
only once that transaction has landed (`landed`), and a transaction that fails never lands.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


def data_version(db: sqlite3.Connection) -> int:
    """A number that changes whenever another connection commits to the database."""
    return int(db.execute("PRAGMA data_version").fetchone()[0])


class Kept(Generic[T]):
    """Kept data of one store; every method is called under the store's lock of its connection."""

    def __init__(self, empty: Callable[[], T]) -> None:
        self._empty = empty
        self.data = empty()
        self._valid_at: tuple[sqlite3.Connection, int] | None = None
        self._begun = 0

    def valid(self, db: sqlite3.Connection | None) -> bool:
        """Whether the kept data is still what the database holds."""
        return db is not None and self._valid_at == (db, data_version(db))

    def begin(self, db: sqlite3.Connection) -> tuple[tuple[sqlite3.Connection, int], int]:
        """Inside a transaction, before the data is read or changed: start afresh if it is stale.

        Returns the mark to hand to `landed` once the transaction has committed.
        """
        # Inside a write transaction no other commit comes before its end; a read one reads a snapshot
        # at least this new, and any later commit moves the number on, so `valid` refuses the data.
        at = (db, data_version(db))
        if at != self._valid_at:
            self.data = self._empty()
        self._valid_at = None
        self._begun += 1
        return at, self._begun

    def landed(self, mark: tuple[tuple[sqlite3.Connection, int], int]) -> None:
        """The transaction `begin` marked has committed: the data is valid again, unless another began since."""
        at, begun = mark
        if begun == self._begun:
            self._valid_at = at
