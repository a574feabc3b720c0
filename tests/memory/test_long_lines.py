"""Issue 24: one long hand-written line (a pasted paragraph) made every save compare and re-index it.

Counted, not timed: the characters `reading.read` is given, and the characters a save writes to the index.
"""

from __future__ import annotations

import random

import pytest

from wolfmem import Memory
from wolfmem.core import compare
from wolfmem.search.index import FactIndex

PEOPLE = "knowledge/people.md"
WORDS = "Sarah Atlas deploy release budget team meeting coffee tea plan launch review".split()


def long_line(chars: int) -> str:
    rng = random.Random(3)
    words = [rng.choice(WORDS) + (str(rng.randint(0, 999)) if rng.random() < 0.3 else "") for _ in range(chars // 7)]
    return " ".join(words)[:chars]


@pytest.fixture
def counted(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """A vault whose people.md holds a 150 kB hand line; counts of the work the next save does."""
    memory.save("Sarah prefers tea.", "people", "Sarah")
    path = memory.vault.root / PEOPLE
    path.write_text(path.read_text("utf-8") + f"- {long_line(150_000)}\n", "utf-8")
    memory.sync()
    counts = {"read": 0, "indexed": 0}
    real_read, real_write = compare.read, FactIndex._write

    def read(text: str):  # type: ignore[no-untyped-def]
        counts["read"] += len(text)
        return real_read(text)

    def write(self, paths, doc_ids, docs):  # type: ignore[no-untyped-def]
        counts["indexed"] += sum(len(doc.text) for doc in docs)
        return real_write(self, paths, doc_ids, docs)

    compare._reading.cache_clear()
    monkeypatch.setattr(compare, "read", read)
    monkeypatch.setattr(FactIndex, "_write", write)
    return counts


@pytest.mark.parametrize("file", ["people", "projects"])
def test_a_save_beside_a_long_line_reads_and_indexes_only_short_text(memory: Memory, counted, file) -> None:
    # The fact shares the long line's words, so the index proposes that line as a candidate.
    receipt = memory.save("Sarah plans the Atlas budget review release.", file, "Sarah")
    assert receipt.status == "saved"
    assert counted["read"] <= 10_000  # the 150 kB line is never read
    assert counted["indexed"] <= 10_000


def test_a_long_line_is_compared_by_its_exact_text_only() -> None:
    line = long_line(50_000)
    assert compare.relate(line, line) is compare.Relation.DUPLICATE
    assert compare.relate(line + " more", line) is compare.Relation.UNRELATED
    assert compare.relate("Sarah plans the budget.", line) is compare.Relation.UNRELATED
    assert not compare.carries(line, "Sarah plans the budget.")
    assert compare.fact_words(line) == frozenset()
