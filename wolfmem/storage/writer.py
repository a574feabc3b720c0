"""The one way a vault file is written: read, work out the edit, then compare-and-exchange under the lock.

Every write to a vault file — a save, an episode append, a curated or audited rewrite, the curation
log, the digest, an audit report, a restore, the lease — is `VaultWriter.edit(rel, transform)`:

1. read the file's bytes (no lock);
2. work out the new text with `transform(current_text)` (no lock: a busy file slows only its own writers);
3. take the file's own lock (`Vault.lock(rel)`: writes to other files never wait for it); keep `<file>.bak`
   when asked; swap the new bytes in only if the file still holds the bytes read
   (`exchange.replace_if_unchanged`); record history, provenance and the reindex;
4. if a writer only appended lines in between, redo the edit on top of theirs at once, still holding the
   lock; after any other write, let go of the lock, back off, and redo the edit on top of theirs.

For the notes people edit (`is_indexable`), step 3 also keeps the version it displaced, under a hidden
name next to the file, with the bytes it held recorded in the state db: a program that opened the file
before the exchange writes there afterwards, and `storage/displaced.py` merges what it wrote. And the
new file never reuses an inode number the file had lately, so every write changes the file's identity.

A person's editor does not take wolfmem's lock, so step 3 is what keeps their write: it is never
overwritten with a version computed from older bytes. One error policy: an OS fault is a
`StorageError` naming the file and the fix, and nothing is half-written; a failed reindex after a
landed write is logged and remembered (`last_index_error`), and the next sync catches up.
"""

from __future__ import annotations

import enum
import errno
import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Generic, TypeVar

from wolfmem.cancellation import checkpoint, completing
from wolfmem.core.markdown import content_changes
from wolfmem.errors import (
    StorageError,
    UsageError,
    VaultBusy,
    WolfmemError,
    storage_error,
)
from wolfmem.storage.confine import Spot
from wolfmem.storage.exchange import atomic_write, displaced_name, read_only, replace_if_unchanged
from wolfmem.storage.history import History, Version
from wolfmem.storage.keeping import KeptVersions
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import Vault, content_hash, is_indexable

log = logging.getLogger(__name__)

T = TypeVar("T")
# How long a write may take in all, waiting for its file's lock included: it lands or fails (VaultBusy)
# within this, plus at most the index lock's wait (storage/vault.py) for its reindex.
CAS_SECONDS = 9.0
# The folders whose every version history keeps: the bases a merge of an outside write needs.
VERSIONED = ("knowledge/", "episodes/")
# How many repairs of an outside write one write waits for before it gives up (VaultBusy): more than any person makes.
MAX_REPAIRS_PER_WRITE = 8
# How long a knowledge file that had content may read as missing or empty before a write believes it:
# vim renames the file away before writing a new one, nano truncates it then writes. About 2 s in all.
SETTLE_DELAYS = (0.01, 0.02, 0.04, 0.08, 0.15, 0.2, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25)


class Cause(enum.StrEnum):
    """Why wolfmem wrote a file; recorded in history."""

    SAVE = "save"
    EPISODE = "episode"
    CURATION = "curation"
    AUDIT = "audit"
    RESTORE = "restore"
    LOG = "log"
    DIGEST = "digest"
    REPORT = "report"
    LEASE = "lease"
    PROVENANCE = "provenance"
    UPDATE = "update"
    FORGET = "forget"
    ARCHIVE = "archive"
    DISPLACED = "displaced write"  # what a program wrote to a version after wolfmem swapped it out, merged back
    MERGE = "put back"  # lines an outside write dropped, put back on top of it (storage/reconcile.py)


# What a cancelled call was about to do, as the server's log says it ("stopped: cancelled before saving").
_DOING = {Cause.SAVE: "saving", Cause.EPISODE: "logging"}


class Stage(enum.StrEnum):
    """Instants inside a write that `on_stage` observers hear about (diagnostics and the race tests)."""

    READ = "read"  # the file was read; the edit is being worked out from those bytes
    BACKED_UP = "backed-up"  # `<file>.bak` holds the version about to be replaced; the exchange is next


