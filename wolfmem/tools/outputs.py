"""The JSON Schemas of what each tool returns as structured content, derived from the result types.

Deriving them (pydantic reads the dataclasses) keeps a schema from drifting away from the
`to_dict()` it describes; MCP clients check every structured reply against it.
"""

from __future__ import annotations

from typing import Any, NotRequired

from pydantic import TypeAdapter

# pydantic needs typing_extensions.TypedDict before Python 3.12.
from typing_extensions import TypedDict

from wolfmem.memory.corrections import Correction
from wolfmem.memory.episodes import LogReceipt
from wolfmem.memory.receipts import Receipt
from wolfmem.memory.refs import Excerpt
from wolfmem.memory.searching import Hit


class SearchHit(TypedDict):
    """One hit as structured content: a Hit without what would repeat itself (`snippet` is `text`, cut;
    `path` and `line` are in `ref`).

    Some clients hand structured content to the model beside the text, so it stays lean.
    """

    ref: str
    section: str
    text: str
    score: float
    source: str
    date: str


class QueryGroup(TypedDict):
    """One phrasing of a batch search: its results, or why it failed."""

    query: str
    results: list[SearchHit]
    error: NotRequired[str]


class SearchOutput(TypedDict, total=False):
    """memory_search: `query` (cut to a short echo) and `results`, or with `queries`, one group per phrasing."""

    query: str
    results: list[SearchHit]
    queries: list[QueryGroup]
    # What wolfmem did to the hits' files since an agent last touched them (lines put back after an editor).
    notices: list[str]


def search_hit(hit: Hit) -> SearchHit:
    """`hit` as structured content."""
    return SearchHit(ref=hit.ref, section=hit.section, text=hit.text, score=hit.score, source=hit.source,
                     date=hit.date)


class MapOutput(TypedDict):
    """memory_map: the `<memory_map>` block."""

    memory_map: str


def schema(kind: Any) -> dict[str, Any]:
    """The JSON Schema (2020-12) of a dataclass or TypedDict."""
    return TypeAdapter(kind).json_schema()


SEARCH = schema(SearchOutput)
GET = schema(Excerpt)
SAVE = schema(Receipt)
MAP = schema(MapOutput)
LOG = schema(LogReceipt)
CORRECTION = schema(Correction)
