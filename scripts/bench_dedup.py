"""Measure fact dedup on the labelled pairs: `compare.relate` alone, and save-time through Memory.save.

    .venv/bin/python scripts/bench_dedup.py            # relate and save-time, both pair sets
    .venv/bin/python scripts/bench_dedup.py --relate   # relate only (instant)

DUPLICATE is the positive class. A false merge (a pair that must stay apart saved as a
duplicate) is the costly error, so it is counted on its own. DEDUP_PAIRS are the pairs the rules
were designed on; DEDUP_HELDOUT were written before the rules and never used to tune them.
Save-time runs each pair in a fresh vault: save the old fact, then the new one, and count a
duplicate receipt; so it also measures whether the BM25 candidate search finds the old fact.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from dedup_pairs import DEDUP_HELDOUT, DEDUP_PAIRS  # noqa: E402

from wolfmem import Config, Memory  # noqa: E402
from wolfmem.core.compare import Relation, relate  # noqa: E402

Pair = tuple[str, str, Relation]


@dataclass(frozen=True)
class Score:
    """Dedup counts over one pair set."""

    pairs: int
    positives: int
    caught: int
    false_merges: int

    @property
    def precision(self) -> float:
        """Share of merges that were right."""
        return self.caught / max(self.caught + self.false_merges, 1)

    @property
    def recall(self) -> float:
        """Share of paraphrases caught."""
        return self.caught / max(self.positives, 1)

    def row(self, label: str) -> str:
        """One markdown table row."""
        return (f"| {label} | {self.pairs} | {self.positives} | {self.precision:.2f} | {self.recall:.2f} "
                f"| {self.false_merges} |")


def score(pairs: list[Pair], merged: Callable[[str, str], bool]) -> Score:
    """Count caught paraphrases and false merges of `merged(new, old)` over `pairs`."""
    caught = false_merges = 0
    for new, old, expected in pairs:
        got = merged(new, old)
        caught += got and expected is Relation.DUPLICATE
        false_merges += got and expected is not Relation.DUPLICATE
    positives = sum(expected is Relation.DUPLICATE for *_, expected in pairs)
    return Score(len(pairs), positives, caught, false_merges)


def relate_merges(new: str, old: str) -> bool:
    """Whether relate calls the pair a duplicate."""
    return relate(new, old) is Relation.DUPLICATE


def save_merges(work: Path) -> Callable[[str, str], bool]:
    """A `merged` that saves `old` then `new` into a fresh vault under `work`."""

    def merged(new: str, old: str) -> bool:
        root = Path(tempfile.mkdtemp(dir=work))
        with Memory(root / "vault", Config(state_dir=str(root / "state"))) as memory:
            memory.save(old)
            return memory.save(new).status == "duplicate"

    return merged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--relate", action="store_true", help="only compare.relate, no saves")
    args = parser.parse_args()
    print("| pairs | n | paraphrases | precision | recall | false merges |")
    print("|---|---:|---:|---:|---:|---:|")
    sets = (("DEDUP_PAIRS (design)", DEDUP_PAIRS), ("DEDUP_HELDOUT", DEDUP_HELDOUT))
    for name, pairs in sets:
        print(score(pairs, relate_merges).row(f"{name}, relate"))
    if args.relate:
        return
    with tempfile.TemporaryDirectory(prefix="wolfmem-dedup-") as work:
        for name, pairs in sets:
            print(score(pairs, save_merges(Path(work))).row(f"{name}, save-time"))


if __name__ == "__main__":
    main()
