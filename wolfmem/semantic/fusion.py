"""Hybrid ranking: the lexical pool re-ranked by weighted reciprocal-rank fusion with the dense ranking.

The first `pool` lexical candidates are ranked a second time by their cosine to the query, and each
candidate scores (1 - w) / (c + its lexical rank) + w / (c + its dense rank). Ranks, not scores: a
BM25 score and a cosine have no common scale, and min-max scaling one pool's scores let a single
outlier decide (the weighted sum this replaced lost to the lexical ranking on both benchmarks,
BENCHMARKS.md "Hybrid v2"). Re-ranking the lexical pool bounds a search's dense work by the pool
size, not by the vault: only the pool's facts need vectors. A candidate without a vector yet takes
its lexical rank on the dense side too, as if dense agreed. The pool size, weight and constant are
chosen by leave-one-benchmark-out validation over LoCoMo and LongMemEval (BENCHMARKS.md).

The dense score a dedup neighbour search uses (`neighbour_scores`) is a line's cosine plus a part of
its best neighbour's; a line with no neighbour counts itself as its neighbour.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FusionRule:
    """How many lexical candidates are re-ranked, the dense rank's weight, and the rank constant."""

    # The best pair over LoCoMo and LongMemEval; on REALTALK and held-out LoCoMo, never used to choose it, it
    # beats the lexical and dense-only rankings too (BENCHMARKS.md, "Hybrid v2", "Hybrid on unseen data").
    pool: int = 30
    dense: float = 0.4
    constant: int = 10


DEFAULT_RULE = FusionRule()


def rank_fuse(lexical: int, dense: Sequence[float], weight: float, constant: int) -> list[tuple[int, float]]:
    """(position, fused score) of each candidate, best first, by weighted reciprocal-rank fusion.

    Positions 0..lexical-1 are the lexical pool in lexical order (rank = position + 1); any after it
    are dense-only candidates with no lexical term. `dense[i]` is candidate i's similarity, NaN when it
    has no vector: a pool candidate then takes its lexical rank on the dense side. Ties keep the order.
    """
    known = [i for i, value in enumerate(dense) if not math.isnan(value)]
    dense_rank = {i: rank for rank, i in enumerate(sorted(known, key=lambda i: -dense[i]), 1)}
    fused = [((1.0 - weight) / (constant + i + 1) if i < lexical else 0.0)
             + weight / (constant + dense_rank.get(i, i + 1)) for i in range(len(dense))]
    return sorted(enumerate(fused), key=lambda pair: -pair[1])


def neighbour_scores(cosines: np.ndarray, prev: np.ndarray, next_: np.ndarray, part: float) -> np.ndarray:
    """Each line's cosine plus `part` of its best neighbour's; prev/next index into cosines, -1 for none."""
    own = cosines
    before = np.where(prev >= 0, cosines[np.maximum(prev, 0)], -np.inf)
    after = np.where(next_ >= 0, cosines[np.maximum(next_, 0)], -np.inf)
    best = np.maximum(before, after)
    return own + part * np.where(np.isfinite(best), best, own)