@dataclass(frozen=True)
class Edit(Generic[T]):
    """What a transform wants the file to become, plus anything the caller wants back (a line number)."""

    text: str
    detail: T | None = None


@dataclass(frozen=True)
class Written(Generic[T]):
    """The outcome of one write: the bytes now on disk, the bytes they replaced, and the transform's detail."""

    rel: str
    data: bytes
    previous: bytes
    detail: T | None
    changed: bool
    # What could not be recorded after the write landed (history, provenance, the index): it is on file all the same.
    warnings: tuple[str, ...] = ()

    @property
    def revision(self) -> str:
        """The content hash of what is on disk now."""
        return content_hash(self.data)


Transform = Callable[[str], "Edit[T] | None"]


class VaultWriter:
    """Writes the files of one vault, for every caller in this process."""

    def __init__(
        self,
        vault: Vault,
        state: StateStore,
        history: History,
        clock: Callable[[], datetime],
        reindex: Callable[[str, bytes], None] | None = None,
    ) -> None:
        self.vault = vault
        self.state = state
        self.history = history
        self.clock = clock
        self.reindex = reindex
        self.kept = KeptVersions(vault, state, history)
        self.on_stage: Callable[[Stage, str], None] | None = None
        # Called with a knowledge file's bytes when they are not the newest version history holds (an
        # outside write); True when it rewrote the file (storage/reconcile.py puts dropped lines back).
        self.on_foreign: Callable[[str, bytes], bool] | None = None
        # How a write waits for a file an editor has away for a moment (injectable: tests count polls).
        self.pause: Callable[[float], None] = time.sleep
        self.last_index_error: str | None = None
        self.last_bookkeeping_error: str | None = None

    def edit(
        self,
        rel: str,
        transform: Transform[T],
        *,
        cause: Cause,
        backup: bool = False,
        composed: bool = True,
        on_commit: Callable[[Written[T]], None] | None = None,
        decode: Callable[[bytes], str] | None = None,
    ) -> Written[T]:
        """Apply `transform` to the file's current text and land the result atomically, never over an editor.

        `transform` gets the current text ("" when the file is missing) and returns an Edit, or None to
        write nothing; it may run several times, once per retry, and may raise to abort. `composed`
        says the lines it adds are wolfmem's own (not a restore of old text). `on_commit` runs under
        the lock right after the write lands. `decode` turns the current bytes into the text given
        to `transform`; by default a file that is not UTF-8 is refused (UsageError), as a person's file
        must never be replaced by a guess at its text.
        """
        self.vault.resolve(rel)
        deadline = time.monotonic() + CAS_SECONDS
        expected = base = self._read_settled(rel, cause)
        for attempt in _attempts(deadline):
            if attempt:
                expected = base = self._read_settled(rel, cause)
            self._stage(Stage.READ, rel)
            wanted = transform(decode(base) if decode is not None else _decode(base, rel))
            if wanted is None:
                return Written(rel, expected, expected, None, False)
            data = wanted.text.encode("utf-8")
            if data == expected:
                return Written(rel, expected, expected, wanted.detail, False)
            try:
                # The folder is opened beneath the vault's root (missing folders made there), so the
                # temp file, the rename and the `.bak` cannot follow a folder swapped for a link out.
                # Only this file's lock: a write to another file never waits for this one.
                with self.vault.lock(rel, timeout=max(deadline - time.monotonic(), 0.1)), \
                        self.vault.spot(rel, create=True) as spot:
                    # A call cancelled before it holds the lock writes nothing; once past here it completes,
                    # a Ctrl+C meanwhile included (held until the write and its bookkeeping are done).
                    checkpoint(_DOING.get(cause, "writing"))
                    with completing():
                        while True:
                            found = self._exchange(rel, spot, expected, data, backup)
                            if found is None:
                                written = Written(rel, data, expected, wanted.detail, True)
                                written = replace(written, warnings=self._landed(written, cause, composed))
                                if on_commit is not None:
                                    on_commit(written)
                                return written
                            current = found[0]
                            if (found[0] != found[1] or not _appended(expected, current) or time.monotonic() > deadline
                                    or (not expected and self._is_foreign(rel, current))):
                                break  # an editor's new file where none was read is checked first (_read_settled)
                            # Only appended to since the read (a log, a script): redone here at once, still holding the
                            # lock, since backing off lets a writer that appends every few ms win every race.
                            self._stage(Stage.READ, rel)
                            wanted = transform(decode(current) if decode is not None else _decode(current, rel))
                            if wanted is None:
                                return Written(rel, current, current, None, False)
                            expected, data = current, wanted.text.encode("utf-8")
                            if data == expected:
                                return Written(rel, expected, expected, wanted.detail, False)
            except OSError as exc:
                raise storage_error(exc, "write", rel) from None
            expected, base = found
            if expected != base:
                # No atomic exchange here, and an editor wrote in place in the last instant: the file
                # holds ours, theirs is `base`; the retry redoes the edit on theirs against ours.
                continue
        raise VaultBusy(f"{rel} kept changing while wolfmem tried to write it (for {CAS_SECONDS:.0f} s); try again")

    def _exchange(self, rel: str, spot: Spot, expected: bytes, data: bytes, backup: bool) -> tuple[bytes, bytes] | None:
        """One compare-and-exchange under the file's lock (see `replace_if_unchanged`), keeping what it displaces.

        A file whose mode has no write bit is refused (StorageError), nothing written: the rename would
        replace it all the same, and a person who made it read-only meant it.
        """
        if read_only(spot):
            raise StorageError(f"cannot write {rel}: it is read-only (its mode has no write bit); "
                               f"make it writable (chmod u+w) to let wolfmem change it", rel, errno.EACCES)
        if backup and expected:
            atomic_write(spot.sibling(spot.name + ".bak"), expected)
            self._stage(Stage.BACKED_UP, rel)
        keep = is_indexable(rel)
        keep_as = displaced_name(spot.name, content_hash(expected)) if keep else None
        avoid = self._recent_inodes(rel) if keep else set()
        found = replace_if_unchanged(spot, expected, data, keep_as=keep_as, avoid=avoid)
        if found is None and keep:
            self._note_identity(rel, spot, keep_as, expected)
        return found

    def append(self, rel: str, block: Callable[[str], str], *, cause: Cause) -> Written[None]:
        """Append what `block(current_text)` returns to the end of a file."""
        return self.edit(rel, lambda text: Edit(text + block(text)), cause=cause)

    def put(self, rel: str, text: str, *, cause: Cause, backup: bool = True) -> Written[None]:
        """Make a generated file (a digest, a report, the lease) hold `text`; what it replaces goes to `.bak`."""
        return self.edit(rel, lambda _current: Edit(text), cause=cause, backup=backup)

    # -- inside the lock, after the exchange ----------------------------------------------------
    def _landed(self, written: Written[T], cause: Cause, composed: bool) -> tuple[str, ...]:
        rel = written.rel
        warnings = []
        if rel.startswith(VERSIONED):
            try:
                self.history.record(rel, written.previous, written.data, cause.value, self.clock())
                if rel.startswith("knowledge/"):
                    added, removed = content_changes(written.previous.decode("utf-8", errors="replace"),
                                                     written.data.decode("utf-8"))
                    # Only lines wolfmem composed are its own: a hand line kept word for word stays a hand line.
                    self.state.update_snapshot(rel, added if composed else (), removed)
            except StorageError as exc:
                # The vault holds the new bytes, and they are the truth: a full or read-only state folder
                # loses this version's history and provenance (its new lines count as hand-written), not the write.
                self.last_bookkeeping_error = f"{rel}: {exc}"
                warnings.append(f"its history and provenance were not recorded ({exc})")
                log.warning("%s was written, but its history and provenance were not recorded (%s)", rel, exc)
        if self.reindex is not None and is_indexable(rel):
            try:
                self.reindex(rel, written.data)
                self.last_index_error = None
            except (OSError, WolfmemError) as exc:
                self.last_index_error = f"{rel}: {exc}"
                warnings.append(f"it was not re-indexed ({exc}); the next sync catches up")
                log.warning("%s was written but not re-indexed (%s); the next sync catches up", rel, exc)
        return tuple(warnings)

    def _recent_inodes(self, rel: str) -> set[int]:
        try:
            return self.kept.recent_inodes(rel)
        except StorageError as exc:  # the write goes on; only the inode guarantee is weaker this time
            self.last_bookkeeping_error = f"{rel}: {exc}"
            return set()

    def _note_identity(self, rel: str, spot: Spot, kept: str | None, held: bytes) -> None:
        try:
            self.kept.note(rel, spot, kept, held)
        except StorageError as exc:
            # Not recorded: the kept file is still found by its name (`displaced.py`), only its base is unknown.
            self.last_bookkeeping_error = f"{rel}: {exc}"
            log.warning("%s was written, but the version it displaced was not recorded (%s)", rel, exc)

    def _read_settled(self, rel: str, cause: Cause) -> bytes:
        """The file's bytes once no editor is mid-write, after any repair of an outside write that dropped lines.

        A repair is read back and checked again: an editor may have written its buffer over it at once.
        """
        for _repair in range(MAX_REPAIRS_PER_WRITE):
            data = self._read_present(rel)
            if not data or cause is Cause.MERGE or self.on_foreign is None or not self._is_foreign(rel, data):
                return data
            if not self.on_foreign(rel, data):
                return data  # an ordinary edit (now recorded), or one changed again: the exchange compares
        raise VaultBusy(f"{rel} kept being overwritten while wolfmem put its lines back; try again")

    def _read_present(self, rel: str) -> bytes:
        """The file's bytes, waiting out an editor's moment with the file renamed away or truncated."""
        data = self._read(rel)
        if not data and self._had_content(rel):
            for delay in SETTLE_DELAYS:
                self.pause(delay)
                data = self._read(rel)
                if data:
                    break
            else:
                log.info("%s stayed missing or empty for %.1f s; writing it anew", rel, sum(SETTLE_DELAYS))
        return data

    def _had_content(self, rel: str) -> bool:
        latest = self._latest(rel)
        return latest is not None and latest.size > 0

    def _is_foreign(self, rel: str, data: bytes) -> bool:
        latest = self._latest(rel)
        return latest is not None and latest.revision != content_hash(data)

    def _latest(self, rel: str) -> Version | None:
        """The newest version history holds of a versioned file (None: none, not versioned, or unreadable)."""
        try:
            return self.history.latest(rel) if rel.startswith(VERSIONED) else None
        except StorageError:
            return None

    def _read(self, rel: str) -> bytes:
        try:
            return self.vault.read_or_empty(rel)
        except OSError as exc:
            raise storage_error(exc, "read", rel) from None

    def _stage(self, stage: Stage, rel: str) -> None:
        if self.on_stage is not None:
            self.on_stage(stage, rel)


def _decode(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{rel} is not UTF-8 text; fix or move it, then try again") from None


def _appended(before: bytes, now: bytes) -> bool:
    """Whether `now` is `before` with whole lines added at the end, so no line of it was changed or dropped."""
    return len(now) > len(before) and now.startswith(before) and (not before or before.endswith(b"\n"))


def _attempts(deadline: float) -> Iterator[int]:
    """Attempt numbers for a compare-and-exchange write, backing off (outside the lock) while an editor is busy."""
    attempt = 0
    while True:
        yield attempt
        attempt += 1
        if time.monotonic() > deadline:
            return
        # An editor or sync tool writing in bursts settles faster if we stop racing it.
        time.sleep(min(0.001 * 2**attempt, 0.05) * random.uniform(0.5, 1.0))

