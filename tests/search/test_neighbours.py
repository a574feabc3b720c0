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
    rows = [("a", 5), ("b", 6), ("c", 7), ("d", 8), ("e", 9), ("x", 12)]  # a heading between 9 and 12
    assert neighbours.run_of(rows, 7, span=2) == [("a", 5), ("b", 6), ("d", 8), ("e", 9)]
    assert neighbours.run_of(rows, 9, span=2) == [("c", 7), ("d", 8)]
    assert neighbours.run_of(rows, 12, span=2) == []


def test_a_neighbour_earns_a_part_of_its_best_neighbours_score() -> None:
    pool = [hit("strong", 4.0), hit("weak", 1.0)]
    near = {"strong": [("reply", 2)], "weak": [("reply", 2)]}
    earned = neighbours.credit(pool, near, part=0.5, combine="best")
    assert earned["reply"].credit == 2.0
    summed = neighbours.credit(pool, near, part=0.5, combine="sum")
    assert summed["reply"].credit == 2.5


def test_further_hits_of_one_block_give_way_to_another_block() -> None:
    crowd = [hit(f"s{n}", 10.0 - n * 0.1, section="Session 1") for n in range(5)]
    other = hit("o", 8.5, section="Session 2")
    assert "o" not in [h.doc_id for h in neighbours.diverse([*crowd, other], 3, decay=1.0)]
    spread = [h.doc_id for h in neighbours.diverse([*crowd, other], 3, decay=0.8)]
    assert spread == ["s0", "o", "s1"]  # 9.9 × 0.8 < 8.5


def test_a_reply_without_the_question_words_is_found_through_its_neighbour(memory: Memory, vault: Path) -> None:
    day(vault, "2024-01-01", {"10:00 — Session 1": [
        "Ann: What did you name the new puppy?",
        "Bo: We called him Biscuit.",
        *[f"Ann: talk about the weather, part {n}" for n in range(8)],
    ]})
    memory.sync()
    found = [h.text for h in memory.search("puppy name", limit=3)]
    assert "Bo: We called him Biscuit." in found


def test_one_long_session_does_not_take_every_slot(memory: Memory, vault: Path) -> None:
    day(vault, "2024-01-01", {"10:00 — Session 1": [f"Ann: the garden fence needs paint, note {n}" for n in range(12)]})
    day(vault, "2024-02-01", {"10:00 — Session 2": ["Bo: we fixed the garden fence"]})
    memory.sync()
    assert "episodes/2024-02-01.md" in {h.path for h in memory.search("garden fence", limit=5)}
