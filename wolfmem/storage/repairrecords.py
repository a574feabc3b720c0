"""The state store's records of what wolfmem did to files after outside writes (a part of `StateStore`).

- displaced: versions of files an exchange swapped out but kept, with the bytes each held then;
- inodes: the inode numbers each file had lately, which a new version of it must not take again;
- put_back: the lines (by hash) wolfmem put back after an editor dropped them, never put back twice;
- stale_buffers: versions written from an editor's stale buffer, lines put back over them;
- unchecked: files whose outside change is still to be checked (their lock was busy);
- affirmed: lines a save found already on file (its receipt says "duplicate"), until the next outside write;
- repairs: what was put back or archived as "removed by hand", for `status` and the next agent call.

The tables are created by `storage/state.py`, which holds the connection.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from wolfmem.storage.db import guarded

KEPT_REPAIRS = 200
# Inode numbers remembered per file: more than the saves an editor's buffer can sit through unnoticed
# in any test or bench (50 in a row), at a few bytes each.
RECENT_INODES = 64
# Stale buffers remembered per file: each is one write of a person's that lines were put back over.
RECENT_STALE_BUFFERS = 64


def line_hash(line: str) -> str:
    """The name a snapshot line goes by outside this machine: the vault log never repeats a fact's words."""
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:16]


