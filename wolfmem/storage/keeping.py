"""The versions an exchange displaced, kept next to the file, and the inode numbers the file had lately.

A program that opened a note before wolfmem swapped a new version in still writes into the old inode;
the writer keeps that inode under a hidden name (`exchange.displaced_name`) and records here what it held,
so `storage/displaced.py` can merge what arrives there. The new file never reuses a recent inode number
(`recent_inodes`), so an editor comparing inode numbers always sees that the file changed.
"""

from __future__ import annotations

import contextlib
import os
import time

from wolfmem.storage.confine import Spot
from wolfmem.storage.history import History
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import Vault

# A version a write displaced is kept until nothing has written to it for this long (storage/displaced.py),
# and at most MAX_KEPT untouched ones of a file are kept at once (a burst of saves against a slow writer).
KEEP_SECONDS = 2.0
MAX_KEPT = 16


class KeptVersions:
    """Records and prunes the displaced versions and recent inodes of one vault's files (StorageError on faults)."""

    def __init__(self, vault: Vault, state: StateStore, history: History) -> None:
        self.vault = vault
        self.state = state
        self.history = history

    def recent_inodes(self, rel: str) -> set[int]:
        """The inode numbers rel had lately: a new version takes none of them."""
        return self.state.recent_inodes(rel)

    def note(self, rel: str, spot: Spot, kept: str | None, held: bytes) -> None:
        """Record the new inode and the displaced one (kept as `kept`, holding `held`), drop older untouched ones."""
        inodes = [os.stat(spot.name, dir_fd=spot.folder, follow_symlinks=False).st_ino]
        if kept is not None:
            try:
                inodes.append(os.stat(kept, dir_fd=spot.folder, follow_symlinks=False).st_ino)
            except FileNotFoundError:
                kept = None  # the filesystem could not keep it: the exchange deleted it, as before
        self.state.note_inodes(rel, inodes)
        if kept is None:
            return
        folder = rel.rpartition("/")[0]
        # Held empty: a writer truncated the file and has not written yet; what it held before is the
        # newest recorded version, which the merge must keep too (the save built on the empty file).
        prior = self._newest_recorded(rel) if not held else b""
        self.state.add_displaced(f"{folder}/{kept}", rel, held, prior)
        self._supersede(rel, spot, f"{folder}/{kept}")

    def _supersede(self, rel: str, spot: Spot, newest: str) -> None:
        """Delete older kept versions of rel nobody wrote to, once past the grace period or beyond MAX_KEPT.

        One within its grace period may still be held open by a writer about to write (nano on a slow
        disk truncates, then writes seconds later), so only the cap overrides the grace period.
        """
        now, untouched = time.time(), []
        for other, (path, base, _prior) in self.state.displaced(path=rel).items():
            if path != rel or other == newest or other.rpartition("/")[0] != newest.rpartition("/")[0]:
                continue
            name = other.rpartition("/")[2]
            try:
                found = os.stat(name, dir_fd=spot.folder, follow_symlinks=False)
                if self.vault.read_bytes(other) == base:
                    untouched.append((max(found.st_mtime, found.st_ctime), name, other))
            except FileNotFoundError:
                self.state.drop_displaced(other)
        untouched.sort()
        for number, (changed, name, other) in enumerate(untouched):
            if now - changed >= KEEP_SECONDS or len(untouched) - number >= MAX_KEPT:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=spot.folder)
                self.state.drop_displaced(other)

    def _newest_recorded(self, rel: str) -> bytes:
        """The newest version history holds of rel (b"" when none), before this write is recorded."""
        latest = self.history.latest(rel)
        return (self.history.data(latest.id) or b"") if latest is not None else b""
