"""Two machines, one vault, real Syncthing: how many acknowledged saves and hand lines survive, and where.

Two Syncthing instances on 127.0.0.1 (discovery, relays and NAT off, default conflict settings) keep two
vault folders in step; each has its own `wolfmem daemon` and state folder (machine id). Both machines save
facts into knowledge/people.md at the same time while a person appends lines by hand on one. After the
engine converges, the table counts the acknowledged facts and hand lines in people.md on each machine,
those only in a conflict copy, those on no line at all, the conflict copies Syncthing made (each merged
and archived by wolfmem), and the copies left in the vault. Standalone; prints a markdown table:

    .venv/bin/python scripts/bench_sync.py --saves 30
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from synckit import Machine, acknowledged, conflict_copies, converged, lines_of, syncthing_pair

PEOPLE = "knowledge/people.md"


def scenario(work: Path, saves: int, hand: int, pause: float) -> dict[str, int]:
    """Run the two-machine scenario once; the counts."""
    a_root, b_root = work / "a" / "vault", work / "b" / "vault"
    a, b = Machine(a_root, work / "a" / "state"), Machine(b_root, work / "b" / "state")
    assert a.cli("init").returncode == 0
    hand_lines = [f"Written by hand on A, line {n}: the sea is calm." for n in range(hand)]
    with syncthing_pair(work, a_root, b_root) as pair:
        converged(pair, a_root, b_root)
        a.start()
        b.start()
        try:
            facts = {name: [(f"Person{name}{n % 4} from {name} keeps item {n}.", f"Person{name}{n % 4}")
                            for n in range(saves)] for name in ("A", "B")}
            savers = [a.save_many(facts["A"], pause), b.save_many(facts["B"], pause)]
            for line in hand_lines:
                time.sleep(max(pause * saves / max(hand, 1), 0.5))
                with open(a_root / PEOPLE, "a", encoding="utf-8") as handle:
                    handle.write(f"- {line}\n")
            saved = [fact for process in savers for fact in acknowledged(process)]
            converged(pair, a_root, b_root, quiet=5, timeout=300)
        finally:
            a.stop()
            b.stop()
    archived = sorted((a_root / ".wolfmem" / "conflicts").rglob("*.md")) if (a_root / ".wolfmem").exists() else []
    in_copies = set().union(*(set(path.read_text().splitlines()) for path in archived)) if archived else set()
    wanted = saved + hand_lines
    counts = {"acknowledged saves": len(saved), "hand lines": len(hand_lines)}
    for name, root in (("A", a_root), ("B", b_root)):
        have = lines_of(root)
        counts[f"in people.md on {name}"] = sum(item in have for item in wanted)
        counts[f"only in a conflict copy ({name})"] = sum(item not in have and f"- {item}" in in_copies
                                                          for item in wanted)
        counts[f"on no line ({name})"] = sum(item not in have and f"- {item}" not in in_copies for item in wanted)
        counts[f"duplicated lines ({name})"] = sum((root / PEOPLE).read_text().count(f"- {item}\n") > 1
                                                   for item in wanted)
        counts[f"conflict copies left in the vault ({name})"] = len(conflict_copies(root))
    counts["conflict copies Syncthing made (merged, archived)"] = len(archived)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=30, help="saves per machine")
    parser.add_argument("--hand", type=int, default=4, help="hand-written lines on machine A")
    parser.add_argument("--pause", type=float, default=0.2, help="seconds between one machine's saves")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="wolfmem-bench-sync-"))
    try:
        counts = scenario(work, args.saves, args.hand, args.pause)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"## Two machines through Syncthing ({args.saves} saves each, {args.hand} hand lines)")
    print()
    print("| count | value |")
    print("|---|---:|")
    for name, value in counts.items():
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
