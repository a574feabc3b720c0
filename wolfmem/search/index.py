"""The fact-level full-text index: what is written to it and what is read from it.

Whoosh is imported only in `search` (`index`, `folder`, `segments`, `schema`, `scoring`, `deleting`) and the stemmers.
"""

from __future__ import annotations

import functools
import shutil
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from whoosh import index as whoosh_index
from whoosh import query as wq

from wolfmem.errors import DatabaseDamaged, VaultBusy, storage_error
from wolfmem.search import deleting, rowdiff, scoring
from wolfmem.search.adding import FactAdder
from wolfmem.search.folder import IndexFolder
from wolfmem.search.ids import IdCache
from wolfmem.search.increment import Change
from wolfmem.search.lines import FileLines, LineMaps
from wolfmem.search.neighbours import run_of
from wolfmem.search.schema import (
    FIELD_WEIGHTS,
    BulkPart,
    FactDoc,
    Filters,
    IndexHit,
    Placed,
    fact_analyzer,
    filter_query,
    hit,
    path_of,
    split_sources,
)
from wolfmem.search.segments import WORKER_SCRATCH, abandon, stored_fields
from wolfmem.storage.catalog import Catalog, DocRow, ManifestEntry

Part = TypeVar("Part", bound=BulkPart)

# Extra hits fetched so that facts a crashed writer left behind (not in the catalog) can be dropped.
_ORPHAN_SLACK = 5
_POOL_MB = 16
# Filter and mask document sets kept per searcher (a vault's searches use a handful).
_MASKS = 16


