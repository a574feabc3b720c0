"""Searches that answered lexically although hybrid search is on, counted for `wolfmem status`.

A search falls back when its query gets no vector (the endpoint is down, slow, or backing off), and
partly when some of its candidates have no vector yet. Each process adds its count to the vector
store's record at most once per WRITE_EVERY seconds, so a burst of searches against a down endpoint
costs one write, and status in another process still sees it.
"""

from __future__ import annotations

import threading
import time

from wolfmem.semantic.store import VectorStore

WRITE_EVERY = 1.0


class Fallbacks:
    """Counts one process's fallen-back searches and hands them to the store, throttled."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._pending = 0
        self._written_at = -WRITE_EVERY
        self._written_reason = ""
        self._reason = ""

    def note(self, reason: str) -> None:
        """Count one search that fell back for `reason`."""
        with self._lock:
            self._pending += 1
            self._reason = reason
            now = time.monotonic()
            if reason == self._written_reason and now - self._written_at < WRITE_EVERY:
                return
            searches, self._pending = self._pending, 0
            self._written_at, self._written_reason = now, reason
        self.store.note_fallback(searches, reason, time.time())

    def flush(self) -> None:
        """Write the searches counted since the last write."""
        with self._lock:
            searches, self._pending = self._pending, 0
            reason = self._reason
        if searches:
            self.store.note_fallback(searches, reason, time.time())
