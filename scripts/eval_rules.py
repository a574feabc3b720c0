"""Choose the ranking's neighbour part, rarity weight and date fade by leave-one-benchmark-out validation.

Usage: python scripts/eval_rules.py LOCOMO_DIR LONGMEMEVAL_DIR [--realtalk DIR] [--limit N]

The rules work at query time (`neighbours.PART`, `query.RARITY`, `query.FADE`: how many days outside a
query's date window halve a fact's score, 0 for a hard window; `neighbours.NEAR_FIRST`: equal credits to
the nearer neighbour and the reply first), so each vault is built once and every variant asks all of
its questions.
For each benchmark the variant with the best recall@10 on the *other* benchmarks (the mean of their
means, so each benchmark counts once whatever its size) is chosen and scored on this one: a rule that
only suits the benchmarks it was chosen on shows up as a drop. `--realtalk` adds REALTALK's chats
(scripts/eval_realtalk.py) as a third benchmark.
Printed as markdown: the held-out choice per benchmark, with and without the rules, the shipped
variant against the one shipped before (questions gained and lost), and the recall@10 of every
variant on each benchmark.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eval_locomo
import eval_longmemeval
import eval_realtalk
from eval_locomo import K, recall

import wolfmem
from wolfmem.search import neighbours, query

Variant = tuple[float, float, int, bool]  # (neighbour part, rarity exponent, date fade in days, near first)
PARTS = (0.0, 0.25, 0.5, 0.75, 1.0)
RARITIES = (1.0, 0.5, 0.0)
FADES = (0, 7)
NEAR_FIRST = (False, True)
# Listed off first, so a tie on the benchmark that chooses keeps a rule off.
VARIANTS: list[Variant] = list(itertools.product(PARTS, RARITIES, FADES, NEAR_FIRST))
SHIPPED: Variant = (neighbours.PART, query.RARITY, query.FADE, neighbours.NEAR_FIRST)
BEFORE: Variant = (0.5, 1.0, 0, False)  # what shipped before issue 27's date fade and reply-first ties


@contextmanager
def variant(chosen: Variant) -> Iterator[None]:
    """Rank with another neighbour part, rarity exponent, date fade and tie order for the duration of the block."""
    saved = neighbours.PART, query.RARITY, query.FADE, neighbours.NEAR_FIRST
    neighbours.PART, query.RARITY, query.FADE, neighbours.NEAR_FIRST = chosen
    try:
        yield
    finally:
        neighbours.PART, query.RARITY, query.FADE, neighbours.NEAR_FIRST = saved


@dataclass
class Scores:
    """Per-question recall@10 (and @5) of each variant on one benchmark, with each question's group."""

    groups: list[str]
    r10: dict[Variant, list[float]]
    r5: dict[Variant, list[float]]

    def mean(self, chosen: Variant, group: str | None = None) -> float:
        """Mean recall@10 of a variant, over all questions or one group."""
        values = [v for v, g in zip(self.r10[chosen], self.groups, strict=True) if group in (None, g)]
        return statistics.fmean(values) if values else 0.0


def ask_all(memory: wolfmem.Memory, where: dict, questions: Sequence[tuple[str, str, Sequence[str], object]],
            scores: Scores) -> None:
    """Ask each (group, text, evidence, today) under every variant and record the recalls."""
    memory.search("warm up the searcher", limit=1)
    for group, text, evidence, today in questions:
        scores.groups.append(group)
        for chosen in VARIANTS:
            with variant(chosen):
                hits = memory.search(text, limit=K, today=today)
            ranked = [where.get((hit.path, hit.line), "?") for hit in hits]
            scores.r10[chosen].append(recall(ranked, evidence, 10))
            scores.r5[chosen].append(recall(ranked, evidence, 5))


def locomo(folder: Path, work: Path) -> Scores:
    """Every variant's recalls on the LoCoMo conversations."""
    scores = Scores([], defaultdict(list), defaultdict(list))
    for conversation, memory, where in eval_locomo.conversations(folder, work):
        questions = [(eval_locomo.CATEGORIES[q.category], q.text, q.evidence, conversation.today)
                     for q in conversation.questions]
        ask_all(memory, where, questions, scores)
    return scores


