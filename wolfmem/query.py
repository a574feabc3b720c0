"""Natural-language query → weighted index terms → ranked facts."""

from __future__ import annotations

from .errors import UsageError
from .index import FactIndex, Filters, IndexHit


def terms_of(index: FactIndex, text: str) -> dict[str, float]:
    """The query's stemmed content terms, OR-combined with equal weight."""
    terms: dict[str, float] = {}
    for term in index.analyse(text):
        terms[term] = 1.0
    return terms


def run(index: FactIndex, text: str, filters: Filters, limit: int) -> list[IndexHit]:
    """Rank facts for a natural-language query."""
    terms = terms_of(index, text)
    if not terms:
        raise UsageError(
            f"query {text!r} has only stop words — add the words that matter, e.g. a name or a topic"
        )
    return index.search(terms, filters, limit)