class RepairRecords:
    """The repair tables' methods; mixed into `StateStore`, whose one connection they use."""

    _connect: Callable[..., AbstractContextManager[sqlite3.Connection]]

    # -- displaced versions and inode numbers (storage/displaced.py, storage/writer.py) ---------------
    @guarded
    def add_displaced(self, rel: str, path: str, base: bytes, prior: bytes = b"") -> None:
        """Remember a kept displaced file (vault-relative `rel`) of `path`, the bytes it held when displaced,
        and, when it was empty then, what the file last held before (a truncating writer emptied it)."""
        with self._connect() as db:
            db.execute("INSERT OR REPLACE INTO displaced VALUES (?, ?, ?, ?)", (rel, path, base, prior))

    @guarded
    def displaced(self, *, path: str | None = None, rels: Iterable[str] | None = None,
                  ) -> dict[str, tuple[str, bytes, bytes]]:
        """Every kept displaced file (of one file, or of these names): its rel → (the file it was displaced
        from, the bytes it held, its prior)."""
        query, args = "SELECT rel, path, base, prior FROM displaced", []
        if path is not None:
            query, args = query + " WHERE path = ?", [path]
        elif rels is not None:
            args = sorted(set(rels))
            query += f" WHERE rel IN ({','.join('?' * len(args))})"
        with self._connect(reading=True) as db:
            rows = db.execute(query, args).fetchall() if rels is None or args else []
        return {row[0]: (row[1], bytes(row[2]), bytes(row[3])) for row in rows}

    @guarded
    def displaced_names(self) -> dict[str, str]:
        """Every kept displaced file's rel → the file it was displaced from (none of the bytes, each a file's size)."""
        with self._connect(reading=True) as db:
            return dict(db.execute("SELECT rel, path FROM displaced").fetchall())

    @guarded
    def drop_displaced(self, rel: str) -> None:
        """Forget a displaced file (merged, or deleted)."""
        with self._connect() as db:
            db.execute("DELETE FROM displaced WHERE rel = ?", (rel,))

    @guarded
    def recent_inodes(self, path: str) -> set[int]:
        """The inode numbers a file had lately."""
        with self._connect(reading=True) as db:
            return {row[0] for row in db.execute("SELECT ino FROM inodes WHERE path = ?", (path,))}

    @guarded
    def note_inodes(self, path: str, inodes: Iterable[int]) -> None:
        """Remember inode numbers a file had, keeping the newest RECENT_INODES different ones."""
        with self._connect() as db:
            inodes = list(dict.fromkeys(inodes))
            # Each number once, at its newest place: the displaced file's number is usually recorded already.
            db.executemany("DELETE FROM inodes WHERE path = ? AND ino = ?", ((path, ino) for ino in inodes))
            db.executemany("INSERT INTO inodes (path, ino) VALUES (?, ?)", ((path, ino) for ino in inodes))
            db.execute(
                "DELETE FROM inodes WHERE path = ? AND seq NOT IN "
                "(SELECT seq FROM inodes WHERE path = ? ORDER BY seq DESC LIMIT ?)",
                (path, path, RECENT_INODES),
            )

    # -- put back and removed by hand ---------------------------------------------------------
    @guarded
    def put_back_hashes(self, path: str) -> set[str]:
        """Hashes of the lines wolfmem already put back once into a file."""
        with self._connect(reading=True) as db:
            rows = db.execute("SELECT hash FROM put_back WHERE path = ?", (path,)).fetchall()
        return {row[0] for row in rows}

    @guarded
    def note_put_back(self, path: str, put: Iterable[str], obeyed: Iterable[str]) -> None:
        """Remember lines put back into a file, and forget lines whose removal was obeyed (a later save is new)."""
        with self._connect() as db:
            db.executemany("DELETE FROM put_back WHERE path = ? AND hash = ?", ((path, line_hash(x)) for x in obeyed))
            db.executemany("INSERT OR IGNORE INTO put_back VALUES (?, ?)", ((path, line_hash(x)) for x in put))

    @guarded
    def note_stale_buffer(self, path: str, revision: str) -> None:
        """Remember that the version `revision` of a file was written from a stale buffer (the newest few kept)."""
        with self._connect() as db:
            db.execute("DELETE FROM stale_buffers WHERE path = ? AND revision = ?", (path, revision))
            db.execute("INSERT INTO stale_buffers (path, revision) VALUES (?, ?)", (path, revision))
            db.execute(
                "DELETE FROM stale_buffers WHERE path = ? AND seq NOT IN "
                "(SELECT seq FROM stale_buffers WHERE path = ? ORDER BY seq DESC LIMIT ?)",
                (path, path, RECENT_STALE_BUFFERS),
            )

    @guarded
    def is_stale_buffer(self, path: str, revision: str) -> bool:
        """Whether the version `revision` of a file was written from a stale buffer (`note_stale_buffer`)."""
        with self._connect(reading=True) as db:
            return db.execute("SELECT 1 FROM stale_buffers WHERE path = ? AND revision = ?",
                              (path, revision)).fetchone() is not None

    @guarded
    def note_affirmed(self, path: str, line: str) -> None:
        """Remember a line an agent's save was told is on file (a duplicate), until the next outside write."""
        with self._connect() as db:
            db.execute("INSERT OR IGNORE INTO affirmed VALUES (?, ?)", (path, line))

    @guarded
    def take_affirmed(self, path: str) -> set[str]:
        """The lines saves were told are on file in `path` since its last outside write, forgotten as they are read.

        Looked for without the write lock (every outside write asks, and there is seldom one); a line found
        is taken under it, by whichever process deletes it first.
        """
        with self._connect(reading=True) as db:
            rows = db.execute("SELECT line FROM affirmed WHERE path = ?", (path,)).fetchall()
        if not rows:
            return set()
        with self._connect() as db:
            return {line for (line,) in rows
                    if db.execute("DELETE FROM affirmed WHERE path = ? AND line = ?", (path, line)).rowcount}

    @guarded
    def note_unchecked(self, path: str) -> None:
        """Remember that a file's outside change is still to be checked for lines it dropped (its lock was busy)."""
        with self._connect() as db:
            db.execute("INSERT OR IGNORE INTO unchecked VALUES (?)", (path,))

    @guarded
    def unchecked(self) -> set[str]:
        """The files whose outside change is still to be checked (`note_unchecked`)."""
        with self._connect(reading=True) as db:
            return {row[0] for row in db.execute("SELECT path FROM unchecked").fetchall()}

    @guarded
    def clear_unchecked(self, path: str) -> None:
        """A file's outside change has been checked."""
        with self._connect() as db:
            db.execute("DELETE FROM unchecked WHERE path = ?", (path,))

    @guarded
    def add_repair(self, path: str, record: Mapping[str, Any]) -> None:
        """Record one put-back or removed-by-hand event (the newest KEPT_REPAIRS are kept)."""
        with self._connect() as db:
            db.execute("INSERT INTO repairs (path, record) VALUES (?, ?)", (path, json.dumps(record, sort_keys=True)))
            db.execute(
                "DELETE FROM repairs WHERE id NOT IN (SELECT id FROM repairs ORDER BY id DESC LIMIT ?)",
                (KEPT_REPAIRS,),
            )

    @guarded
    def repairs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest repair records, newest first."""
        with self._connect(reading=True) as db:
            rows = db.execute("SELECT record FROM repairs ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [json.loads(row[0]) for row in rows]

    @guarded
    def take_notices(self, paths: Iterable[str]) -> list[dict[str, Any]]:
        """Repairs of these files no agent call was told about yet, oldest first; each is handed out once."""
        wanted = sorted(set(paths))
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        # Looked for without the write lock (every save asks, and there is seldom one to tell); one
        # found is taken under it, by whichever process marks it told first.
        with self._connect(reading=True) as db:
            rows = db.execute(
                f"SELECT id, record FROM repairs WHERE told = 0 AND path IN ({marks}) ORDER BY id", wanted
            ).fetchall()
        if not rows:
            return []
        with self._connect() as db:
            taken = [row for row in rows
                     if db.execute("UPDATE repairs SET told = 1 WHERE id = ? AND told = 0", (row[0],)).rowcount]
        return [json.loads(row[1]) for row in taken]
