"""The fact-level full-text index. Only it and `segments` import whoosh (besides the shared stemmer)."""

from __future__ import annotations

import contextlib
import json
import logging
import pickle
import shutil
import struct
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TypeVar

from tenacity import (
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)
from whoosh import index as whoosh_index
from whoosh import query as wq
from whoosh.filedb.filetables import FileFormatError
from whoosh.searching import Hit
from whoosh.writing import IndexingError

from wolfmem.errors import DatabaseDamaged, IndexDamaged, IndexUnavailable, VaultBusy, storage_error
from wolfmem.search.schema import (
    FIELD_WEIGHTS,
    BulkPart,
    FactDoc,
    Filters,
    IndexHit,
    fact_analyzer,
    fields,
    filter_query,
    hit,
    split_sources,
    whoosh_schema,
)
from wolfmem.search.segments import (
    WORKER_SCRATCH,
    MappedStorage,
    open_searcher,
    refreshed,
)
from wolfmem.storage.catalog import Catalog, DocRow, ManifestEntry
from wolfmem.storage.db import ASIDE, move_aside

log = logging.getLogger(__name__)

Part = TypeVar("Part", bound=BulkPart)

# 9: code lines are indexed, dotted words also by their parts, and text is composed (NFC) before it
# is split into words.
SCHEMA_VERSION = 9
_VERSION_FILE = "wolfmem-schema.json"
_CATALOG_FILE = "catalog.sqlite"
# Extra hits fetched so that facts a crashed writer left behind (not in the catalog) can be dropped.
_ORPHAN_SLACK = 5
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
_POOL_MB = 16
# What Whoosh raises when it reads damaged files (as opposed to files another process is replacing).
_CORRUPT = (
    whoosh_index.IndexError, TypeError, ValueError, EOFError, struct.error, pickle.UnpicklingError, FileFormatError,
)


