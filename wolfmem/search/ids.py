"""Each segment's fact ids by document number and back, read once from its `doc_id` terms.

A search ranks document numbers; placing its ~35 pooled hits at their lines and finding their
neighbours needs only each fact's id, yet reading it from the stored fields meant decompressing
and unpickling each document (a quarter of a keyword search at 10k facts, BENCHMARKS.md). A
segment never changes once written (a deletion only marks documents), so its ids are read once
from its term file, whose `doc_id` entries each name the document holding them, and kept as
arrays for as long as the segment is searched: about 60 bytes a fact, 3 µs a fact to read.
"""

from __future__ import annotations

import bisect
import contextlib
import mmap
import struct
import threading
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

FIELD = "doc_id"
# A Whoosh hash-table entry's key and value lengths, and its W3 term info (flags, weight, document
# frequency, lengths, max weight, first and last document number): whoosh.codec.whoosh3.W3TermInfo.
_LENGTHS = struct.Struct("!ii")
_TERM_INFO = struct.Struct("!BfIBBfII")


@dataclass(frozen=True)
class SegmentIds:
    """One segment's fact ids: each document number's id, and the numbers holding each id."""

    blob: bytes  # every id's UTF-8 bytes, in term order
    starts: np.ndarray  # where each id starts in blob, and one more: the end
    id_of: np.ndarray  # per document number, the index of its id (-1: none)
    first: np.ndarray  # per id, the first document number holding it
    hashes: np.ndarray  # hash of each id's bytes, sorted
    by_hash: np.ndarray  # the id index of each sorted hash
    shared: dict[int, tuple[int, ...]]  # ids more than one document holds: all their numbers

    def doc_id(self, number: int) -> str | None:
        """The id of the fact at a document number of the segment (None: a document without one)."""
        at = self.id_of.item(number)  # .item(): a Python int, without numpy's scalar types on the way
        return None if at < 0 else self._text(at).decode()

    def numbers(self, doc_ids: Sequence[str]) -> list[tuple[int, ...]]:
        """The document numbers holding each id, deleted ones included (none for an id not here)."""
        keys = [doc_id.encode() for doc_id in doc_ids]
        wanted = np.array([hash(key) for key in keys], dtype=np.int64)
        lows = np.searchsorted(self.hashes, wanted, "left").tolist()
        highs = np.searchsorted(self.hashes, wanted, "right").tolist()
        found: list[tuple[int, ...]] = []
        for key, low, high in zip(keys, lows, highs, strict=True):
            ats = [at for at in self.by_hash[low:high].tolist() if self._text(at) == key]
            found.append(self.shared.get(ats[0], (self.first.item(ats[0]),)) if ats else ())
        return found

    def _text(self, at: int) -> bytes:
        return self.blob[self.starts.item(at):self.starts.item(at + 1)]


def read(reader) -> SegmentIds:
    """The ids of one segment reader, from the raw entries of its term file (deletions ignored)."""
    terms = reader._terms
    table = terms._tindex
    prefix = terms._keycoder(FIELD, b"")
    keys: list[bytes] = []
    firsts = array("i")
    shared: dict[int, tuple[int, ...]] = {}
    for key, info in _entries(table, prefix):
        _, _, frequency, _, _, _, first, _ = _TERM_INFO.unpack_from(info)
        if frequency > 1:
            # An id held twice in one segment (a copy since deleted, or a key one writer added twice):
            # its postings list every holder.
            shared[len(keys)] = tuple(terms.matcher(FIELD, key, reader.schema[FIELD].format).all_ids())
        keys.append(key)
        firsts.append(first)
    starts = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((len(key) for key in keys), dtype=np.int64, count=len(keys)), out=starts[1:])
    first = np.frombuffer(firsts, dtype=np.int32) if firsts else np.zeros(0, dtype=np.int32)
    id_of = np.full(reader.doc_count_all(), -1, dtype=np.int32)
    id_of[first] = np.arange(len(keys), dtype=np.int32)
    for at, numbers in shared.items():
        id_of[list(numbers)] = at
    hashes = np.fromiter((hash(key) for key in keys), dtype=np.int64, count=len(keys))
    order = np.argsort(hashes, kind="stable")
    return SegmentIds(b"".join(keys), starts.astype(np.int32 if starts[-1] < 2**31 else np.int64), id_of,
                      first.copy(), hashes[order], order.astype(np.int32), shared)


