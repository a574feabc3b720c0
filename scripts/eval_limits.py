"""Lexical recall@5 and @10 by the limit a search asks for, on both dev benchmarks.

Usage: python scripts/eval_limits.py LOCOMO_DIR LONGMEMEVAL_DIR

Each question is asked at limits 5, 10, 20 and 30; the recall of each list's first 5 and 10 is printed
per limit. With a ranking whose first hits do not depend on the limit, every row is the same.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eval_locomo
import eval_longmemeval
from eval_locomo import recall

import wolfmem

LIMITS = (5, 10, 20, 30)
Recalls = dict[tuple[int, int], list[float]]  # (limit, k) -> recall@k of each question


def ask(memory: wolfmem.Memory, where: dict[tuple[str, int], str],
        questions: Sequence[tuple[str, Sequence[str], date]], recalls: Recalls) -> None:
    """Ask each (text, evidence, today) at every limit and record recall@5 and @10 of each list."""
    memory.search("warm up the searcher", limit=1)
    for text, evidence, today in questions:
        for limit in LIMITS:
            ranked = [where.get((hit.path, hit.line), "?") for hit in memory.search(text, limit=limit, today=today)]
            for k in (5, 10):
                recalls[(limit, k)].append(recall(ranked, evidence, k))


def main(argv: Sequence[str] | None = None) -> int:
    """Print a markdown table: per benchmark and limit, recall@5 / recall@10."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo", type=Path)
    parser.add_argument("longmemeval", type=Path)
    args = parser.parse_args(argv)
    logging.getLogger("wolfmem").setLevel(logging.ERROR)
    results: dict[str, Recalls] = {"LoCoMo": defaultdict(list), "LongMemEval": defaultdict(list)}
    with tempfile.TemporaryDirectory(prefix="wolfmem-limits-") as tmp:
        work = Path(tmp)
        for conversation, memory, where in eval_locomo.conversations(args.locomo, work):
            ask(memory, where, [(q.text, q.evidence, conversation.today) for q in conversation.questions],
                results["LoCoMo"])
        for item, memory, where in eval_longmemeval.haystacks(args.longmemeval, work / "longmemeval"):
            ask(memory, where, [(item.text, item.evidence, item.today)], results["LongMemEval"])
    print("| benchmark | " + " | ".join(f"limit {limit}: r@5 / r@10" for limit in LIMITS) + " |")
    print("|---|" + "---|" * len(LIMITS))
    for name, recalls in results.items():
        cells = [f"{statistics.fmean(recalls[(limit, 5)]):.3f} / {statistics.fmean(recalls[(limit, 10)]):.3f}"
                 for limit in LIMITS]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