class FactIndex:
    """A Whoosh index of facts; its folder (`IndexFolder`) rebuilds itself when missing, corrupt or of an old schema."""

    def __init__(self, directory: Path, lock: Callable[[], AbstractContextManager[object]] | None = None) -> None:
        self._folder = IndexFolder(directory, lock)
        # Segments never change, so their postings and the searcher's filter masks are kept between searches.
        self._postings = scoring.PostingCache()
        self._masks_of: object = None
        self._masks: dict[str, np.ndarray] = {}
        self._frequencies_of: object = None
        self._frequencies: dict[tuple[str, str], int] = {}
        self._lines = LineMaps()
        self._ids = IdCache()
        # The line maps the last search placed its hits by, and the snapshot it ran in.
        self._pool_lines: tuple[int | None, dict[str, FileLines]] = (None, {})

    # -- lifecycle (the folder's) ---------------------------------------------
    @property
    def directory(self) -> Path:
        """The index folder."""
        return self._folder.directory

    @property
    def catalog(self) -> Catalog | None:
        """Where each fact stands (its line and digest) and what the index last saw of each file."""
        return self._folder.catalog

    def open(self) -> None:
        """Open the index, creating an empty one when it is missing or unusable."""
        self._folder.open()

    def reset(self) -> None:
        """Drop everything and start from an empty index (the caller re-indexes)."""
        self._folder.reset()

    def release_readers(self) -> None:
        """Close the cached searcher (its segment readers); the next read opens a fresh one."""
        self._folder.release_readers()

    def close(self) -> None:
        """Release the searcher and the index handle."""
        self._folder.close()

    def snapshot(self) -> AbstractContextManager[None]:
        """Within this block every read uses one searcher, checked for freshness once on entry."""
        return self._folder.snapshot()

    # -- writing --------------------------------------------------------------
    def manifest(self) -> dict[str, ManifestEntry]:
        """What the index last saw of each file (shared by every process)."""
        self.open()
        assert self.catalog is not None
        try:
            return self.catalog.manifest()
        except DatabaseDamaged as exc:
            self._folder.rebuild_damaged(str(exc))  # every sync starts here, so the index heals at the next search
        assert self.catalog is not None
        return self.catalog.manifest()

    def writing(self) -> AbstractContextManager[object]:
        """Hold the index's write lock (shared by every process of the vault) for a block of reads and a commit."""
        return self._folder.lock()

    def replace_files(
        self,
        docs_by_path: Mapping[str, Sequence[FactDoc]],
        removed: Iterable[str],
        entries: Mapping[str, ManifestEntry] | None = None,
        unless_changed: Mapping[str, ManifestEntry] | None = None,
    ) -> set[str]:
        """Make the index hold exactly these facts for these paths and none for removed paths.

        Only facts whose indexed fields changed are written to Whoosh; line shifts only touch the
        catalog. The Whoosh commit comes first, so the catalog never claims facts the index lacks.
        With `unless_changed` (what the caller read each file against), a path whose manifest entry
        another writer changed since is left alone: the paths left are returned, for a fresh look.
        """
        self.open()
        assert self.catalog is not None
        # Worked out before the lock (writers of other files wait for it), checked under it.
        planned = {path: rowdiff.plan(docs, *self.catalog.entry_rows(path)) for path, docs in docs_by_path.items()}
        with self.writing():
            self.open()
            assert self._folder.ix is not None and self.catalog is not None
            removed = set(removed)
            superseded: set[str] = set()
            now = self.catalog.manifest()
            if unless_changed is not None:
                superseded = {path for path in {*planned, *removed, *(entries or {})}
                              if now.get(path) != unless_changed.get(path)}
                planned = {path: commit for path, commit in planned.items() if path not in superseded}
                entries = {path: entry for path, entry in (entries or {}).items() if path not in superseded}
                removed -= superseded
            for path, commit in planned.items():
                if not commit.current(now.get(path)):
                    planned[path] = rowdiff.plan(docs_by_path[path], now.get(path), self.catalog.doc_rows(path))
            self._replace(planned, removed, entries)
            return superseded

    def apply_change(self, path: str, change: Change, entry: ManifestEntry, expected: str) -> bool:
        """Apply a file's line-diff change (`search.increment`) if the index holds revision `expected`, else False."""
        with self.writing():
            self.open()
            assert self._folder.ix is not None and self.catalog is not None
            if self.catalog.revision(path) != expected:
                return False  # another commit indexed another version meanwhile: nothing written
            if change.removed or change.added:
                self._write(set(), {*change.removed, *(doc.doc_id for doc in change.added)}, list(change.added))
            rows = [DocRow(doc.doc_id, doc.line, doc.digest) for doc in change.added]
            return self.catalog.commit_shift(path, entry, expected, change.removed, change.after_line, change.delta,
                                             rows)

    def _replace(
        self,
        planned: Mapping[str, rowdiff.FileCommit],
        removed: set[str],
        entries: Mapping[str, ManifestEntry] | None,
    ) -> None:
        assert self._folder.ix is not None and self.catalog is not None
        stale = {doc_id for commit in planned.values() for doc_id in commit.stale}
        added = [doc for commit in planned.values() for doc in commit.added]
        if removed or stale or added:
            self._write(removed, stale | {doc.doc_id for doc in added}, added)
        changes: dict[str, ManifestEntry | None] = {path: None for path in removed}
        changes.update(entries or {})
        self.catalog.commit(changes, {path: commit.rows for path, commit in planned.items()},
                            writes={path: commit.writes for path, commit in planned.items()})

    def _write(self, paths: set[str], doc_ids: set[str], docs: list[FactDoc]) -> None:
        assert self._folder.ix is not None
        try:
            # Segments as separate files: a reader then opens them in place, where a compound segment is
            # copied into memory whole by every reader that opens it (13 ms and megabytes at 100k facts).
            # A small posting pool: Whoosh spills a bigger batch to disk rather than growing the process
            # (its default 128 MB pool left a daemon at 300 MB after one in-process sync of 12k facts).
            writer = self._folder.ix.writer(timeout=30.0, compound=False, limitmb=_POOL_MB)
        except whoosh_index.LockError:
            # Index writes happen under the index lock, so a live process holds this one by mistake.
            raise VaultBusy(f"the index at {self.directory} stayed locked for 30 s; try again") from None
        except OSError as exc:
            # A writer that failed after taking its lock holds it until collected: clearing the failed
            # frames lets go of it now, not at some later garbage collection.
            traceback.clear_frames(exc.__traceback__)
            raise storage_error(exc, "write the index at", self.directory) from None
        with self._folder.reading():  # a deletion and a merge read the segments already there
            try:
                deleting.delete(writer, paths, doc_ids, self._folder.current_searcher, self._ids)
                FactAdder(writer).add_all(docs)
                writer.commit()
            except BaseException as exc:
                abandon(writer)
                if isinstance(exc, OSError):
                    raise storage_error(exc, "write the index at", self.directory) from None
                raise

    def add_segments(self, build: Callable[[], list[Part]]) -> list[Part]:
        """Add the segments that `build` has other processes write into the index folder, in one commit.

        The index's write lock is held while `build` runs, so no commit can clean their files away.
        Files a part indexed lose their old facts; files it found gone (entry None) are dropped.
        """
        with self.writing():
            return self._add_segments(build)

    def _add_segments(self, build: Callable[[], list[Part]]) -> list[Part]:
        self.open()
        assert self._folder.ix is not None and self.catalog is not None
        writer = self._folder.ix.writer(timeout=30.0, compound=False)
        with self._folder.reading():  # deleting the files' old facts reads the postings already there
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
        """The index terms (lower-cased, stop words dropped, stemmed) of a text, in order; each word analysed once."""
        return [term for word in text.split() for term in _word_terms(word)]

    def terms_in(self, text: str) -> set[str]:
        """The set of index terms of a piece of text, each distinct word analysed once and remembered."""
        return {term for word in set(text.split()) for term in _word_terms(word)}

    def search(
        self,
        terms: Mapping[str, float],
        filters: Filters = Filters(),
        limit: int = 10,
        weights: Mapping[str, float] = FIELD_WEIGHTS,
        *,
        by_id: bool = False,
    ) -> list[IndexHit]:
        """The stored facts `ranked` finds, best first."""
        with self.snapshot():
            return self.stored(self.ranked(terms, filters, limit, weights, by_id=by_id))

    def ranked(
        self,
        terms: Mapping[str, float],
        filters: Filters = Filters(),
        limit: int = 10,
        weights: Mapping[str, float] = FIELD_WEIGHTS,
        bonus: Mapping[str, float] | None = None,
        *,
        by_id: bool = False,
    ) -> list[Placed]:
        """Facts matching any of the weighted terms (OR), best first under BM25F, at their lines; no text read.

        A `bonus` term selects nothing: a chosen fact holding it gains its value (times the field's weight).
        `by_id`: the hits' lines are looked up by their ids (one query) instead of from their files' line
        maps, which a caller asking no neighbours (`near_all`) does not need: a save's duplicate search
        meets some 30 files, most of whose maps it would read whole (the same lines either way).
        """
        if not terms:
            return []
        clauses = [
            scoring.Clause(field, term, weight * boost)
            for term, boost in terms.items()
            for field, weight in weights.items()
            if weight > 0
        ]
        extra = [scoring.Clause(field, term, weight * value)
                 for term, value in (bonus or {}).items() for field, weight in weights.items() if weight > 0]
        searcher = self._folder.current_searcher()
        with self._folder.reading():
            chosen, mask = split_sources(lambda source: self.doc_frequency("source", source), filters)
            wanted = filter_query(chosen)
            best = scoring.best(searcher, self._postings, clauses, limit + _ORPHAN_SLACK,
                                self._docs(searcher, wanted), self._docs(searcher, mask), extra)
            ids = self._ids.of(searcher)
        found = [(number, score, doc_id, path_of(doc_id))
                 for (number, score), doc_id in zip(best, ids.doc_ids([number for number, _ in best]), strict=True)
                 if doc_id is not None]
        assert self.catalog is not None
        if by_id:
            line_of = self.catalog.lines([doc_id for _, _, doc_id, _ in found])
        else:
            maps = self._lines.of(self.catalog, (path for *_, path in found))
            self._pool_lines = (self._folder.snapshot_id(), maps)
            line_of = {doc_id: line for _, _, doc_id, path in found
                       if (line := maps[path].line_of.get(doc_id)) is not None}
        placed = [Placed(number, doc_id, path, line, score) for number, score, doc_id, path in found
                  if (line := line_of.get(doc_id)) is not None]  # else a crashed writer's leftover
        return placed[:limit]

    def stored(self, placed: Sequence[Placed]) -> list[IndexHit]:
        """The stored facts of ranked or fetched ones, with their lines and scores (read in the same snapshot)."""
        searcher = self._folder.current_searcher()
        with self._folder.reading():
            found = stored_fields(searcher, [one.number for one in placed])
        return [hit(result, one.score, one.line) for result, one in zip(found, placed, strict=True)]

    def _docs(self, searcher, query: wq.Query | None) -> np.ndarray | None:
        """The documents a filter or mask query matches, kept for as long as this searcher is current."""
        if query is None:
            return None
        if self._masks_of is not searcher:
            self._masks_of, self._masks = searcher, {}
        key = repr(query)
        if key not in self._masks:
            if len(self._masks) >= _MASKS:
                self._masks.pop(next(iter(self._masks)))
            self._masks[key] = scoring.docs_mask(searcher, query)
        return self._masks[key]

    def _placed(self, results: Sequence[tuple[Mapping[str, Any], float]]) -> list[IndexHit]:
        """Hits at their current lines; facts the catalog does not know (a crashed writer's) are dropped."""
        assert self.catalog is not None
        lines = self.catalog.lines([result["doc_id"] for result, _ in results])
        return [hit(result, score, lines[result["doc_id"]]) for result, score in results if result["doc_id"] in lines]

    def near_all(self, hits: Sequence[Placed], span: int) -> dict[str, list[tuple[str, int]]]:
        """Each hit's neighbours (id, current line): the facts up to `span` lines away in its run of lines.

        Within one snapshot the line maps the ranking placed its hits by are used again.
        """
        assert self.catalog is not None
        paths = {one.path for one in hits}
        of, maps = self._pool_lines
        if of is None or of != self._folder.snapshot_id() or not paths <= maps.keys():
            maps = self._lines.of(self.catalog, paths)
        return {one.doc_id: run_of(maps[one.path].fact_at, one.line, span) for one in hits}

    def fetch(self, lines: Mapping[str, int]) -> dict[str, Placed]:
        """The facts with these ids (score 0), at the lines given; ids no longer indexed are left out."""
        searcher = self._folder.current_searcher()
        with self._folder.reading():
            ids = self._ids.of(searcher)
        return {doc_id: Placed(number, doc_id, path_of(doc_id), lines[doc_id], 0.0)
                for doc_id, number in ids.live_numbers(list(lines)).items()}

    def count(self, filters: Filters = Filters()) -> int:
        """How many facts pass the filters (all the index holds by default; a filter's documents are kept)."""
        searcher = self._folder.current_searcher()
        with self._folder.reading():
            mask = self._docs(searcher, filter_query(filters))
            return int(mask.sum()) if mask is not None else searcher.doc_count()

    def doc_frequency(self, field: str, term: str) -> int:
        """How many facts hold a term in a field (remembered for as long as the searcher is current)."""
        searcher = self._folder.current_searcher()
        if self._frequencies_of is not searcher:
            self._frequencies_of, self._frequencies = searcher, {}
        key = (field, term)
        if key not in self._frequencies:
            with self._folder.reading():
                self._frequencies[key] = searcher.doc_frequency(field, term)
        return self._frequencies[key]

    def iter_facts(self, filters: Filters = Filters()) -> Iterator[IndexHit]:
        """Every stored fact passing the filters, in no particular order."""
        with self._folder.reading():
            hits = self._folder.current_searcher().search(filter_query(filters) or wq.Every(), limit=None)
            placed = self._placed([(result, 0.0) for result in hits])
        yield from placed

    def first_facts(self, filters: Filters, limit: int) -> list[IndexHit]:
        """The first facts passing the filters in date, file and line order."""
        # Lines live in the catalog, not in Whoosh, so the order within a file is made after the search.
        with self._folder.reading():
            hits = self._folder.current_searcher().search(
                filter_query(filters) or wq.Every(), sortedby=["date", "path"], limit=None)
            placed = self._placed([(result, 0.0) for result in hits])
        return sorted(placed, key=lambda hit: (hit.date, hit.path, hit.line))[:limit]


_ANALYZER = fact_analyzer()


@functools.lru_cache(maxsize=65536)
def _word_terms(word: str) -> tuple[str, ...]:
    """The index terms of one whitespace-free word (the analyzer never joins words across spaces)."""
    return tuple(token.text for token in _ANALYZER(word))
