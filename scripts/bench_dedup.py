"""Measure fact dedup on the labelled pairs: `compare.relate` alone, and save-time through Memory.save.

    .venv/bin/python scripts/bench_dedup.py            # relate and save-time, both pair sets
    .venv/bin/python scripts/bench_dedup.py --relate   # relate only (instant)

DUPLICATE is the positive class. A false merge (a pair that must stay apart saved as a
duplicate) is the costly error, so it is counted on its own. DEDUP_PAIRS are the pairs the rules
were designed on; DEDUP_HELDOUT were written before the rules and never used to tune them.
Save-time runs each pair in a fresh vault: save the old fact, then the new one, and count a
duplicate receipt; so it also measures whether the BM25 candidate search finds the old fact.

The meaning-change sets of issue 23 (tests/core/meaning_pairs.py, designed on; meaning_heldout.py,
written after the rule) are scored as well: how many changes of meaning were merged (must be 0) and
how many were flagged as possibly contradicting the fact on file.
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
sys.path.insert(0, str(REPO / "tests" / "core"))

from dedup_pairs import DEDUP_HELDOUT, DEDUP_PAIRS  # noqa: E402
from meaning_heldout import MEANING_HELDOUT  # noqa: E402
from meaning_pairs import MEANING_PAIRS  # noqa: E402

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


def flagged_at_save(work: Path) -> Callable[[str, str], tuple[bool, bool]]:
    """Save `old` then `new` in a fresh vault: (answered duplicate, flagged as contradicting `old`)."""

    def outcome(new: str, old: str) -> tuple[bool, bool]:
        root = Path(tempfile.mkdtemp(dir=work))
        with Memory(root / "vault", Config(state_dir=str(root / "state"))) as memory:
            first = memory.save(old)
            receipt = memory.save(new)
            return receipt.status == "duplicate", first.ref in receipt.possibly_contradicts

    return outcome


def meaning_rows(work: Path | None) -> list[str]:
    """Rows for the meaning-change sets: merged (false merges), flagged, and the held-out paraphrases."""
    rows = []
    sets = (("MEANING_PAIRS (design)", [(old, new) for old, new, _ in MEANING_PAIRS]),
            ("MEANING_HELDOUT apart", [(old, new) for old, new, kind in MEANING_HELDOUT if kind == "apart"]))
    for name, pairs in sets:
        merged = sum(relate(new, old) is Relation.DUPLICATE for old, new in pairs)
        flagged = sum(relate(new, old) is Relation.CONTRADICTS for old, new in pairs)
        rows.append(f"| {name}, relate | {len(pairs)} | {merged} | {flagged} |")
        if work is not None:
            results = [flagged_at_save(work)(new, old) for old, new in pairs]
            rows.append(f"| {name}, save-time | {len(pairs)} | {sum(d for d, _ in results)} "
                        f"| {sum(f for _, f in results)} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--relate", action="store_true", help="only compare.relate, no saves")
    args = parser.parse_args()
    print("| pairs | n | paraphrases | precision | recall | false merges |")
    print("|---|---:|---:|---:|---:|---:|")
    heldout = [(old, new, Relation.DUPLICATE if kind == "duplicate" else Relation.CONTRADICTS)
               for old, new, kind in MEANING_HELDOUT]
    sets = (("DEDUP_PAIRS (design)", DEDUP_PAIRS), ("DEDUP_HELDOUT", DEDUP_HELDOUT),
            ("MEANING_HELDOUT", [(new, old, expected) for old, new, expected in heldout]))
    for name, pairs in sets:
        print(score(pairs, relate_merges).row(f"{name}, relate"))
    with tempfile.TemporaryDirectory(prefix="wolfmem-dedup-") as work:
        if not args.relate:
            for name, pairs in sets:
                print(score(pairs, save_merges(Path(work))).row(f"{name}, save-time"))
        print()
        print("| meaning changes | n | merged | flagged |")
        print("|---|---:|---:|---:|")
        for row in meaning_rows(None if args.relate else Path(work)):
            print(row)


if __name__ == "__main__":
    main()
