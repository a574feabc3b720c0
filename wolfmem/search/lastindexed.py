"""What this process last indexed of a few big files: the base of the next line-diff index update."""

from __future__ import annotations

import threading

from wolfmem.search.increment import Indexed

# Files remembered, and the facts they may hold together: two curated files at the size cap (512 kB,
# about 12k facts each) changing in turn must not evict each other's base. A fact's document is a
# few hundred bytes, so a busy daemon keeps a few MB, about 15 MB at most.
FILES = 8
MAX_FACTS = 30_000


class LastIndexed:
    """A bounded, thread-safe map of file → the text and documents this process last committed of it."""

    def __init__(self) -> None:
        self._files: dict[str, Indexed] = {}
        self._guard = threading.Lock()  # writes to different files index them from different threads

    def take(self, rel: str, revision: str | None = None) -> Indexed | None:
        """Remove and return what is remembered of rel (only if it is of `revision`, when given)."""
        with self._guard:
            found = self._files.pop(rel, None)
        return found if found is not None and revision in (None, found.revision) else None

    def keep(self, rel: str, indexed: Indexed) -> None:
        """Remember rel as just committed, forgetting the oldest files past the bounds."""
        with self._guard:
            self._files.pop(rel, None)
            self._files[rel] = indexed
            while len(self._files) > FILES or (
                len(self._files) > 1 and sum(len(kept.built) for kept in self._files.values()) > MAX_FACTS
            ):
                self._files.pop(next(iter(self._files)))
