"""BM25F from posting arrays read once per segment: what Whoosh's matcher tree scores, without the tree.

A segment never changes once written (a commit writes new ones; a deletion only marks documents),
so a term's postings in a segment are read once into arrays (document numbers, term frequencies,
field lengths) and kept; a search then sums each term's BM25 over its arrays with numpy and takes
the best. The score is Whoosh's BM25F to the bit (its idf, average field length and stored field
length, times the clause's boost), and ties go to the lower document number as in Whoosh's
collector, so the ranking is the one its matchers gave. Those matchers (a tree rebuilt for every
segment and block, one Python call per posting) were three quarters of a search (BENCHMARKS.md).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from whoosh.codec.whoosh3 import LENGTHS_COLUMN
from whoosh.reading import SegmentReader, TermNotFound
from whoosh.util.numeric import byte_to_length

# Postings kept in memory across searches (14 bytes each with their kept score: a 4-byte number,
# a 1-byte frequency and length code, 8 bytes of BM25): a term is read again when it fell out.
# A question's terms are rarer than this by far; a common term alone can hold a lot.
MAX_CACHED_POSTINGS = 1_500_000
B, K1 = 0.75, 1.2
# Segments whose field lengths are kept (two fields each; a vault has a handful of segments).
_LENGTH_COLUMNS = 64
# The field length each of Whoosh's one-byte length codes stands for.
_BYTE_LENGTH = np.array([byte_to_length(code) for code in range(256)], dtype=np.float64)


@dataclass(frozen=True)
class Clause:
    """One term searched in one field, with the boost its score is multiplied by."""

    field: str
    term: str
    boost: float


@dataclass(frozen=True)
class _Postings:
    ids: np.ndarray  # document numbers within the segment (int32)
    tf: np.ndarray  # term frequencies, in the smallest unsigned type that holds them exactly, else float64
    codes: np.ndarray  # the field's one-byte length code of each document (`_BYTE_LENGTH`)
    # Each posting's BM25 before the clause's boost, for the last idf and average length asked (8 bytes
    # a posting more): a watching process's searches reuse it until a commit moves either.
    scored: dict[tuple[float, float], np.ndarray] = field(default_factory=dict, compare=False)

    def bm25(self, idf: float, average: float) -> np.ndarray:
        """Each posting's BM25 under this idf and average field length (Whoosh's BM25F, boost 1)."""
        found = self.scored.get((idf, average))
        if found is None:
            tf = self.tf.astype(np.float64)
            found = idf * ((tf * (K1 + 1)) / (tf + K1 * ((1 - B) + B * _BYTE_LENGTH[self.codes] / average)))
            self.scored.clear()
            self.scored[(idf, average)] = found
        return found


_EMPTY = _Postings(np.zeros(0, np.int32), np.zeros(0, np.uint8), np.zeros(0, np.uint8))


def _compact(weights: np.ndarray) -> np.ndarray:
    """Term frequencies as uint8 or uint16 when each converts back to the same float, else as they are."""
    for kind in (np.uint8, np.uint16):
        small = weights.astype(kind)
        if np.array_equal(small, weights):
            return small
    return weights


class PostingCache:
    """The postings of recently searched terms, per segment, bounded in total size; thread-safe."""

    def __init__(self, budget: int = MAX_CACHED_POSTINGS) -> None:
        self.budget = budget
        self._kept: OrderedDict[tuple[str, str, str], _Postings] = OrderedDict()
        self._size = 0
        # Each segment's field lengths (one byte a document), read once.
        self._lengths: dict[tuple[str, str], np.ndarray] = {}
        # The average field lengths of the last searcher asked (they change only with a new searcher).
        self._averages: tuple[object, dict[str, float]] = (None, {})
        self._guard = threading.Lock()

    def postings(self, reader, field: str, term: str, segment: str | None = None) -> _Postings:
        """A term's postings in one segment reader, read from its files the first time.

        `segment` is the reader's `_segment_key`, when the caller asks for many terms of one reader.
        """
        key = (segment or _segment_key(reader), field, term)
        with self._guard:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
        found = _EMPTY
        info = _term_info(reader, field, term)
        if info is not None:
            found = _read(reader, field, term, info, self._field_lengths(reader, key[0], field))
        with self._guard:
            if key not in self._kept and len(found.ids) <= self.budget:
                self._kept[key] = found
                self._size += len(found.ids)
                while self._size > self.budget:
                    _, dropped = self._kept.popitem(last=False)
                    self._size -= len(dropped.ids)
        return found


    def average(self, searcher, field: str) -> float:
        """The searcher's average length of a field (1 when it holds none), as Whoosh's BM25F takes it."""
        of, known = self._averages
        if of is not searcher:
            known = {}
            self._averages = (searcher, known)
        if field not in known:
            known[field] = searcher.avg_field_length(field) or 1
        return known[field]

    def _field_lengths(self, reader, segment: str, field: str) -> np.ndarray:
        lengths = self._lengths.get((segment, field))
        if lengths is None:
            lengths = field_lengths(reader, field)
            with self._guard:
                if len(self._lengths) >= _LENGTH_COLUMNS:
                    self._lengths.clear()
                self._lengths[(segment, field)] = lengths
        return lengths


def _segment_key(reader) -> str:
    segment = reader.segment()
    return segment.segment_id() if segment is not None else str(id(reader))


def _term_info(reader, field: str, term: str):
    """A term's entry in a segment's term file, or None: one lookup (a membership test was a second)."""
    if not isinstance(reader, SegmentReader):
        return None  # an empty index's reader holds no term
    try:
        return reader._terms.term_info(field, reader._text_to_bytes(field, term))
    except TermNotFound:
        return None


def _read(reader, field: str, term: str, info, lengths: np.ndarray) -> _Postings:
    """Decode the postings of a term the segment holds, block by block (Whoosh's own block arrays).

    Deleted documents are included (the live mask drops them).

    `lengths` holds the field's length byte of each of the segment's documents (`field_lengths`).
    """
    # The raw matcher of the segment's term file: the reader's own wraps it to skip deletions one
    # posting at a time, which the live mask does here for the whole array at once.
    terms = reader._terms
    matcher = terms._codec.postings_reader(terms._postfile, info, reader.schema[field].format,
                                           term=(field, reader._text_to_bytes(field, term)))
    ids: list[np.ndarray] = []
    tfs: list[np.ndarray] = []
    while matcher.is_active():
        matcher._read_ids()
        matcher._read_weights()
        ids.append(np.asarray(matcher._ids, dtype=np.int32))
        tfs.append(np.asarray(matcher._weights, dtype=np.float64))
        matcher._next_block()
    if not ids:
        return _EMPTY
    numbers = np.concatenate(ids)
    codes = lengths[numbers]
    if not codes.all():
        # A document that holds the term has a length: none means the segment's length file is cut short,
        # which the index folder answers (as for any damaged segment) by rebuilding from the files.
        raise ValueError(f"no {field} length for a document holding {term!r}: the segment's lengths are damaged")
    return _Postings(numbers, _compact(np.concatenate(tfs)), codes)


def field_lengths(reader, field: str) -> np.ndarray:
    """A segment's length byte of one field for every document (0: none), read in one go.

    Whoosh stores each length as one byte (`length_to_byte`) in a column one byte a document; a
    column shorter than the segment (its file cut short) leaves the rest 0, as Whoosh reads them.
    """
    codes = np.zeros(reader.doc_count_all(), dtype=np.uint8)
    column = reader._perdoc._cached_reader(f"_{field}_len", LENGTHS_COLUMN)
    if column is not None:
        count = min(column._count, len(codes))
        codes[:count] = np.frombuffer(column._dbfile.get(column._basepos, count), dtype=np.uint8)
    return codes


def best(
    searcher,
    cache: PostingCache,
    clauses: Sequence[Clause],
    limit: int,
    allowed: np.ndarray | None = None,
    masked: np.ndarray | None = None,
    bonus: Sequence[Clause] = (),
) -> list[tuple[int, float]]:
    """The `limit` best (document number, score) under BM25F, best first; ties to the lower number.

    `allowed` and `masked` are boolean arrays over the searcher's document numbers: a document
    must be allowed (when given) and not masked. A `bonus` clause selects nothing: each of the
    chosen documents that holds its term gets its boost added, and the list is sorted again.
    """
    chosen = _selected(searcher, cache, clauses, limit, allowed, masked)
    if not bonus or not chosen:
        return chosen
    number = np.array([n for n, _ in chosen], dtype=np.int64)
    score = np.array([s for _, s in chosen], dtype=np.float64)
    for reader, offset in searcher.reader().leaf_readers():
        inside = (number >= offset) & (number < offset + reader.doc_count_all())
        if not inside.any():
            continue
        for clause in bonus:
            postings = cache.postings(reader, clause.field, clause.term)
            score[inside] += clause.boost * _held(postings.ids, number[inside] - offset)
    order = np.lexsort((number, -score))
    return [(int(number[i]), float(score[i])) for i in order]


def _held(ids: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """Whether each document number is among a term's postings (in document order): a few lookups, no sort."""
    if not len(ids):
        return np.zeros(len(numbers), dtype=bool)
    at = np.minimum(np.searchsorted(ids, numbers), len(ids) - 1)
    return ids[at] == numbers


def _selected(
    searcher,
    cache: PostingCache,
    clauses: Sequence[Clause],
    limit: int,
    allowed: np.ndarray | None,
    masked: np.ndarray | None,
) -> list[tuple[int, float]]:
    numbers: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    stats: dict[Clause, tuple[float, float]] = {}  # asked only of terms some segment holds, as Whoosh does
    for reader, offset in searcher.reader().leaf_readers():
        size = reader.doc_count_all()
        total = np.zeros(size, dtype=np.float64)
        touched = False
        segment = _segment_key(reader)
        for clause in clauses:
            postings = cache.postings(reader, clause.field, clause.term, segment)
            if not len(postings.ids):
                continue
            if clause not in stats:
                stats[clause] = _idf(searcher, cache, clause), cache.average(searcher, clause.field)
            total[postings.ids] += clause.boost * postings.bm25(*stats[clause])  # each document once per term
            touched = True
        if not touched:
            continue
        live = total > 0
        deleted = reader.deleted_docs_set
        if deleted:
            live[np.fromiter(deleted, dtype=np.int64, count=len(deleted))] = False
        found = np.flatnonzero(live)
        # The filters are looked up for the documents found only, not over the whole segment.
        if allowed is not None:
            found = found[allowed[found + offset]]
        if masked is not None:
            found = found[~masked[found + offset]]
        numbers.append(found + offset)
        scores.append(total[found])
    if not numbers:
        return []
    number, score = np.concatenate(numbers), np.concatenate(scores)
    if len(number) > limit:
        # The limit-th best score; everything at or above it is sorted exactly below (ties kept).
        cut = np.partition(score, len(score) - limit)[len(score) - limit]
        keep = score >= cut
        number, score = number[keep], score[keep]
    order = np.lexsort((number, -score))[:limit]
    return [(int(number[i]), float(score[i])) for i in order]


def _idf(searcher, cache: PostingCache, clause: Clause) -> float:
    """Whoosh's idf of a term (its searcher's, remembered there as Whoosh does), counted from the cached postings.

    Whoosh's own counts the term's entries in every segment's term file again: the postings already
    read hold each segment's count (deleted documents included, as in the term file).
    """
    known = searcher._idf_cache
    key = (clause.field, clause.term)
    if key not in known:
        held = sum(len(cache.postings(reader, *key).ids) for reader, _ in searcher.reader().leaf_readers())
        known[key] = math.log(searcher.doc_count_all() / (held + 1)) + 1  # whoosh.scoring.WeightingModel.idf
    return known[key]


def docs_mask(searcher, query) -> np.ndarray:
    """A boolean array over the searcher's document numbers: those the query matches."""
    mask = np.zeros(searcher.doc_count_all(), dtype=bool)
    found = np.fromiter(searcher.docs_for_query(query), dtype=np.int64)
    mask[found] = True
    return mask
