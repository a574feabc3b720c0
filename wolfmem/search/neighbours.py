"""A fact's neighbours in the ranking: credited from their own text, and kept from filling the list.

An answer often sits in the reply to the line that holds the question's words, so a fact earns a
part of its best neighbour's score (the neighbours being the facts up to SPAN lines away in one
unbroken run of lines, which is one list of one section). The credit is given at query time from
the neighbours' own scores, not by indexing each fact's neighbours as a field of it: that field
held about three times the postings of the text, and a long session rode on its one strong line.

The list is then filled block by block, a block being a file's section (a session of a day, a
person's facts): each further hit of a block that already has hits counts DECAY times less, so
the lines of one session give way to other sessions that match about as well. Both numbers are
chosen by leave-one-benchmark-out validation over LoCoMo and LongMemEval (BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from wolfmem.search.schema import IndexHit

Combine = Literal["best", "sum"]

# Facts this many lines either side (in one run of lines) are a fact's neighbours.
SPAN = 2
# The part of its best neighbour's score a fact earns.
PART = 0.5
# Each further hit of an already placed block is worth this much less, compounding.
DECAY = 0.8
# How a fact's neighbours' credits add up: the best one, or all of them.
COMBINE: Combine = "best"


@dataclass(frozen=True)
class Neighbour:
    """A fact next to a candidate: its id, its current line, and the score it earns from there."""

    doc_id: str
    line: int
    credit: float


def credit(
    pool: Sequence[IndexHit],
    near: Mapping[str, Sequence[tuple[str, int]]],
    part: float = PART,
    combine: Combine = "best",
) -> dict[str, Neighbour]:
    """What each neighbour of a pooled hit earns: `part` of its best pooled neighbour's score (or their sum).

    `near` holds each pooled hit's neighbours (id, line) by the hit's id.
    """
    earned: dict[str, Neighbour] = {}
    for hit in pool:
        for doc_id, line in near.get(hit.doc_id, ()):
            if doc_id == hit.doc_id:
                continue
            value = part * hit.score
            before = earned[doc_id].credit if doc_id in earned else 0.0
            earned[doc_id] = Neighbour(doc_id, line, before + value if combine == "sum" else max(before, value))
    return earned


def run_of(rows: Sequence[tuple[str, int]], line: int, span: int = SPAN) -> list[tuple[str, int]]:
    """The rows (id, line; in line order) reachable from `line` through consecutive lines, up to span away.

    A blank line or a heading breaks the run, so a fact's neighbours stay within its own list.
    """
    by_line = {at: doc_id for doc_id, at in rows}
    found = []
    for step in (-1, 1):
        at = line + step
        while abs(at - line) <= span and at in by_line:
            found.append((by_line[at], at))
            at += step
    return sorted(found, key=lambda row: row[1])


def block(hit: IndexHit) -> tuple[str, str]:
    """The block a hit belongs to: its file and section."""
    return hit.path, hit.section


def diverse(hits: Sequence[IndexHit], limit: int, decay: float = DECAY) -> list[IndexHit]:
    """The best `limit` hits, each further hit of a block already placed counted `decay` times less."""
    left = sorted(hits, key=lambda hit: -hit.score)
    placed: dict[tuple[str, str], int] = {}
    chosen: list[IndexHit] = []
    while left and len(chosen) < limit:
        best = max(range(len(left)), key=lambda i: left[i].score * decay ** placed.get(block(left[i]), 0))
        hit = left.pop(best)
        placed[block(hit)] = placed.get(block(hit), 0) + 1
        chosen.append(hit)
    return chosen


def merged(
    pool: Sequence[IndexHit], earned: Mapping[str, Neighbour], fetched: Mapping[str, IndexHit]
) -> list[IndexHit]:
    """The pool with each hit's neighbour credit added, plus the credited neighbours it did not hold."""
    scored = {}
    for hit in pool:
        bonus = earned[hit.doc_id].credit if hit.doc_id in earned else 0.0
        scored[hit.doc_id] = replace(hit, score=hit.score + bonus)
    for doc_id, neighbour in earned.items():
        if doc_id not in scored and doc_id in fetched:
            scored[doc_id] = replace(fetched[doc_id], score=neighbour.credit)
    return list(scored.values())
