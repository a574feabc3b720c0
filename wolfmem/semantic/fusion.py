"""Hybrid ranking: a weighted sum of the lexical and dense scores, each min-max normalised over its pool.

Reciprocal-rank fusion throws the score gaps away; on LoCoMo it ranked below this weighted sum, so
the two scores are kept and put on one scale: each list's candidates are mapped to 0..1 between its
worst and best score, and the fused score is (1 - w) * lexical + w * dense. A candidate missing from
the lexical pool scores 0 there (it ranked below every candidate that did make it). A fact that has
no vector yet is ranked by its lexical score alone, as if dense agreed with it.

The dense score of a line is its cosine plus a part of its best neighbour's: an answer often sits
next to the line that echoes the question. A line with no neighbour counts itself as its neighbour,
so lone knowledge bullets are not pushed below chat lines. The weights are chosen by
leave-one-conversation-out cross-validation on LoCoMo (BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class FusionWeights:
    """How much the dense score counts, and how much of the best neighbour's cosine a line gets."""

    # Both leave-one-conversation-out folds on LoCoMo dev point here (BENCHMARKS.md, e5-small).
    dense: float = 0.3
    neighbour: float = 0.75


DEFAULT_WEIGHTS = FusionWeights()


def neighbour_scores(cosines: np.ndarray, prev: np.ndarray, next_: np.ndarray, part: float) -> np.ndarray:
    """Each line's cosine plus `part` of its best neighbour's; prev/next index into cosines, -1 for none."""
    own = cosines
    before = np.where(prev >= 0, cosines[np.maximum(prev, 0)], -np.inf)
    after = np.where(next_ >= 0, cosines[np.maximum(next_, 0)], -np.inf)
    best = np.maximum(before, after)
    return own + part * np.where(np.isfinite(best), best, own)


def normalise(scores: Mapping[K, float]) -> dict[K, float]:
    """Min-max scale to 0..1; a single candidate, or a pool of equal scores, all get 1."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    if high - low <= 1e-12:
        return {key: 1.0 for key in scores}
    return {key: (value - low) / (high - low) for key, value in scores.items()}


def fuse(
    lexical: Mapping[K, float],
    dense: Mapping[K, float],
    dense_pool: Mapping[K, float],
    weight: float,
) -> list[tuple[K, float]]:
    """Candidates of both lists by fused score, best first.

    `dense_pool` is the dense top-N whose range sets the dense scale; `dense` holds the dense score
    of every candidate that has a vector (those outside the pool are clipped to 0).
    """
    lex = normalise(lexical)
    pool = normalise(dense_pool)
    low = min(dense_pool.values()) if dense_pool else 0.0
    high = max(dense_pool.values()) if dense_pool else 1.0
    span = high - low if high - low > 1e-12 else 1.0
    fused: dict[K, float] = {}
    for key in {**lexical, **dense_pool}:
        lexical_part = lex.get(key, 0.0)
        if key in pool:
            dense_part = pool[key]
        elif key in dense:
            dense_part = min(max((dense[key] - low) / span, 0.0), 1.0)
        else:
            dense_part = lexical_part  # no vector yet: ranked lexically
        fused[key] = (1.0 - weight) * lexical_part + weight * dense_part
    return sorted(fused.items(), key=lambda item: -item[1])
