"""Locks shared by the threads and processes of one machine: taken in turn, waited for a bounded time.

Each lock is a file (held with the OS's advisory lock, freed when its holder dies) plus a second file,
its *door*. A waiter first takes the door, then waits for the lock itself, then lets the door go. So a
holder that lets go and at once wants the lock again (a sync loop, a busy saver) must queue behind the
waiter holding the door, instead of winning every race against processes that poll: no waiter is
starved, whatever the others do. Threads of one process share one re-entrant lock in front of the
files, so a thread that holds a lock can take it again (a write nested in a write).

The vault has three kinds (`Vault.lock`): one per file, held around each write of that file; the
index's, held around each commit to the search index; and the whole vault's, held by a rebuild.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import filelock

from wolfmem.errors import VaultBusy, storage_error

_POLL = 0.002
_REGISTRY: dict[str, threading.RLock] = {}
_REGISTRY_GUARD = threading.Lock()
# How many times each thread holds each lock: only the outermost hold touches the files.
_DEPTH = threading.local()


class TimedOut(VaultBusy):
    """A lock stayed held by others for the whole wait."""


def _thread_lock(path: str) -> threading.RLock:
    with _REGISTRY_GUARD:
        return _REGISTRY.setdefault(path, threading.RLock())


def _file_lock(path: str) -> filelock.BaseFileLock:
    return filelock.FileLock(path, thread_local=False, is_singleton=True, preserve_lock_file=True)


@contextlib.contextmanager
def hold(path: Path, timeout: float, what: str) -> Iterator[None]:
    """Hold the lock at `path` for the block, waiting at most `timeout` s (TimedOut names `what` and the fix)."""
    key = str(path)
    depth: dict[str, int] = _DEPTH.__dict__.setdefault("held", {})
    deadline = time.monotonic() + timeout
    mutex = _thread_lock(key)
    if not mutex.acquire(timeout=max(timeout, 0.0)):
        raise TimedOut(f"{what} was busy in this process for {timeout:.0f} s; try again")
    try:
        if depth.get(key):
            depth[key] += 1
            try:
                yield
            finally:
                depth[key] -= 1
            return
        door, lock = _file_lock(key + ".door"), _file_lock(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _acquire(door, deadline, timeout, what)
            try:
                _acquire(lock, deadline, timeout, what)
            finally:
                door.release()
        except OSError as exc:
            raise storage_error(exc, "take the write lock", key) from None
        depth[key] = 1
        try:
            yield
        finally:
            depth[key] = 0
            lock.release()
    finally:
        mutex.release()


def _acquire(lock: filelock.BaseFileLock, deadline: float, timeout: float, what: str) -> None:
    try:
        lock.acquire(timeout=max(deadline - time.monotonic(), 0.0), poll_interval=_POLL)
    except filelock.Timeout:
        raise TimedOut(
            f"{what} was held by another process for {timeout:.0f} s; check `wolfmem status` and try again"
        ) from None
