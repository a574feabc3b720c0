"""What checking an ordinary hand edit costs now that a typed line is looked up among the facts wolfmem took out.

    .venv/bin/python scripts/bench_hand_edit_archive.py [N ...]   # archive sizes, default 0 1000 10000

A person's write that drops none of wolfmem's lines used to cost one set check; a write that types a new
fact line now also asks the archive whether wolfmem took that fact out of the file (`Archive.left`),
answered from memory while the archive is unchanged, read again after any record is appended. Each row:
median milliseconds of `Reconciler.check` over 20 writes of people.md (200 facts) with N archive records:
a write that only deletes a line (no lookup), one that types a line (archive unchanged), and one that
types a line right after a record was archived. Columns side by side in one run count, not absolute times.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from wolfmem import Config, Memory
from wolfmem.storage.archive import ArchivedFact, Reason, render

PEOPLE = "knowledge/people.md"
ROUNDS = 20


def _record(text: str) -> str:
    return render(ArchivedFact(text, PEOPLE, "People", "2026-12-01", Reason.FORGOTTEN, by="forget")) + "\n"


def run(records: int) -> tuple[float, float, float]:
    """Median ms of a deleting write, a typing write, and a typing write after the archive changed."""
    home = Path(tempfile.mkdtemp())
    with Memory(home / "vault", Config(state_dir=str(home / "state"))) as memory:
        path = memory.vault.root / PEOPLE
        path.write_text(path.read_text() + "\n## People\n" + "".join(f"- Person {k} likes item {k}.\n"
                                                                       for k in range(200)))
        memory.save("Sarah is my manager.", type="people", topic="Sarah")  # a recorded version to judge against
        archive = memory.vault.root / "consolidated/archive-2026-12.md"
        archive.parent.mkdir(exist_ok=True)
        old = "".join(_record(f"Old fact {k} was true.") for k in range(records))
        archive.write_text("# Archive 2026-12\n\n" + old)
        memory.services.archive.left(PEOPLE)

        def check(text: str) -> float:
            path.write_text(text)
            start = time.perf_counter()
            memory.reconciler.check(PEOPLE)
            return (time.perf_counter() - start) * 1000

        deleting, typing, changed = [], [], []
        for k in range(ROUNDS):
            typing.append(check(path.read_text() + f"- Typed line {k}.\n"))
            with open(archive, "a", encoding="utf-8") as handle:
                handle.write(_record(f"New fact {k} was true."))
            changed.append(check(path.read_text() + f"- Typed again {k}.\n"))
            deleting.append(check(path.read_text().replace(f"- Typed line {k}.\n", "")))
        return statistics.median(deleting), statistics.median(typing), statistics.median(changed)


def main() -> None:
    print("| archive records | deletes a line (ms) | types a line (ms) | types a line after an archive write (ms) |")
    print("|---:|---:|---:|---:|")
    for records in map(int, sys.argv[1:] or ["0", "1000", "10000"]):
        deleting, typing, changed = run(records)
        print(f"| {records:,} | {deleting:.2f} | {typing:.2f} | {changed:.2f} |")


if __name__ == "__main__":
    main()
