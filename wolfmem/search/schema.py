"""What the index holds and how it is asked: fact documents, hits, filters, the Whoosh schema and query parts.

Pure data and query building; `index.FactIndex` does the I/O.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from whoosh import query as wq
from whoosh.analysis import Filter, LowercaseFilter, RegexTokenizer, StemFilter, StopFilter, Token, Tokenizer
from whoosh.fields import ID, TEXT, Schema

from wolfmem.core.tokens import STOP_WORDS, stem
from wolfmem.storage.catalog import DocRow, ManifestEntry
from wolfmem.storage.vault import SOURCES

# Field weights for BM25F: a fact's section heading names its subject. A fact's neighbours are not a
# field: they are credited at query time (search.neighbours), from their own text (BENCHMARKS.md).
FIELD_WEIGHTS = {"text": 1.0, "section": 1.6}


@dataclass(frozen=True)
class FactDoc:
    """One fact as the index stores it; its id is `path#key` (a search reads the file from the id, `path_of`)."""

    doc_id: str
    path: str
    source: str
    section: str
    line: int
    text: str
    date: str
    key: str = ""

    @functools.cached_property
    def digest(self) -> str:
        """A digest of everything indexed about the fact except its line, which may shift freely.

        Kept once computed: a big file's documents are kept between its commits (`search.lastindexed`),
        and each whole commit compares every one of them with the catalog's rows by it.
        """
        fields = (self.source, self.section, self.text, self.date, self.key)
        return hashlib.sha1("\x1f".join(fields).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class IndexHit:
    """A stored fact that matched a query, with its score."""

    path: str
    source: str
    section: str
    line: int
    text: str
    date: str
    score: float
    doc_id: str = ""


class Placed(NamedTuple):
    """A fact a search ranked, before its stored text is read: its document number, id, file, line and score.

    A tuple, not a dataclass: a search places about 40 of them, and a tuple is made 2.5× faster.
    """

    number: int
    doc_id: str
    path: str
    line: int
    score: float


@dataclass(frozen=True)
class Filters:
    """Restrictions on which facts a search may return."""

    sources: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    after: str | None = None
    before: str | None = None


class BulkPart(Protocol):
    """A segment written by another process, with the catalog rows and manifest entries of its files."""

    segment: Any
    rows: dict[str, list[DocRow]]
    entries: dict[str, ManifestEntry | None]


# Chinese and Japanese are written without spaces, so a run of them would be one huge "word".
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


class _CJKBigrams(Filter):
    """Split runs of Chinese/Japanese characters into overlapping pairs, the usual CJK index unit."""

    # Matches whoosh's Filter.__call__(tokens), as whoosh calls a filter; whoosh's own types give Filter
    # a narrower signature than its base Composable.__call__(value, **kwargs), so no override satisfies both.
    def __call__(self, tokens: Iterable[Token]) -> Iterator[Token]:  # type: ignore[override]
        for token in tokens:
            text = token.text
            if len(text) < 3 or not _CJK.search(text):
                yield token
                continue
            for start in range(len(text) - 1):
                token.text = text[start:start + 2]
                yield token


class _DottedParts(Filter):
    """Also index the worded parts of a dotted word: "bastion.example.com" is found by "bastion".

    Whoosh's word pattern keeps "example.com" and "v1.2.3" whole, so a host name in a fact or a
    code line was found only by the whole name. A part counts when it has two or more characters
    and a letter ("v1.2.3" adds "v1"; "e.g" adds nothing).
    """

    def __call__(self, tokens: Iterable[Token]) -> Iterator[Token]:  # type: ignore[override]
        for token in tokens:
            text = token.text
            yield token
            if "." not in text:
                continue
            for part in text.split("."):
                if len(part) > 1 and part != text and any(ch.isalpha() for ch in part):
                    token.text = part
                    yield token


class _ComposedTokenizer(Tokenizer):
    """Whoosh's word tokenizer over the text in composed form (NFC).

    macOS writes "café" decomposed (e + a combining accent), which the word pattern would split
    into "cafe" and a stray accent; composing first makes a fact and a query typed either way the
    same words. Only the words are composed: the file's bytes and the stored text stay as written.
    """

    def __init__(self) -> None:
        self.words = RegexTokenizer()

    def __call__(self, value: str, **kwargs: Any) -> Iterator[Token]:
        return self.words(unicodedata.normalize("NFC", value), **kwargs)


def fact_analyzer():
    """How fact text and queries become terms: composed, split into words (and dotted words into
    parts), lowercased, stop words out, stemmed."""
    # A stem cache of 16k words (Whoosh's default 50k held 9 MB in a daemon after a big sync).
    return (
        _ComposedTokenizer()
        | LowercaseFilter()
        | _DottedParts()
        | StopFilter(stoplist=STOP_WORDS, minsize=1)
        | StemFilter(stemfn=stem, cachesize=16384)
        | _CJKBigrams()
    )


def whoosh_schema() -> Schema:
    analyzer = fact_analyzer()
    return Schema(
        doc_id=ID(unique=True, stored=True),
        path=ID(stored=True),
        source=ID(stored=True),
        # No phrase queries are ever run, so term positions are not stored: indexing is cheaper.
        section=TEXT(analyzer=analyzer, stored=True, phrase=False),
        # No line field: the catalog holds each fact's current line (it shifts without a reindex).
        text=TEXT(analyzer=analyzer, stored=True, phrase=False),
        date=ID(stored=True),
        key=ID,
    )


def fields(doc: FactDoc) -> dict[str, object]:
    return {
        "doc_id": doc.doc_id,
        "path": doc.path,
        "source": doc.source,
        "section": doc.section,
        "text": doc.text,
        "date": doc.date,
        "key": doc.key,
    }


def path_of(doc_id: str) -> str:
    """The file a fact's id names (every fact's id is `path#key`)."""
    return doc_id.rpartition("#")[0]


def hit(result, score: float, line: int) -> IndexHit:
    return IndexHit(
        path=result["path"],
        source=result["source"],
        section=result.get("section", ""),
        line=line,
        text=result["text"],
        date=result.get("date", ""),
        score=float(score),
        doc_id=result["doc_id"],
    )


def split_sources(holding: Callable[[str], int], filters: Filters) -> tuple[Filters, wq.Query | None]:
    """Filters whose source choice, when the left-out sources hold fewer facts, became a mask of them.

    `holding` tells how many facts a source holds (the index remembers it per searcher).

    Whoosh reads every posting of a filter or mask on each search (about 0.7 ms per 1,000 facts
    here), so "not consolidated" is much cheaper than "knowledge or episodes" over a large vault.
    """
    left_out = [source for source in SOURCES if source not in filters.sources]
    if not filters.sources or not left_out:
        return dataclasses.replace(filters, sources=()), None
    masked = sum(map(holding, left_out))
    if masked >= sum(map(holding, filters.sources)):
        return filters, None
    if not masked:  # no fact (live or deleted) is of a left-out source: nothing to filter or mask
        return dataclasses.replace(filters, sources=()), None
    return dataclasses.replace(filters, sources=()), wq.Or([wq.Term("source", source) for source in left_out])


def filter_query(filters: Filters) -> wq.Query | None:
    parts: list[wq.Query] = []
    if filters.sources:
        parts.append(wq.Or([wq.Term("source", source) for source in filters.sources]))
    if filters.paths:
        parts.append(wq.Or([wq.Term("path", path) for path in filters.paths]))
    if filters.keys:
        parts.append(wq.Or([wq.Term("key", key) for key in filters.keys]))
    if filters.after or filters.before:
        parts.append(wq.TermRange("date", filters.after or "0000-00-00", filters.before or "9999-99-99"))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else wq.And(parts)