def _entries(table, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
    """The (term, term info) entries of one field, parsed from one copy of that field's bytes.

    The field's entries are contiguous in the table, from its own prefix's first key to the next
    field's: only those are read (reading on to the table's end mapped the whole term file, 5 MB a
    segment at 100k facts), and once copied their pages are let go of the process's memory.
    """
    start = table.closest_key_pos(prefix)
    if start is None:
        return
    field = int.from_bytes(prefix, "big")
    end = table.closest_key_pos((field + 1).to_bytes(len(prefix), "big")) if field + 1 < 1 << 8 * len(prefix) else None
    end = table.endofdata if end is None else end
    data = table.dbfile.get(start, end - start)
    _release(table.dbfile, start, end - start)
    at = 0
    while at < len(data):
        key_length, value_length = _LENGTHS.unpack_from(data, at)
        key_at = at + _LENGTHS.size
        key = data[key_at:key_at + key_length]
        if not key.startswith(prefix):
            return  # the field's entries are contiguous: the next field begins
        yield key[len(prefix):], data[key_at + key_length:key_at + key_length + value_length]
        at = key_at + key_length + value_length


def _release(dbfile, start: int, length: int) -> None:
    """Drop the mapped pages of a file range this process read once (they stay in the page cache)."""
    mapped = getattr(dbfile, "file", None)
    if not isinstance(mapped, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED") or length <= 0:
        return
    low = start - start % mmap.PAGESIZE
    with contextlib.suppress(OSError, ValueError):
        mapped.madvise(mmap.MADV_DONTNEED, low, start + length - low)


class SearcherIds:
    """The ids of every segment of one searcher, by its document numbers."""

    def __init__(self, leaves: list[tuple[object, int, SegmentIds]]) -> None:
        self._leaves = leaves
        self._starts = [offset for _, offset, _ in leaves]

    def doc_ids(self, numbers: Sequence[int]) -> list[str | None]:
        """The id of the fact at each document number (None: a document without one)."""
        found = []
        for number in numbers:
            _, offset, ids = self._leaves[bisect.bisect_right(self._starts, number) - 1]
            found.append(ids.doc_id(number - offset))
        return found

    def live_holders(self, doc_ids: Sequence[str]) -> list[int]:
        """Every live document number holding one of these ids: what a deletion by their `doc_id` terms deletes."""
        found = []
        for reader, offset, ids in self._leaves:
            for numbers in ids.numbers(doc_ids):
                found += [offset + number for number in numbers if not reader.is_deleted(number)]  # type: ignore[attr-defined]
        return sorted(found)

    def live_numbers(self, doc_ids: Sequence[str]) -> dict[str, int]:
        """The document number of the live fact holding each id (the first, as Whoosh's lookup); others left out."""
        found: dict[str, int] = {}
        for reader, offset, ids in self._leaves:
            wanted = [doc_id for doc_id in doc_ids if doc_id not in found]
            if not wanted:
                break
            for doc_id, numbers in zip(wanted, ids.numbers(wanted), strict=True):
                live = [number for number in numbers if not reader.is_deleted(number)]  # type: ignore[attr-defined]
                if live:
                    found[doc_id] = offset + live[0]
        return found


class IdCache:
    """The ids of the searched segments, kept while they are searched; thread-safe."""

    def __init__(self) -> None:
        self._kept: dict[object, SegmentIds] = {}
        self._last: tuple[object, SearcherIds] | None = None
        self._guard = threading.Lock()

    def of(self, searcher) -> SearcherIds:
        """The ids of the searcher's segments, each read the first time it is searched; others are let go."""
        found = self.kept(searcher, None)
        assert found is not None
        return found

    def kept(self, searcher, unread: int | None) -> SearcherIds | None:
        """`of(searcher)`, or None when the segments whose ids are not kept yet hold more than `unread` documents."""
        last = self._last
        if last is not None and last[0] is searcher:
            return last[1]
        leaves = [(reader, offset) for reader, offset in searcher.reader().leaf_readers() if reader.doc_count_all()]
        keys = [_segment_key(reader) for reader, _ in leaves]
        with self._guard:
            kept = {key: self._kept[key] for key in keys if key in self._kept}
        if unread is not None and sum(reader.doc_count_all() for (reader, _), key in zip(leaves, keys, strict=True)
                                      if key not in kept) > unread:
            return None
        found = [(reader, offset, kept.get(key) or read(reader))
                 for (reader, offset), key in zip(leaves, keys, strict=True)]
        ids = SearcherIds(found)
        with self._guard:
            self._kept = {key: segment for key, (_, _, segment) in zip(keys, found, strict=True)}
            self._last = (searcher, ids)
        return ids


def _segment_key(reader) -> object:
    segment = reader.segment()
    return segment.segment_id() if segment is not None else id(reader)