def realtalk(folder: Path, work: Path) -> Scores:
    """Every variant's recalls on the REALTALK chats."""
    scores = Scores([], defaultdict(list), defaultdict(list))
    for chat, memory, where in eval_locomo.conversations(folder, work, eval_realtalk.load):
        questions = [(eval_realtalk.CATEGORIES[q.category], q.text, q.evidence, chat.today) for q in chat.questions]
        ask_all(memory, where, questions, scores)
    return scores


def longmemeval(folder: Path, work: Path, limit: int) -> Scores:
    """Every variant's recalls on the LongMemEval questions that have evidence."""
    scores = Scores([], defaultdict(list), defaultdict(list))
    for item, memory, where in eval_longmemeval.haystacks(folder, work, limit):
        ask_all(memory, where, [(item.kind, item.text, item.evidence, item.today)], scores)
    return scores


def report(by_benchmark: dict[str, Scores]) -> str:
    """Markdown: the leave-one-benchmark-out choice per benchmark, then every variant's recall@10."""
    off: Variant = (0.0, 1.0, 0, False)
    out = ["| held-out benchmark | variant chosen on the others (part, rarity, fade, near first) | "
           "no rules r@10 | chosen r@5 | chosen r@10 |", "|---|---|---:|---:|---:|"]
    for held_out, scores in by_benchmark.items():
        others = [s for name, s in by_benchmark.items() if name != held_out]

        def pooled(chosen: Variant, others: list[Scores] = others) -> float:
            return round(statistics.fmean(s.mean(chosen) for s in others), 6)

        best = max(VARIANTS, key=pooled)
        r5 = statistics.fmean(scores.r5[best])
        out.append(f"| {held_out} | {best} | {scores.mean(off):.3f} | {r5:.3f} | {scores.mean(best):.3f} |")
        for group in sorted(set(scores.groups)):
            out.append(f"| {held_out}: {group} | | {scores.mean(off, group):.3f} | | {scores.mean(best, group):.3f} |")
    names = list(by_benchmark)
    out += ["", f"| benchmark | before {BEFORE} r@10 | shipped {SHIPPED} r@10 | questions gained | lost |",
            "|---|---:|---:|---:|---:|"]
    for name, scores in by_benchmark.items():
        moved = [new - old for old, new in zip(scores.r10[BEFORE], scores.r10[SHIPPED], strict=True)]
        out.append(f"| {name} | {scores.mean(BEFORE):.3f} | {scores.mean(SHIPPED):.3f} | "
                   f"{sum(m > 0 for m in moved)} | {sum(m < 0 for m in moved)} |")
    out += ["", "| part | rarity | fade | near first | " + " | ".join(f"{n} r@10" for n in names) + " |",
            "|---:|---:|---:|---|" + "---:|" * len(names)]
    for chosen in VARIANTS:
        cells = " | ".join(f"{by_benchmark[n].mean(chosen):.3f}" for n in names)
        out.append(f"| {chosen[0]} | {chosen[1]} | {chosen[2]} | {chosen[3]} | {cells} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Score every variant on each benchmark and print the held-out choices."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo", type=Path, help="folder with LoCoMo conversation json files")
    parser.add_argument("longmemeval", type=Path, help="folder with LongMemEval question json files")
    parser.add_argument("--limit", type=int, default=0, help="only the first N LongMemEval questions (0: all)")
    parser.add_argument("--realtalk", type=Path, help="also a folder with REALTALK chat json files")
    args = parser.parse_args(argv)
    logging.getLogger("wolfmem").setLevel(logging.ERROR)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wolfmem-rules-") as tmp:
        by_benchmark = {"LoCoMo": locomo(args.locomo, Path(tmp)),
                        "LongMemEval": longmemeval(args.longmemeval, Path(tmp), args.limit)}
        if args.realtalk:
            by_benchmark["REALTALK"] = realtalk(args.realtalk, Path(tmp))
    print(report(by_benchmark))
    print(f"\ntotal {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
