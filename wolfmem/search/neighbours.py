"""A fact's neighbours in the ranking: each fact earns a part of its best neighbour's score.

An answer often sits in the reply to the line that holds the question's words, so a fact earns a
part of its best neighbour's score (the neighbours being the facts up to SPAN lines away in one
unbroken run of lines, which is one list of one section). The credit is given at query time from
the neighbours' own scores, not by indexing each fact's neighbours as a field of it: that field
held about three times the postings of the text, and a long session rode on its one strong line
(the top 10 spanned 2.8 sessions on LongMemEval against FTS5's 4.6). The part is chosen by
leave-one-benchmark-out validation over LoCoMo and LongMemEval (BENCHMARKS.md), which also showed
that counting a block's further hits less (a diversity rule) lost recall on both.

A hit's neighbours all earn the same credit from it, so which of them the list keeps is decided by
how they tie: the nearer first, and of two as near, the line after the hit (the reply to it) before
the line above it (`order`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from wolfmem.search.schema import IndexHit, Placed

# Facts this many lines either side (in one run of lines) are a fact's neighbours.
SPAN = 2
# The part of its best neighbour's score a fact earns.
PART = 0.5
# Whether equal credits go to the nearer neighbour and the reply first (False: in line order).
NEAR_FIRST = True


class Neighbour(NamedTuple):
    """A fact next to a candidate: its id, its current line, the score it earns from there, and how many
    lines below the crediting hit it lies (negative: above it).

    A tuple, not a dataclass: a search makes about a hundred of them, and a tuple is made 2.5× faster.
    """

    doc_id: str
    line: int
    credit: float
    offset: int = 0


def order(neighbour: Neighbour) -> tuple[float, int, bool]:
    """Sort key, best first: the higher credit, then (NEAR_FIRST) the nearer line, then the line after the hit."""
    if not NEAR_FIRST:
        return -neighbour.credit, 0, False
    return -neighbour.credit, abs(neighbour.offset), neighbour.offset < 0


def credit(pool: Sequence[IndexHit | Placed], near: Mapping[str, Sequence[tuple[str, int]]], part: float = PART
           ) -> dict[str, Neighbour]:
    """What each neighbour of a pooled hit earns: `part` of its best pooled neighbour's score.

    `near` holds each pooled hit's neighbours (id, line) by the hit's id. Of two hits crediting a
    neighbour equally, the one it stands nearer to (`order`) is the one it is credited from.
    """
    best: dict[str, Neighbour] = {}
    for hit in pool:
        value = part * hit.score
        for doc_id, line in near.get(hit.doc_id, ()):
            if doc_id == hit.doc_id:
                continue
            offset = line - hit.line
            held = best.get(doc_id)
            # order(new) < order(held), with the tie-break worked out only on a tie (~200 of these a search).
            if held is None or value > held.credit or (value == held.credit and _nearer(offset, held.offset)):
                best[doc_id] = Neighbour(doc_id, line, value, offset)
    return best


def _nearer(offset: int, than: int) -> bool:
    """Whether a neighbour `offset` lines from its hit goes before one `than` lines away, on equal credit."""
    return NEAR_FIRST and (abs(offset), offset < 0) < (abs(than), than < 0)


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
    """The pool with each hit's neighbour credit added, plus the credited neighbours it did not hold.

    The newcomers follow the pool in `order`, so a stable sort by score keeps that order among equal credits.
    """
    scored = {}
    for hit in pool:
        scored[hit.doc_id] = hit._replace(score=hit.score + earned[hit.doc_id].credit) if hit.doc_id in earned else hit
    newcomers = [n for n in earned.values() if n.doc_id not in scored and n.doc_id in fetched]
    for neighbour in sorted(newcomers, key=order):
        scored[neighbour.doc_id] = fetched[neighbour.doc_id]._replace(score=neighbour.credit)
    return list(scored.values())
