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
  with the cause "displaced write"; the lines put back are reported like any put-back (the log,
  `wolfmem status`, the next agent call touching the file: see `storage/reconcile.py`); then it is
  deleted. The merge keeps every line of both sides, so nothing in it needs the archive.

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from wolfmem.core.markdown import split_lines
from wolfmem.core.merge import merge3
from wolfmem.errors import StorageError, WolfmemError
from wolfmem.storage.exchange import DISPLACED_MARK, displaced_parts
from wolfmem.storage.keeping import KEEP_SECONDS
from wolfmem.storage.vault import content_hash
from wolfmem.storage.writer import Cause, Edit, VaultWriter

log = logging.getLogger(__name__)

# How long a kept version must go unwritten before it is settled: an in-place save (nano, `>>`) takes
# milliseconds; a program writing a large file in pieces pauses far less than this between them.
GRACE_SECONDS = KEEP_SECONDS
# The folders where a kept version without a record is looked for by name (the others have records).
STRAY_FOLDERS = ("knowledge", "episodes")


@dataclass(frozen=True)
class PutBack:
    """Lines a program wrote to a displaced version of `rel`, now merged back at these line numbers."""

    rel: str
    lines: tuple[int, ...]
    at: str

    @property
    def where(self) -> str:
        """The ref of the lines: file:knowledge/people.md#L40-L41."""
        first, last = self.lines[0], self.lines[-1]
        return f"file:{self.rel}#L{first}" + (f"-L{last}" if last != first else "")

    def message(self) -> str:
        """The sentence the log, status and the next agent call show."""
        many = len(self.lines) != 1
        return (f"{len(self.lines)} line{'s' if many else ''} an editor wrote while wolfmem replaced {self.rel} "
                f"{'were' if many else 'was'} merged back at {self.where}")

    def to_dict(self) -> dict[str, object]:
        """The repair record `wolfmem status` and the notices read (the shape of reconcile.Repair's)."""
        return {"kind": Cause.DISPLACED.value, "path": self.rel, "first": self.lines[0], "last": self.lines[-1],
                "count": len(self.lines), "at": self.at, "archived": "", "where": self.where,
                "message": self.message()}


@dataclass(frozen=True)
class _Pending:
    rel: str  # the kept version, vault-relative
    target: str  # the file it was displaced from
    base: bytes | None  # what it held when displaced (None: no record, or not read yet)
    prior: bytes = b""  # held empty (truncated): what the file last held before, which the merge keeps too
    recorded: bool = False  # the state db holds its record (its bytes are read once it is quiet)


class Displaced:
    """Settles the displaced versions the writer kept, in any process."""

    def __init__(self, writer: VaultWriter, clock: Callable[[], datetime], grace: float = GRACE_SECONDS) -> None:
        self.writer = writer
        self.clock = clock
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
        try:
            quiet = self._quiet(self._pending(strays))
        except StorageError as exc:
            log.warning("could not look for displaced versions (%s); the next sync tries again", exc)
            return []
        ready = self._recorded([pending for pending, quiet_for in quiet if quiet_for >= self.grace])
        for pending in ready:
            try:
                done = self._settle_one(pending)
                if done is not None:
                    log.warning("%s: %s", done.rel, done.message())
                    put_back.append(done)
                    self.writer.state.add_repair(done.rel, done.to_dict())
            except (OSError, WolfmemError) as exc:
                log.warning("could not settle %s yet (%s); the next sync tries again", pending.rel, exc)
        return put_back

    # -- internals ------------------------------------------------------------------------------
    def _pending(self, strays: bool) -> list[_Pending]:
        # Names only: a version's bytes (a whole file each) are read once it is quiet (`_recorded`), not by
        # every sync before every save while versions wait out their grace period.
        recorded = self.writer.state.displaced_names()
        found = {rel: _Pending(rel, target, None, recorded=True) for rel, target in recorded.items()}
        if strays:
            for folder in STRAY_FOLDERS:
                with contextlib.suppress(OSError):
                    for rel in self.writer.vault.names(folder, f".*{DISPLACED_MARK}*"):
                        parts = displaced_parts(rel.rpartition("/")[2])
                        if parts is not None and rel not in found:
                            found[rel] = _Pending(rel, f"{folder}/{parts[0]}", None)
        return list(found.values())

    def _recorded(self, ready: list[_Pending]) -> list[_Pending]:
        """The quiet versions with the bytes their records hold; one whose record went meanwhile is left."""
        wanted = [pending.rel for pending in ready if pending.recorded]
        if not wanted:
            return ready
        try:
            records = self.writer.state.displaced(rels=wanted)
        except StorageError as exc:
            log.warning("could not read displaced versions (%s); the next sync tries again", exc)
            return [pending for pending in ready if not pending.recorded]
        return [pending if not pending.recorded else replace(pending, base=records[pending.rel][1],
                                                             prior=records[pending.rel][2])
                for pending in ready if not pending.recorded or pending.rel in records]

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
        prior = item.prior.decode("utf-8", errors="replace")

        def put_back(live: str) -> Edit[tuple[int, ...]] | None:
            # A truncating writer's base is unknown (the file was empty when displaced) and the saves since
            # were built on the empty file: keep every line of what the file held before, of the live
            # file and of the writer's text (a merge from an empty base is their union, theirs first).
            ours = merge3("", live, prior).text if prior else live
            merged = merge3(original, ours, theirs).text
            return None if merged == live else Edit(merged, _new_lines(live, merged))

        written = self.writer.edit(item.target, put_back, cause=Cause.DISPLACED, composed=False)
        if self.writer.vault.read_bytes(item.rel) != held:
            # Written to again while merging: what it holds now is merged next time, from what was merged now.
            self.writer.state.add_displaced(item.rel, item.target, held)
        else:
            self._delete(item)
        if not (written.changed and written.detail):
            return None
        return PutBack(item.target, written.detail, self.clock().isoformat(timespec="seconds"))

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
