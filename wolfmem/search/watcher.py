"""watchdog events → debounced "something changed" → one indexer thread that syncs the index.

The watchdog handler only filters and signals. A single indexer thread owns index writes in the
daemon: after a quiet period it runs the (cheap, stat-based) sync, which finds every changed, new,
deleted or renamed file, whatever sequence of events an editor's save produced. A periodic
reconcile runs the same sync as a safety net for lost events, and re-arms the observer when the
vault folder itself was deleted and recreated.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from wolfmem.core.syncnames import is_conflict_copy
from wolfmem.storage.vault import INDEXED_DIRS, Vault, is_indexable

log = logging.getLogger(__name__)

MAX_DEBOUNCE_SECONDS = 1.0
RETRY_SECONDS = (0.5, 1, 2, 5, 10, 30)


def is_relevant(vault: Vault, path: str, is_directory: bool = False) -> bool:
    """Whether an event path may change what the index holds (a note, or a folder that holds notes)."""
    try:
        rel = os.path.relpath(path, vault.root).replace(os.sep, "/")
    except ValueError:
        return False
    if rel == "." or rel.startswith(".."):
        return rel == "."
    top = rel.split("/", 1)[0]
    if top not in INDEXED_DIRS:
        return False
    if "/" not in rel or is_directory:
        # A folder event (created, moved, deleted subfolder) can carry notes with it.
        return not any(part.startswith(".") for part in rel.split("/"))
    return is_indexable(rel) or is_conflict_copy(rel)


class _Handler(FileSystemEventHandler):
    def __init__(self, vault: Vault, changed: Callable[[], None]) -> None:
        self._vault = vault
        self._changed = changed

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        if any(path and is_relevant(self._vault, os.fsdecode(path), event.is_directory) for path in paths):
            self._changed()


class ChangeFeed:
    """A watchdog observer over the vault that calls back on each relevant event."""

    def __init__(self, vault: Vault, on_change: Callable[[], None] | None = None) -> None:
        self.vault = vault
        self._on_change = on_change
        self._observer: BaseObserver | None = None
        self._root_id: tuple[int, int] | None = None

    def start(self) -> None:
        """Start watching (idempotent)."""
        if self._observer is None:
            self._arm()

    def stop(self) -> None:
        """Stop watching and join the observer thread."""
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)

    @property
    def healthy(self) -> bool:
        """Whether events are flowing: the observer runs and still watches the current vault folder."""
        observer = self._observer
        return observer is not None and observer.is_alive() and _identity(str(self.vault.root)) == self._root_id

    def rearm_if_needed(self) -> None:
        """Watch again when the vault folder was replaced or the observer died."""
        if self._observer is not None and not self.healthy and _identity(str(self.vault.root)) is not None:
            log.warning("vault folder %s was replaced or the watcher stopped; watching it again", self.vault.root)
            self._arm()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()

    def _arm(self) -> None:
        self.stop()
        observer = Observer()
        observer.schedule(_Handler(self.vault, self._changed), str(self.vault.root), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._root_id = _identity(str(self.vault.root))


class Watcher:
    """Keeps one vault's index in sync with its files while running (the daemon's indexer)."""

    def __init__(
        self,
        vault: Vault,
        sync: Callable[[], object],
        debounce_seconds: float = 0.1,
        reconcile_seconds: float = 300.0,
        due: Callable[[], float | None] | None = None,
    ) -> None:
        """`due`, if given, says in how many seconds a sync has work to do with no event to announce it
        (a displaced version that becomes quiet; see storage/displaced.py), or None for no such work."""
        self.vault = vault
        self._due = due
        self.feed = ChangeFeed(vault, self.notify)
        self._sync = sync
        self._debounce = debounce_seconds
        self._reconcile = reconcile_seconds
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._last_event = 0.0
        self._thread: threading.Thread | None = None
        self.syncs = 0
        self.last_error: str | None = None

    def start(self) -> None:
        """Start the observer and the indexer thread (idempotent)."""
        if self._thread is not None:
            return
        self.feed.start()
        # A first reconcile covers edits made before the observer was watching.
        self._wake.set()
        self._thread = threading.Thread(target=self._run, name="wolfmem-indexer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching, let the indexer finish its current sync, and join both threads."""
        self._stopping.set()
        self._wake.set()
        self.feed.stop()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self._thread = None

    def notify(self) -> None:
        """Signal that something in the vault changed."""
        self._last_event = time.monotonic()
        self._wake.set()

    # -- internals ------------------------------------------------------------
    def _run(self) -> None:
        failures = 0
        while not self._stopping.is_set():
            woke = self._wake.wait(timeout=self._timeout())
            if self._stopping.is_set():
                break
            if woke:
                self._settle()
            self._wake.clear()
            self.feed.rearm_if_needed()
            try:
                self._sync()
                self.syncs += 1
                self.last_error = None
                failures = 0
            except Exception as exc:  # the daemon's edge: log, record, and retry with backoff
                failures += 1
                delay = RETRY_SECONDS[min(failures, len(RETRY_SECONDS)) - 1]
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.error("index sync failed (%s); retrying in %s s", self.last_error, delay)
                if self._stopping.wait(delay):
                    break
                self._wake.set()

    def _timeout(self) -> float:
        """How long to wait for an event before syncing anyway."""
        due = None
        if self._due is not None:
            try:
                due = self._due()
            except Exception as exc:  # the daemon's edge: the periodic reconcile still runs
                log.warning("could not tell when the next displaced version is due (%s)", exc)
        # A little past the moment, so the version is quiet for the whole grace period when looked at.
        return self._reconcile if due is None else min(self._reconcile, due + 0.05)

    def _settle(self) -> None:
        """Wait until events have been quiet for the debounce period (at most MAX_DEBOUNCE_SECONDS)."""
        started = time.monotonic()
        while not self._stopping.is_set():
            quiet_for = time.monotonic() - self._last_event
            if quiet_for >= self._debounce or time.monotonic() - started >= MAX_DEBOUNCE_SECONDS:
                return
            self._stopping.wait(self._debounce - quiet_for)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino
