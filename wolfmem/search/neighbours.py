"""A fact's neighbours in the ranking: each fact earns a part of its best neighbour's score.

An answer often sits in the reply to the line that holds the question's words, so a fact earns a
part of its best neighbour's score (the neighbours being the facts up to SPAN lines away in one
unbroken run of lines, which is one list of one section). The credit is given at query time from
the neighbours' own scores, not by indexing each fact's neighbours as a field of it: that field
held about three times the postings of the text, and a long session rode on its one strong line
(the top 10 spanned 2.8 sessions on LongMemEval against FTS5's 4.6). The part is chosen by
leave-one-benchmark-out validation over LoCoMo and LongMemEval (BENCHMARKS.md), which also showed
that counting a block's further hits less (a diversity rule) lost recall on both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from wolfmem.search.schema import IndexHit, Placed

# Facts this many lines either side (in one run of lines) are a fact's neighbours.
SPAN = 2
# The part of its best neighbour's score a fact earns.
PART = 0.5


class Neighbour(NamedTuple):
    """A fact next to a candidate: its id, its current line, and the score it earns from there.

    A tuple, not a dataclass: a search makes about a hundred of them, and a tuple is made 2.5× faster.
    """

    doc_id: str
    line: int
    credit: float


def credit(pool: Sequence[IndexHit | Placed], near: Mapping[str, Sequence[tuple[str, int]]], part: float = PART
           ) -> dict[str, Neighbour]:
    """What each neighbour of a pooled hit earns: `part` of its best pooled neighbour's score.

    `near` holds each pooled hit's neighbours (id, line) by the hit's id.
    """
    best: dict[str, tuple[float, int]] = {}
    for hit in pool:
        value = part * hit.score
        for doc_id, line in near.get(hit.doc_id, ()):
            if doc_id != hit.doc_id and (doc_id not in best or best[doc_id][0] < value):
                best[doc_id] = (value, line)
    return {doc_id: Neighbour(doc_id, line, value) for doc_id, (value, line) in best.items()}


def run_of(facts: Mapping[int, str], line: int, span: int = SPAN) -> list[tuple[str, int]]:
    """The facts (id, line; in line order) reachable from `line` through consecutive lines, up to span away.

    `facts` maps a line to the id of the fact on it. A blank line or a heading breaks the run, so a
    fact's neighbours stay within its own list.
    """
    above = []
    at = line - 1
    while line - at <= span and at in facts:
        above.append((facts[at], at))
        at -= 1
    above.reverse()
    at = line + 1
    while at - line <= span and at in facts:
        above.append((facts[at], at))
        at += 1
    return above


def merged(pool: Sequence[Placed], earned: Mapping[str, Neighbour], fetched: Mapping[str, Placed]) -> list[Placed]:
    """The pool with each hit's neighbour credit added, plus the credited neighbours it did not hold."""
    scored = {}
    for hit in pool:
        scored[hit.doc_id] = hit._replace(score=hit.score + earned[hit.doc_id].credit) if hit.doc_id in earned else hit
    for doc_id, neighbour in earned.items():
        if doc_id not in scored and doc_id in fetched:
            scored[doc_id] = fetched[doc_id]._replace(score=neighbour.credit)
    return list(scored.values())
