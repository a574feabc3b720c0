"""The index folder kept openable: its Whoosh index, catalog and current searcher, opened, refreshed,
and rebuilt (a damaged copy moved aside) when missing, damaged or of an old schema."""

from __future__ import annotations

import contextlib
import json
import logging
import pickle
import shutil
import struct
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from tenacity import (
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)
from whoosh import index as whoosh_index
from whoosh.filedb.filetables import FileFormatError

from wolfmem.errors import DatabaseDamaged, IndexDamaged, IndexUnavailable, storage_error
from wolfmem.search.schema import FIELD_WEIGHTS, whoosh_schema
from wolfmem.search.segments import MappedStorage, open_searcher, refreshed
from wolfmem.storage.catalog import Catalog
from wolfmem.storage.db import ASIDE, move_aside

log = logging.getLogger(__name__)

# 9: code lines are indexed, dotted words also by their parts, and text is composed (NFC) before it
# is split into words. 11: terms are Porter2 stems (core.tokens.stem), not Whoosh's Porter. 12: a fact's
# key keeps the case of its unit symbols (core.units: 10MB is not 10Mb).
SCHEMA_VERSION = 12
_VERSION_FILE = "wolfmem-schema.json"
_CATALOG_FILE = "catalog.sqlite"
_OPEN_ATTEMPTS = 25
# What an open raises while another process's commit replaces the table of contents: 2 ms, doubling to
# 100 ms, 25 attempts (about 2 s) before the index counts as unavailable.
_VANISHED = (FileNotFoundError, whoosh_index.EmptyIndexError)
_OPEN_RETRY = Retrying(
    retry=retry_if_exception_type(_VANISHED),
    stop=stop_after_attempt(_OPEN_ATTEMPTS),
    wait=wait_exponential(multiplier=0.002, max=0.1),
    reraise=True,
)
# What Whoosh raises when it reads damaged files (as opposed to files another process is replacing).
_CORRUPT = (
    whoosh_index.IndexError, TypeError, ValueError, EOFError, struct.error, pickle.UnpicklingError, FileFormatError,
)