class FactIndex:
    """A Whoosh index of facts that rebuilds itself when missing, corrupt or of an old schema."""

    def __init__(self, directory: Path, lock: Callable[[], AbstractContextManager[object]] | None = None) -> None:
        self.directory = directory
        self._ix: whoosh_index.Index | None = None
        self._identity: tuple[int, int] | None = None
        self._searcher = None
        self.analyzer = fact_analyzer()
        # Held while a missing or corrupt index is recreated, so two processes never rebuild at once.
        self._lock = lock or contextlib.nullcontext
        self.catalog: Catalog | None = None
        self._pinned = None
        # Why the index on disk was found damaged, if it was: it is moved aside, not deleted.
        self._damage: str | None = None

    # -- lifecycle ------------------------------------------------------------
    def open(self) -> None:
        """Open the index, creating an empty one when it is missing or unusable."""
        if self._ix is not None:
            if self._marker_identity() == self._identity:
                return
            # Deleted or rebuilt underneath us (by the user or another process): let go of it.
            log.warning("index at %s was deleted or rebuilt; reopening it", self.directory)
            self.close()
        if self._open_existing():
            return
        with self._lock():
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
        self._ix, self._searcher, self._identity, self.catalog = ix, searcher, identity, catalog
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
        self._ix = MappedStorage(str(self.directory)).create_index(whoosh_schema())
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

    def _rebuild_damaged(self, damage: str) -> None:
        """Start over from an empty index after finding it damaged while in use (the next sync fills it)."""
        with self._lock():
            self.close()
            if self._marker_identity() == self._identity:  # not already rebuilt by another process
                self._damage = damage
                self._create()
        self.open()

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """Whoosh work that meets damaged segment files moves the index aside and raises IndexDamaged.

        Opening a searcher reads each segment's terms, not its postings or field lengths: a postings
        file cut short shows up only when a search or a deletion reads it.
        """
        try:
            yield
        except _CORRUPT as exc:
            damage = f"{type(exc).__name__}: {exc}"
            self._rebuild_damaged(damage)
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
        self._ix = None

    # -- writing --------------------------------------------------------------
    def manifest(self) -> dict[str, ManifestEntry]:
        """What the index last saw of each file (shared by every process)."""
        self.open()
        assert self.catalog is not None
        try:
            return self.catalog.manifest()
        except DatabaseDamaged as exc:
            self._rebuild_damaged(str(exc))  # every sync starts here, so the index heals at the next search
        assert self.catalog is not None
        return self.catalog.manifest()

    def replace_files(
        self,
        docs_by_path: Mapping[str, Sequence[FactDoc]],
        removed: Iterable[str],
        entries: Mapping[str, ManifestEntry] | None = None,
    ) -> None:
        """Make the index hold exactly these facts for these paths and none for removed paths.

        Only facts whose indexed fields changed are written to Whoosh; line shifts only touch the
        catalog. The Whoosh commit comes first, so the catalog never claims facts the index lacks.
        """
        self.open()
        assert self._ix is not None and self.catalog is not None
        removed = set(removed)
        stale: set[str] = set()
        added: list[FactDoc] = []
        rows: dict[str, list[DocRow]] = {}
        for path, docs in docs_by_path.items():
            old = self.catalog.doc_rows(path)
            kept: dict[str, DocRow] = {}
            for doc in docs:
                if doc.doc_id in kept:
                    continue  # Whoosh would keep both copies of a key added twice in one writer.
                kept[doc.doc_id] = DocRow(doc.doc_id, doc.line, doc.digest)
                before = old.pop(doc.doc_id, None)
                if before is None or before.digest != kept[doc.doc_id].digest:
                    added.append(doc)
            stale.update(old)
            rows[path] = list(kept.values())
        if removed or stale or added:
            self._write(removed, stale | {doc.doc_id for doc in added}, added)
        changes: dict[str, ManifestEntry | None] = {path: None for path in removed}
        changes.update(entries or {})
        self.catalog.commit(changes, rows)

    def _write(self, paths: set[str], doc_ids: set[str], docs: list[FactDoc]) -> None:
        assert self._ix is not None
        try:
            # Segments as separate files: a reader then opens them in place, where a compound segment is
            # copied into memory whole by every reader that opens it (13 ms and megabytes at 100k facts).
            # A small posting pool: Whoosh spills a bigger batch to disk rather than growing the process
            # (its default 128 MB pool left a daemon at 300 MB after one in-process sync of 12k facts).
            writer = self._ix.writer(timeout=30.0, compound=False, limitmb=_POOL_MB)
        except whoosh_index.LockError:
            # Index writes happen under the vault lock, so a live process holds this one by mistake.
            raise VaultBusy(f"the index at {self.directory} stayed locked for 30 s; try again") from None
        except OSError as exc:
            # A writer that failed after taking its lock holds it until collected: clearing the failed
            # frames lets go of it now, not at some later garbage collection.
            traceback.clear_frames(exc.__traceback__)
            raise storage_error(exc, "write the index at", self.directory) from None
        with self._reading():  # a deletion and a merge read the segments already there
            try:
                gone = [wq.Term("path", path) for path in paths] + [wq.Term("doc_id", doc_id) for doc_id in doc_ids]
                if gone:
                    writer.delete_by_query(wq.Or(gone))  # one reader for every deletion, not one per term
                for doc in docs:
                    writer.add_document(**fields(doc))
                writer.commit()
            except BaseException as exc:
                _abandon(writer)
                if isinstance(exc, OSError):
                    raise storage_error(exc, "write the index at", self.directory) from None
                raise

    def add_segments(self, build: Callable[[], list[Part]]) -> list[Part]:
        """Add the segments that `build` has other processes write into the index folder, in one commit.

        The index's write lock is held while `build` runs, so no commit can clean their files away.
        Files a part indexed lose their old facts; files it found gone (entry None) are dropped.
        """
        self.open()
        assert self._ix is not None and self.catalog is not None
        writer = self._ix.writer(timeout=30.0, compound=False)
        with self._reading():  # deleting the files' old facts reads the postings already there
            try:
                parts = build()
                rows = {path: part_rows for part in parts for path, part_rows in part.rows.items()}
                entries = {path: entry for part in parts for path, entry in part.entries.items()}
                gone = [wq.Term("path", path) for path, entry in entries.items() if entry is None or path in rows]
                if gone:
                    writer.delete_by_query(wq.Or(gone))
                segments = [part.segment for part in parts if part.segment is not None]
            except BaseException:
                writer.cancel()
                raise
        # A merge policy that merges nothing and lists the new segments: Whoosh's documented hook.
        writer.commit(mergetype=lambda _writer, kept: [*kept, *segments])
        for scratch in self.directory.glob(f"{WORKER_SCRATCH}*"):  # left by a worker that was killed
            shutil.rmtree(scratch, ignore_errors=True)
        self.catalog.commit(entries, rows)
        return parts

    # -- reading --------------------------------------------------------------
    def analyse(self, text: str) -> list[str]:
        """The index terms (lower-cased, stop words dropped, stemmed) of a piece of text."""
        return [token.text for token in self.analyzer(text)]

    def search(
        self,
        terms: Mapping[str, float],
        filters: Filters = Filters(),
        limit: int = 10,
        weights: Mapping[str, float] = FIELD_WEIGHTS,
    ) -> list[IndexHit]:
        """Facts matching any of the weighted terms (OR), best first under BM25F."""
        if not terms:
            return []
        clauses = [
            wq.Term(field, term, boost=weight * boost)
            for term, boost in terms.items()
            for field, weight in weights.items()
            if weight > 0
        ]
        searcher = self._current_searcher()
        query = wq.Or(clauses)
        with self._reading():
            return self._search(searcher, query, filters, limit)

    def _search(self, searcher, query: wq.Or, filters: Filters, limit: int) -> list[IndexHit]:
        chosen, mask = split_sources(searcher, filters)
        # A tree of union matchers scoring every posting: for a segment under 5,000 facts Whoosh
        # would pick its array matcher, which zeroes a 2,048-slot array in Python per block of
        # documents, and its block-skipping (`optimize`) can loop forever when float rounding makes
        # a union's sum and its parts disagree. Search p50 at 10k: 4.3 -> 2.6 ms; 100k unchanged.
        query.matcher_type = wq.Or.DEFAULT_MATCHER
        results = searcher.search(
            query, limit=limit + _ORPHAN_SLACK, filter=filter_query(chosen), mask=mask, optimize=False
        )
        return self._placed([(result, result.score) for result in results])[:limit]

    def _placed(self, results: list[tuple[Hit, float]]) -> list[IndexHit]:
        """Hits at their current lines; facts the catalog does not know (a crashed writer's) are dropped."""
        assert self.catalog is not None
        lines = self.catalog.lines([result["doc_id"] for result, _ in results])
        return [
            hit(result, score, lines[result["doc_id"]])
            for result, score in results
            if result["doc_id"] in lines
        ]

    def count(self) -> int:
        """How many facts the index holds."""
        with self._reading():
            return self._current_searcher().doc_count()

    def doc_frequency(self, field: str, term: str) -> int:
        """How many facts hold a term in a field."""
        with self._reading():
            return self._current_searcher().doc_frequency(field, term)

    def iter_facts(self, filters: Filters = Filters()) -> Iterator[IndexHit]:
        """Every stored fact passing the filters, in no particular order."""
        with self._reading():
            hits = self._current_searcher().search(filter_query(filters) or wq.Every(), limit=None)
            placed = self._placed([(result, 0.0) for result in hits])
        yield from placed

    def first_facts(self, filters: Filters, limit: int) -> list[IndexHit]:
        """The first facts passing the filters in date, file and line order."""
        # Lines live in the catalog, not in Whoosh, so the order within a file is made after the search.
        with self._reading():
            hits = self._current_searcher().search(
                filter_query(filters) or wq.Every(), sortedby=["date", "path"], limit=None)
            placed = self._placed([(result, 0.0) for result in hits])
        return sorted(placed, key=lambda hit: (hit.date, hit.path, hit.line))[:limit]

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Within this block every read uses one searcher, checked for freshness once on entry.

        A search asks the index many small questions (counts, term frequencies, hits); checking
        the disk for another process's commit before each of them would cost more than the search.
        """
        if self._pinned is not None:
            yield
            return
        self._pinned = self._current_searcher()
        try:
            yield
        finally:
            self._pinned = None

    def _current_searcher(self):
        """A searcher that sees the latest commit, from any process."""
        if self._pinned is not None:
            return self._pinned
        self.open()
        assert self._ix is not None
        with self._reading():  # another process's commit may bring a damaged segment
            if self._searcher is not None and not self._retry(self._searcher.up_to_date):
                self._searcher = self._retry(lambda: refreshed(self._ix, self._searcher, FIELD_WEIGHTS))
            if self._searcher is None:
                self._searcher = self._retry(lambda: open_searcher(self._ix, FIELD_WEIGHTS))
        return self._searcher

    @staticmethod
    def _retry(opener):
        """Run an open that may race another process's commit (Whoosh's _MAIN_N.toc vanishes briefly)."""
        try:
            return _OPEN_RETRY(opener)
        except _VANISHED as exc:
            raise IndexUnavailable(f"the search index cannot be opened: {exc}; run `wolfmem reindex`") from None


def _abandon(writer) -> None:
    """Let go of a writer whose work or commit failed, above all of its write lock.

    A commit that fails half-way (a full disk) leaves the writer unable to cancel; its lock would then
    stay held until the object is collected, and every index write meanwhile would fail.
    """
    try:
        writer.cancel()
        return
    except (OSError, ValueError, IndexingError) as exc:
        log.info("index writer could not cancel cleanly (%s); releasing its lock", exc)
    lock = writer.writelock
    if lock is not None and lock.fd is not None:
        with contextlib.suppress(OSError):
            lock.release()
    with contextlib.suppress(OSError):
        writer._tempstorage.destroy()



