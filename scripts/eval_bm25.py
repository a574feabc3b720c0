"""BM25's k1 and b chosen by leave-one-benchmark-out validation, at the shipped ranking rules.

Usage: python scripts/eval_bm25.py LOCOMO_DIR LONGMEMEVAL_DIR REALTALK_DIR [HELD_OUT_LOCOMO_DIR]

Each vault is built once and every (k1, b) pair asks all of its questions (`eval_rules`' loop, with the
pair in place of its rule variants). For each benchmark the pair with the best mean recall@10 over the
*other* benchmarks (the mean of their means) is chosen and scored on this one, against the shipped
pair (`scoring.K1`, `scoring.B`). Printed as markdown.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import statistics
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eval_rules

from wolfmem.search import scoring

K1S = (0.6, 0.9, 1.2, 1.6, 2.0)
BS = (0.3, 0.5, 0.75, 0.9, 1.0)
SHIPPED = (scoring.K1, scoring.B)


def _bm25(postings: scoring._Postings, idf: float, average: float) -> np.ndarray:
    """Each posting's BM25 under the k1 and b in place now (the product keeps one pair's scores per term)."""
    tf = postings.tf.astype(np.float64)
    k1, b = scoring.K1, scoring.B
    return idf * ((tf * (k1 + 1)) / (tf + k1 * ((1 - b) + b * scoring._BYTE_LENGTH[postings.codes] / average)))


@contextmanager
def _pair(chosen: tuple[float, float]) -> Iterator[None]:
    saved = scoring.K1, scoring.B
    scoring.K1, scoring.B = chosen
    try:
        yield
    finally:
        scoring.K1, scoring.B = saved


def main(argv: Sequence[str] | None = None) -> int:
    """Score every (k1, b) pair on each benchmark and print the held-out choices."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo", type=Path)
    parser.add_argument("longmemeval", type=Path)
    parser.add_argument("realtalk", type=Path)
    parser.add_argument("held_out_locomo", type=Path, nargs="?")
    args = parser.parse_args(argv)
    logging.getLogger("wolfmem").setLevel(logging.ERROR)
    grid = list(itertools.product(K1S, BS))
    scoring._Postings.bm25 = _bm25  # type: ignore[method-assign]
    eval_rules.VARIANTS, eval_rules.variant = grid, _pair  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="wolfmem-bm25-") as tmp:
        work = Path(tmp)
        by = {"LoCoMo dev": eval_rules.locomo(args.locomo, work / "locomo"),
              "LongMemEval dev": eval_rules.longmemeval(args.longmemeval, work / "lme", 0),
              "REALTALK": eval_rules.realtalk(args.realtalk, work / "realtalk")}
        if args.held_out_locomo:
            by["LoCoMo held-out"] = eval_rules.locomo(args.held_out_locomo, work / "held-out")
    names = list(by)
    print("| k1 | b | " + " | ".join(f"{name} r@10" for name in names) + " |")
    print("|---:|---:|" + "---:|" * len(names))
    for chosen in grid:
        print(f"| {chosen[0]} | {chosen[1]} | " + " | ".join(f"{by[n].mean(chosen):.3f}" for n in names) + " |")
    print("\n| held-out benchmark | (k1, b) chosen on the others | chosen r@10 | shipped r@10 |\n|---|---|---:|---:|")
    for held in names:
        others = [by[n] for n in names if n != held]
        best = max(grid, key=lambda pair: round(statistics.fmean(s.mean(pair) for s in others), 6))
        print(f"| {held} | {best} | {by[held].mean(best):.3f} | {by[held].mean(SHIPPED):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
