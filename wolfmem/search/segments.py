"""How wolfmem opens Whoosh segments: through memory maps, with their lazily read files opened at
once, and refreshed keeping the readers of segments that did not change; and scratch space of its
own for each worker that writes a segment."""

from __future__ import annotations

import bisect
import contextlib
import logging
import mmap
import os
import secrets
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, BinaryIO, cast

from whoosh import index as whoosh_index
from whoosh import scoring
from whoosh.filedb.filestore import FileStorage
from whoosh.filedb.structfile import StructFile
from whoosh.reading import EmptyReader, IndexReader, MultiReader, SegmentReader
from whoosh.searching import Searcher
from whoosh.writing import IndexingError, SegmentWriter

from wolfmem.search.adding import FactAdder
from wolfmem.search.schema import FactDoc

log = logging.getLogger(__name__)

WORKER_SCRATCH = "wolfmem-worker-"


class MappedStorage(FileStorage):
    """The index folder, its segment files read through memory maps.

    A search reads a field length or a posting block at a time; from a plain file each is a seek
    and a read system call, from a map it is a slice of the page cache. Segment files are never
    changed in place (a commit writes new ones), so a map never sees a file shrink under it.
    """

    def open_file(self, name: str, **kwargs: Any) -> StructFile:
        if os.name != "posix":
            return super().open_file(name, **kwargs)  # a mapped file cannot be deleted on Windows
        with open(self._fpath(name), "rb") as handle:
            if os.fstat(handle.fileno()).st_size == 0:
                return super().open_file(name, **kwargs)
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        # StructFile only seeks, reads and tells, which a read-only map does like a binary file.
        return StructFile(cast(BinaryIO, mapped), name=name, **kwargs)


class WorkerStorage(FileStorage):
    """The index folder, with scratch space of this process's own.

    Every Whoosh writer keeps its scratch files in `<index>/MAIN.tmp` and deletes that folder when
    it finishes, which is right for one writer at a time but not for several workers at once.
    """

    def temp_storage(self, name: str | None = None) -> FileStorage:
        return super().temp_storage(f"{WORKER_SCRATCH}{os.getpid()}-{secrets.token_hex(4)}.tmp")


def open_searcher(ix: whoosh_index.Index, fields: Iterable[str]) -> Searcher:
    """A BM25F searcher over the latest commit, every segment primed (see prime)."""
    searcher = ix.searcher(weighting=_weighting())
    try:
        for reader, _ in searcher.reader().leaf_readers():
            prime(ix, reader, fields)
    except BaseException:
        searcher.close()
        raise
    return searcher


def prime(ix: whoosh_index.Index, reader: IndexReader, fields: Iterable[str]) -> None:
    """Open the segment files Whoosh would otherwise open on first use, while they surely exist.

    A segment's stored fields and field lengths are separate files opened lazily; by then another
    process's merge may have deleted them (an open file or map survives that, a missing one does not).
    Even the commit being opened may have been merged away since its table of contents was read:
    a segment of it without its stored fields is then gone, not damaged, and FileNotFoundError says
    so (the open is retried on the newer commit); with no newer commit, it is damage.
    """
    if reader.doc_count_all():
        stored = cast(SegmentReader, reader)._perdoc.has_column("_stored")
        if not stored and ix.latest_generation() != reader.generation():
            raise FileNotFoundError(f"segment {reader.segment()} was merged away by a newer commit")
        reader.stored_fields(0)
        for field in fields:
            reader.doc_field_length(0, field)


def stored_fields(searcher: Searcher, numbers: Sequence[int]) -> list[dict[str, Any]]:
    """The stored fields of these document numbers, read straight from each segment's column.

    Whoosh's reader copies each document's fields through a check against the schema (a third of
    the read); every field wolfmem stores is in the schema, as an index of an older one is rebuilt.
    """
    leaves = searcher.reader().leaf_readers()
    starts = [offset for _, offset in leaves]
    found = []
    for number in numbers:
        reader, offset = leaves[bisect.bisect_right(starts, number) - 1]
        found.append(cast(SegmentReader, reader)._perdoc.stored_fields(number - offset))
    return found


def _weighting() -> scoring.WeightingModel:
    return scoring.BM25F(B=0.75, K1=1.2)


def refreshed(ix: whoosh_index.FileIndex, old: Searcher, fields: Iterable[str]) -> Searcher:
    """A searcher over the latest commit that keeps the old one's readers of segments that did not change.

    Whoosh's own `refresh` matches segments by id alone, so a reused reader would miss deletions
    made since (and it re-adds segments merged away); here a segment is the same only with the
    same deletion count, as deletions are only ever added. Reopening every segment instead cost
    most of a save at 100k facts.
    """
    toc = ix._read_toc()
    kept = {
        (segment.segment_id(), segment.deleted_count()): reader
        for reader, _ in old.reader().leaf_readers()
        if (segment := reader.segment()) is not None
    }
    readers, opened = [], []
    try:
        for segment in toc.segments:
            reader = kept.pop((segment.segment_id(), segment.deleted_count()), None)
            if reader is None:
                reader = SegmentReader(ix.storage, toc.schema, segment, generation=toc.generation)
                opened.append(reader)
                prime(ix, reader, fields)
            readers.append(reader)
    except BaseException:
        for reader in opened:  # the old searcher still owns the rest
            reader.close()
        raise
    for reader in kept.values():
        reader.close()
    # A MultiReader even for one segment: it carries the new generation, which up_to_date compares.
    combined = MultiReader(readers, generation=toc.generation) if readers else EmptyReader(toc.schema)
    return Searcher(combined, fromindex=ix, weighting=_weighting())


class SegmentBuilder:
    """Writes facts into one new segment of an index whose write lock another process holds.

    Whoosh's own multi-process writer does the same (an unlocked SegmentWriter, finished without a
    commit); the segment is only visible once that process lists it in a commit.
    """

    def __init__(self, directory: Path) -> None:
        ix = WorkerStorage(str(directory)).open_index()
        self._writer = SegmentWriter(ix, _lk=False, compound=False)
        self._adder = FactAdder(self._writer)
        self._added = False

    def add(self, doc: FactDoc) -> None:
        """Index one fact."""
        self._adder.add(doc)
        self._added = True

    def finish(self) -> Any:
        """Write the segment's files and return the segment to commit (None when nothing was added)."""
        if not self._added:
            self.cancel()
            return None
        return self._writer._finalize_segment()

    def cancel(self) -> None:
        """Drop what was written."""
        if not self._writer.is_closed:
            self._writer.cancel()


def abandon(writer) -> None:
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
