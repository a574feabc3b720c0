"""Fact documents into a Whoosh writer: `add_document`'s work for wolfmem's fixed schema, done directly.

Whoosh's `add_document` checks each field against the schema, runs every text through the analyzer
chain token by token and builds each posting in a generator: about half of what indexing a fact
costs. Here each distinct word is analysed once (the analyzer never joins words across spaces: its
pattern holds no whitespace, and composing to NFC never crosses one), and the postings, stored fields
and field lengths handed to the writer are the ones `add_document` would hand it, so the segment
written is the same (tests/search/test_adding.py compares them).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable
from typing import Any

from whoosh.fields import ID, TEXT
from whoosh.system import pack_uint

from wolfmem.search.schema import FactDoc, fact_analyzer

# FactDoc's fields in the order add_document visits them (sorted by name).
_FIELDS = ("date", "doc_id", "key", "path", "section", "source", "text")
_TEXT = frozenset({"section", "text"})
_ANALYZER = fact_analyzer()


@functools.lru_cache(maxsize=65536)
def _word_terms(word: str) -> tuple[bytes, ...]:
    """The index terms of one whitespace-free word, as the writer analyses a field (mode "index")."""
    return tuple(token.text.encode() for token in _ANALYZER(word, mode="index", boosts=True) if not token.stopped)


class FactAdder:
    """Adds facts to one Whoosh writer (a SegmentWriter) as its `add_document(**fields(doc))` would."""

    def __init__(self, writer: Any) -> None:
        schema = writer.schema
        if sorted(schema.names()) != sorted(_FIELDS):
            raise ValueError(f"FactAdder knows the fields {_FIELDS}, not {schema.names()}")
        self._fields = [(name, schema[name]) for name in _FIELDS]
        for name, field in self._fields:
            # What add_document would do beyond postings, stored values and lengths is never asked for.
            kind = TEXT if name in _TEXT else ID
            boost = getattr(field.format, "field_boost", None)
            extra = field.vector or field.column_type or field.separate_spelling()
            if type(field) is not kind or extra or boost != 1.0:
                raise ValueError(f"FactAdder cannot add the field {name} ({field!r})")
        self._writer = writer

    def add(self, doc: FactDoc) -> None:
        """Index one fact."""
        writer = self._writer
        docnum = writer.docnum
        perdoc = writer.perdocwriter
        post = writer.pool.add
        values = (doc.date, doc.doc_id, doc.key, doc.path, doc.section, doc.source, doc.text)
        perdoc.start_doc(docnum)
        for (name, field), value in zip(self._fields, values, strict=True):
            length = 0
            if name in _TEXT:
                counts = Counter(term for word in value.split() for term in _word_terms(word))
                for term, freq in counts.items():
                    post((name, term, docnum, float(freq), pack_uint(freq)))
                    length += freq
            else:
                post((name, value.encode(), docnum, 1.0, b""))
            perdoc.add_field(name, field, value if field.stored else None, length)
        perdoc.finish_doc()
        writer._added = True
        writer.docnum += 1

    def add_all(self, docs: Iterable[FactDoc]) -> None:
        """Index these facts, in order."""
        for doc in docs:
            self.add(doc)
