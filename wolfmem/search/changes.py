"""Which vault files changed since the index last looked, drained from an inotify queue at search time.

On Linux the kernel queues an inotify event for a write, a rename or a delete before that system
call returns. So a queue this process owns, read without blocking right before a search, names
every file written before the search began — by any process, editor or sync tool — and reading it
costs one system call when nothing changed. The syncer then re-reads exactly those files.

What inotify cannot see, and what is done about it:
- a queue overflow (more than `fs.inotify.max_queued_events` events between two searches), a new or
  moved folder, or the vault folder replaced: the next sync scans every file (`Pending.rescan`);
- writes through a shared memory map, and changes made by another machine on a network file system:
  they only reach the index at the daemon's periodic reconcile, as before;
- no inotify at all (macOS, Windows, or the per-user watch limit reached): `InotifyChanges.start`
  says so, and `Memory` stats every file before each search instead (exact, about 4 ms per 1,000 files).
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass, field

from wolfmem.core.syncnames import is_conflict_copy
from wolfmem.storage.vault import INDEXED_DIRS, Vault, is_indexable

try:  # Linux only; elsewhere the import fails and the stat scan is used
    import inotify_simple
except (ImportError, OSError, AttributeError):  # pragma: no cover - exercised only off Linux
    inotify_simple = None

log = logging.getLogger(__name__)


@dataclass
class Pending:
    """What the queue said since the last drain: files to re-read, or that everything must be scanned."""

    paths: set[str] = field(default_factory=set)
    rescan: bool = False
    conflicts: bool = False  # a sync engine's conflict copy arrived (merged by the next sync)

    def __bool__(self) -> bool:
        return self.rescan or bool(self.paths) or self.conflicts


class InotifyChanges:
    """One inotify queue over the vault's indexed folders, owned by this process and drained on demand."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self._inotify = None
        self._dirs: dict[int, str] = {}  # watch descriptor -> folder, vault-relative ("" for the root)
        self._root_id: tuple[int, int] | None = None
        self._rescan = True  # nothing is known until the first full scan

    @staticmethod
    def available() -> bool:
        """Whether this platform has inotify."""
        return inotify_simple is not None

    def start(self) -> bool:
        """Open the queue and watch every indexed folder; False (and nothing held) where that fails."""
        if self._inotify is not None:
            return True
        if inotify_simple is None:
            return False
        try:
            self._inotify = inotify_simple.INotify(nonblocking=True)
            self._arm()
        except (OSError, AttributeError) as exc:
            # EMFILE/ENOSPC: the per-user limits on inotify instances and watches; AttributeError: a
            # C library without inotify (the package installed where it does not belong).
            log.warning("cannot watch %s with inotify (%s); searches will stat every file", self.vault.root, exc)
            self.close()
            return False
        return True

    def close(self) -> None:
        """Close the queue (its watches go with it)."""
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None
        self._dirs.clear()

    def drain(self) -> Pending:
        """Everything queued until now; call it right before reading the index."""
        assert self._inotify is not None, "start() first"
        pending = Pending(rescan=self._rescan)
        self._rescan = False
        if _identity(self.vault.root) != self._root_id:
            pending.rescan = True  # the vault folder was replaced: watch the new one
        for event in self._inotify.read(timeout=0):
            self._note(event, pending)
        if pending.rescan:
            # Watch new folders before the caller scans, so nothing written after the scan is missed.
            self._arm()
            pending.paths.clear()
        return pending

    def failed(self, pending: Pending) -> None:
        """The caller could not act on `pending`: the next drain asks for a full scan instead."""
        if pending:
            self._rescan = True

    def _note(self, event, pending: Pending) -> None:
        mask = event.mask
        if event.wd == -1 or mask & _QUEUE_TROUBLE:
            pending.rescan = True  # overflow, or a watched folder itself went away
            return
        folder = self._dirs.get(event.wd)
        if folder is None:
            return  # a watch removed since the event was queued
        if mask & _IGNORED:
            del self._dirs[event.wd]
            return
        rel = f"{folder}/{event.name}" if folder else event.name
        if mask & _ISDIR:
            if _is_indexed_folder(rel):
                pending.rescan = True  # a folder arrived, left or moved: its notes did too
        elif is_indexable(rel):
            pending.paths.add(rel)
        elif is_conflict_copy(rel):
            pending.conflicts = True

    def _arm(self) -> None:
        """Watch the vault folder and every folder under the indexed ones that is not watched yet."""
        assert self._inotify is not None
        root = self.vault.root
        identity = _identity(root)
        if identity != self._root_id:
            for wd in list(self._dirs):
                with contextlib.suppress(OSError):  # already gone with its folder
                    self._inotify.rm_watch(wd)
            self._dirs.clear()
            self._root_id = identity
        if identity is None:
            return  # no vault folder right now; the next drain looks again
        watched = set(self._dirs.values())
        for rel in _folders(root):
            if rel not in watched:
                try:
                    wd = self._inotify.add_watch(str(root / rel) if rel else str(root), _FOLDER_EVENTS)
                except FileNotFoundError:
                    continue  # removed while we walked; its parent's event asks for a rescan
                self._dirs[wd] = rel


def _folders(root) -> list[str]:
    """The vault root and every visible folder under the indexed ones, vault-relative (symlinks followed once)."""
    found = [""]
    seen: set[str] = set()
    for top in INDEXED_DIRS:
        if not (root / top).is_dir():
            continue
        for current, dirs, _files in os.walk(root / top, followlinks=True):
            real = os.path.realpath(current)
            if real in seen:
                dirs[:] = []
                continue
            seen.add(real)
            dirs[:] = [name for name in dirs if not name.startswith(".")]
            found.append(os.path.relpath(current, root).replace(os.sep, "/"))
    return found


def _is_indexed_folder(rel: str) -> bool:
    parts = rel.split("/")
    return parts[0] in INDEXED_DIRS and not any(part.startswith(".") for part in parts)


def _identity(path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


if inotify_simple is not None:
    _flags = inotify_simple.flags
    # MODIFY, not just CLOSE_WRITE: a write counts once it returns, even while the file is still open.
    _FOLDER_EVENTS = (
        _flags.MODIFY | _flags.ATTRIB | _flags.CLOSE_WRITE | _flags.CREATE | _flags.DELETE
        | _flags.MOVED_FROM | _flags.MOVED_TO | _flags.DELETE_SELF | _flags.MOVE_SELF
        | _flags.ONLYDIR | _flags.EXCL_UNLINK
    )
    _QUEUE_TROUBLE = _flags.Q_OVERFLOW | _flags.DELETE_SELF | _flags.MOVE_SELF | _flags.UNMOUNT
    _IGNORED = _flags.IGNORED
    _ISDIR = _flags.ISDIR