class IndexFolder:
    """The Whoosh index and catalog in one folder, rebuilt when missing, corrupt or of an old schema."""

    def __init__(self, directory: Path, lock: Callable[[], AbstractContextManager[object]] | None = None) -> None:
        self.directory = directory
        self.ix: whoosh_index.Index | None = None
        self._identity: tuple[int, int] | None = None
        self._searcher = None
        # The index's write lock: held around each commit, and while a missing or corrupt index is
        # recreated, so two processes never rebuild at once.
        self.lock = lock or contextlib.nullcontext
        self.catalog: Catalog | None = None
        self._pinned = None
        self._snapshots = 0  # snapshots entered, so that reads can tell one from the next
        # Why the index on disk was found damaged, if it was: it is moved aside, not deleted.
        self._damage: str | None = None

    def open(self) -> None:
        """Open the index, creating an empty one when it is missing or unusable."""
        if self.ix is not None:
            if self._marker_identity() == self._identity:
                return
            # Deleted or rebuilt underneath us (by the user or another process): let go of it.
            log.warning("index at %s was deleted or rebuilt; reopening it", self.directory)
            self.close()
        if self._open_existing():
            return
        with self.lock():
            if self._open_existing():  # another process rebuilt it while we waited
                return
            if self.directory.exists():
                log.warning("index at %s is corrupt or of an old schema; rebuilding it", self.directory)
            else:
                log.info("creating the index at %s", self.directory)
            self._create()

    def _marker_identity(self) -> tuple[int, int] | None:
        try:
            stat = (self.directory / _VERSION_FILE).stat()
        except OSError:
            return None
        return stat.st_ino, stat.st_mtime_ns

    def _open_existing(self) -> bool:
        """Open the index if its schema marker is current and Whoosh can read it."""
        identity = self._marker_identity()
        try:
            version = json.loads((self.directory / _VERSION_FILE).read_text())["schema"]
        except (OSError, ValueError, KeyError, TypeError):
            return False
        if version != SCHEMA_VERSION:
            return False
        try:
            ix = self._retry(lambda: MappedStorage(str(self.directory)).open_index())
            # Opening a searcher reads every segment, so damaged segment files show up here too.
            searcher = self._retry(lambda: open_searcher(ix, FIELD_WEIGHTS))
        except IndexUnavailable:
            return False
        except (OSError, *_CORRUPT) as exc:
            log.warning("index at %s is corrupt (%s: %s)", self.directory, type(exc).__name__, exc)
            self._damage = f"{type(exc).__name__}: {exc}"
            return False
        try:
            catalog = Catalog(self.directory / _CATALOG_FILE)
        except DatabaseDamaged as exc:
            searcher.close()
            self._damage = str(exc)
            return False
        self.ix, self._searcher, self._identity, self.catalog = ix, searcher, identity, catalog
        return True

    def _create(self) -> None:
        try:
            self._make()
        except OSError as exc:
            raise storage_error(exc, "create the index at", self.directory) from None

    def _make(self) -> None:
        if self.directory.exists() and self._damage:
            self._set_aside()
        if self.directory.exists():
            shutil.rmtree(self.directory, ignore_errors=True)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.ix = MappedStorage(str(self.directory)).create_index(whoosh_schema())
        self.catalog = Catalog(self.directory / _CATALOG_FILE)
        # The marker comes last: an index without it is unfinished and gets rebuilt.
        (self.directory / _VERSION_FILE).write_text(json.dumps({"schema": SCHEMA_VERSION}))
        self._identity = self._marker_identity()

    def _set_aside(self) -> None:
        """Move a damaged index aside for a look (only the newest such copy is kept: the files can rebuild it)."""
        for old in self.directory.parent.glob(f"{self.directory.name}.{ASIDE}-*"):
            shutil.rmtree(old, ignore_errors=True)
        aside = move_aside(self.directory)
        log.warning("the index was damaged (%s); moved it aside to %s and rebuilt it from the files",
                    self._damage, aside)
        self._damage = None

    def rebuild_damaged(self, damage: str) -> None:
        """Start over from an empty index after finding it damaged while in use (the next sync fills it)."""
        with self.lock():
            self.close()
            if self._marker_identity() == self._identity:  # not already rebuilt by another process
                self._damage = damage
                self._create()
        self.open()

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Whoosh work that meets damaged segment files moves the index aside and raises IndexDamaged.

        Opening a searcher reads each segment's terms, not its postings or field lengths: a postings
        file cut short shows up only when a search or a deletion reads it.
        """
        try:
            yield
        except _CORRUPT as exc:
            damage = f"{type(exc).__name__}: {exc}"
            self.rebuild_damaged(damage)
            raise IndexDamaged(f"the search index was damaged ({damage}); it was moved aside and is "
                               "rebuilt from the files at the next sync") from exc

    def reset(self) -> None:
        """Drop everything and start from an empty index (the caller re-indexes)."""
        self.close()
        self._create()

    def release_readers(self) -> None:
        """Close the cached searcher (its segment readers); the next read opens a fresh one."""
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None

    def close(self) -> None:
        """Release the searcher and the index handle."""
        self.release_readers()
        if self.catalog is not None:
            self.catalog.close()
            self.catalog = None
        self.ix = None


    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Within this block every read uses one searcher, checked for freshness once on entry.

        A search asks the index many small questions (counts, term frequencies, hits); checking
        the disk for another process's commit before each of them would cost more than the search.
        """
        if self._pinned is not None:
            yield
            return
        self._pinned = self.current_searcher()
        self._snapshots += 1
        try:
            yield
        finally:
            self._pinned = None

    def snapshot_id(self) -> int | None:
        """Which snapshot the reads are in (None outside one): what one search read, the next re-reads."""
        return self._snapshots if self._pinned is not None else None

    def current_searcher(self):
        """A searcher that sees the latest commit, from any process."""
        if self._pinned is not None:
            return self._pinned
        self.open()
        assert self.ix is not None
        with self.reading():  # another process's commit may bring a damaged segment
            if self._searcher is not None and not self._retry(self._searcher.up_to_date):
                self._searcher = self._retry(lambda: refreshed(self.ix, self._searcher, FIELD_WEIGHTS))
            if self._searcher is None:
                self._searcher = self._retry(lambda: open_searcher(self.ix, FIELD_WEIGHTS))
        return self._searcher

    @staticmethod
    def _retry(opener):
        """Run an open that may race another process's commit (Whoosh's _MAIN_N.toc vanishes briefly)."""
        try:
            return opener()  # almost always: tenacity's machinery costs a tenth of a keyword search
        except _VANISHED:
            pass
        try:
            return _OPEN_RETRY(opener)
        except _VANISHED as exc:
            raise IndexUnavailable(f"the search index cannot be opened: {exc}; run `wolfmem reindex`") from None
