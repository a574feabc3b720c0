"""Writes that reach a displaced version: merged into the live file once quiet, then the version is deleted.

A program that opened a note before wolfmem's exchange swapped a new version in (nano writing in
place, vim without a backup, emacs after its first save, `cmd >> people.md`, `tee -a`) still holds the
old inode and writes into it. The writer keeps that inode under a hidden name next to the file,
`.people.md.wolfmem-displaced-<revision>-<token>`, and records the bytes it held in the state db.
Once nothing has written to it for `GRACE_SECONDS`, the next sync in any process (the daemon's
watcher, an MCP call, the next CLI command) settles it:

- untouched (it still holds what it held): deleted;
- written to: a three-way merge puts what was written there into the live file (base: what it held;
  theirs: what it holds now; ours: the live file with wolfmem's writes since), through the writer,
  with the cause "displaced write"; the lines put back are reported; then it is deleted.

Kept files are found by their names on disk too, so one whose record was lost (a full state folder,
a crash) is still settled; without a record, its base is taken as empty, and the merge keeps every
line of both sides. A version whose file is gone (renamed or deleted by the person) waits for it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from wolfmem.core.markdown import split_lines
from wolfmem.core.merge import merge3
from wolfmem.errors import StorageError
from wolfmem.storage.exchange import DISPLACED_MARK, displaced_parts
from wolfmem.storage.vault import content_hash
from wolfmem.storage.writer import Cause, Edit, VaultWriter

log = logging.getLogger(__name__)

# How long a kept version must go unwritten before it is settled: an in-place save (nano, `>>`) takes
# milliseconds; a program writing a large file in pieces pauses far less than this between them.
GRACE_SECONDS = 2.0
# The folders where a kept version without a record is looked for by name (the others have records).
STRAY_FOLDERS = ("knowledge", "episodes")


@dataclass(frozen=True)
class PutBack:
    """Lines a program wrote to a displaced version of `rel`, now merged back at these line numbers."""

    rel: str
    lines: tuple[int, ...]

    def describe(self) -> str:
        """The sentence the log, status and the next agent call show."""
        where = f"#L{self.lines[0]}" + (f"–{self.lines[-1]}" if len(self.lines) > 1 else "")
        return (f"{len(self.lines)} line(s) written to {self.rel} while wolfmem replaced it "
                f"were merged back at {self.rel}{where}")


@dataclass(frozen=True)
class _Pending:
    rel: str  # the kept version, vault-relative
    target: str  # the file it was displaced from
    base: bytes | None  # what it held when displaced (None: no record)


class Displaced:
    """Settles the displaced versions the writer kept, in any process."""

    def __init__(self, writer: VaultWriter, grace: float = GRACE_SECONDS) -> None:
        self.writer = writer
        self.grace = grace

    def due(self) -> float | None:
        """Seconds until the next kept version may be settled (0: now); None when none is pending."""
        waits = [max(0.0, self.grace - quiet) for _, quiet in self._quiet(self._pending(strays=False))]
        return min(waits) if waits else None

    def settle(self, *, strays: bool = False) -> list[PutBack]:
        """Merge or delete every kept version that has been quiet for the grace period; what was put back.

        strays=True also looks for kept versions by name in STRAY_FOLDERS (a full sync does).
        """
        put_back = []
        for pending, quiet in self._quiet(self._pending(strays)):
            if quiet < self.grace:
                continue
            try:
                done = self._settle_one(pending)
            except (OSError, StorageError) as exc:
                log.warning("could not settle %s yet (%s); the next sync tries again", pending.rel, exc)
                continue
            if done is not None:
                log.warning("%s", done.describe())
                put_back.append(done)
        return put_back

    # -- internals ------------------------------------------------------------------------------
    def _pending(self, strays: bool) -> list[_Pending]:
        recorded = self.writer.state.displaced()
        found = {rel: _Pending(rel, target, base) for rel, (target, base) in recorded.items()}
        if strays:
            for folder in STRAY_FOLDERS:
                with contextlib.suppress(OSError):
                    for rel in self.writer.vault.names(folder, f".*{DISPLACED_MARK}*"):
                        parts = displaced_parts(rel.rpartition("/")[2])
                        if parts is not None and rel not in found:
                            found[rel] = _Pending(rel, f"{folder}/{parts[0]}", None)
        return list(found.values())

    def _quiet(self, pending: Iterable[_Pending]) -> list[tuple[_Pending, float]]:
        """Each kept version still on disk, with how long since anything changed it (its ctime moves on rename too)."""
        now, out = time.time(), []
        for item in pending:
            try:
                found = os.stat(self.writer.vault.root / item.rel, follow_symlinks=False)
            except FileNotFoundError:
                self._forget(item)
                continue
            except OSError:
                continue
            out.append((item, now - max(found.st_mtime, found.st_ctime)))
        return out

    def _settle_one(self, item: _Pending) -> PutBack | None:
        """Merge one quiet kept version into its file, or delete it if untouched; None when nothing came back."""
        held = self.writer.vault.read_bytes(item.rel)
        base = item.base
        if base is None:
            parts = displaced_parts(item.rel.rpartition("/")[2])
            base = held if parts is not None and content_hash(held) == parts[1] else b""
        if held == base:
            self._delete(item)
            return None
        if not self.writer.vault.scan([item.target]):
            return None  # the person renamed or deleted the file: the version waits for it
        theirs, original = held.decode("utf-8", errors="replace"), base.decode("utf-8", errors="replace")

        def put_back(live: str) -> Edit[tuple[int, ...]] | None:
            merged = merge3(original, live, theirs).text
            return None if merged == live else Edit(merged, _new_lines(live, merged))

        written = self.writer.edit(item.target, put_back, cause=Cause.DISPLACED, composed=False)
        self._delete(item)
        return PutBack(item.target, written.detail) if written.changed and written.detail else None

    def _delete(self, item: _Pending) -> None:
        with contextlib.suppress(FileNotFoundError), self.writer.vault.spot(item.rel) as spot:
            os.unlink(spot.name, dir_fd=spot.folder)
        self._forget(item)

    def _forget(self, item: _Pending) -> None:
        with contextlib.suppress(StorageError):
            self.writer.state.drop_displaced(item.rel)


def _new_lines(before: str, after: str) -> tuple[int, ...]:
    """The 1-based numbers of the lines of `after` that `before` does not have (as many times as they repeat)."""
    missing = Counter(line.rstrip("\r\n") for line in split_lines(after))
    missing.subtract(line.rstrip("\r\n") for line in split_lines(before))
    out = []
    for number, line in enumerate(split_lines(after), 1):
        key = line.rstrip("\r\n")
        if missing[key] > 0 and key.strip():
            missing[key] -= 1
            out.append(number)
    return tuple(out)
