"""A fact's neighbours in the ranking: credited from their own text, and one block kept from filling the list."""

from __future__ import annotations

from pathlib import Path

from wolfmem import Memory
from wolfmem.search import neighbours
from wolfmem.search.schema import IndexHit


def hit(doc_id: str, score: float, path: str = "episodes/2024-01-01.md", section: str = "A", line: int = 1) -> IndexHit:
    return IndexHit(path, "episodes", section, line, doc_id, "2024-01-01", score, doc_id)


def day(vault: Path, when: str, sessions: dict[str, list[str]]) -> None:
    """One episode file with a block of bullets per session heading."""
    lines = [f"# {when}"]
    for heading, bullets in sessions.items():
        lines += ["", f"## {heading}", *[f"- {b}" for b in bullets]]
    (vault / "episodes").mkdir(parents=True, exist_ok=True)
    (vault / "episodes" / f"{when}.md").write_text("\n".join(lines) + "\n", "utf-8")


def test_neighbours_are_the_lines_up_to_the_span_within_one_run() -> None:
    rows = {5: "a", 6: "b", 7: "c", 8: "d", 9: "e", 12: "x"}  # a heading between 9 and 12
    assert neighbours.run_of(rows, 7, span=2) == [("a", 5), ("b", 6), ("d", 8), ("e", 9)]
    assert neighbours.run_of(rows, 9, span=2) == [("c", 7), ("d", 8)]
    assert neighbours.run_of(rows, 12, span=2) == []


def test_a_neighbour_earns_a_part_of_its_best_neighbours_score() -> None:
    pool = [hit("strong", 4.0), hit("weak", 1.0)]
    earned = neighbours.credit(pool, {"strong": [("reply", 2)], "weak": [("reply", 2), ("strong", 1)]}, part=0.5)
    assert earned["reply"].credit == 2.0
    assert earned["strong"].credit == 0.5  # a pooled hit earns from its neighbours too


def test_a_reply_without_the_question_words_is_found_through_its_neighbour(memory: Memory, vault: Path) -> None:
    day(vault, "2024-01-01", {"10:00 — Session 1": [
        "Ann: What did you name the new puppy?",
        "Bo: We called him Biscuit.",
        *[f"Ann: a name for the weather, part {n}" for n in range(8)],
    ]})
    memory.sync()
    found = [h.text for h in memory.search("puppy name", limit=3)]
    assert "Bo: We called him Biscuit." in found
