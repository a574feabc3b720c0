"""A fact's neighbours in the ranking: credited from their own text, and one block kept from filling the list."""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path

import pytest

from wolfmem import Config, Memory
from wolfmem.search import neighbours, query
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


def test_equal_credits_go_to_the_nearer_line_and_the_reply_first() -> None:
    pool = [hit("q", 4.0, line=5), hit("far", 4.0, line=8)]
    near = {"q": [("a", 3), ("b", 4), ("r", 6), ("s", 7)], "far": [("s", 7), ("t", 9)]}
    earned = neighbours.credit(pool, near, part=0.5)
    assert earned["s"].offset == -1  # credited from "far", one line below it, not from "q", two lines above
    ranked = [n.doc_id for n in sorted(earned.values(), key=neighbours.order)]
    assert ranked == ["r", "t", "b", "s", "a"]


def test_the_reply_to_a_hit_is_the_neighbour_the_list_keeps(memory: Memory, vault: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    day(vault, "2024-01-01", {"10:00 — Session 1": [
        "Ann: I cooked pasta for lunch",
        "Bo: I had soup",
        "Ann: Did you ever go to the aquarium?",
        "Bo: Yes, we saw a huge turtle there.",
        "Ann: I should go some time",
    ]})
    memory.sync()
    # The question's four neighbours earn the same credit; with room for one, the reply gets it.
    assert [h.text for h in memory.search("aquarium", limit=2)] == [
        "Ann: Did you ever go to the aquarium?", "Bo: Yes, we saw a huge turtle there."]
    monkeypatch.setattr(neighbours, "NEAR_FIRST", False)  # in line order, the line two above came first
    assert memory.search("aquarium", limit=2)[1].text == "Ann: I cooked pasta for lunch"


def test_the_first_hits_are_the_same_whatever_limit_is_asked(memory: Memory, vault: Path) -> None:
    rng = random.Random(7)
    words = ["kayak", "river", "garden", "violin", "recipe", "camera", "hiking", "piano", "bread", "tennis"]
    for number in range(1, 4):
        day(vault, f"2024-02-0{number}", {
            f"{hour:02d}:00 — Session {number}{hour}": [" ".join(rng.choices(words, k=rng.randint(2, 7)))
                                                      for _line in range(rng.randint(4, 12))]
            for hour in range(8, 16)
        })
    memory.sync()
    questions = ["kayak on the river", "violin and piano", "bread recipe", "tennis camera hiking",
                 "the kayak and the river on 2 February 2024", "bread on 1 February 2024"]  # the other days fade
    for question in questions:
        longest = [(h.path, h.line) for h in memory.search(question, limit=query.POOL, today="2024-03-01")]
        assert len(longest) == query.POOL
        for limit in range(1, query.POOL):
            hits = memory.search(question, limit=limit, today="2024-03-01")
            assert [(h.path, h.line) for h in hits] == longest[:limit], (question, limit)


def test_a_faded_fact_nearer_the_named_day_wins_at_any_limit(memory: Memory, vault: Path) -> None:
    day(vault, "2023-12-01", {"09:00 — Session 1": [f"kayak river kayak river, outing {n}" for n in range(12)]})
    day(vault, "2024-02-02", {"09:00 — Session 2": ["a quiet day at home"]})
    day(vault, "2024-02-16", {"09:00 — Session 3": ["a kayak trip with friends"]})
    memory.sync()
    # Nothing near the named day: the strong lines two months out fade to almost nothing, the weak one a week
    # past the day's slack to a half, whatever the limit the candidates are taken at.
    for limit in (1, 5, 10):
        hits = memory.search("kayak river on 2 February 2024", limit=limit, today="2024-03-01")
        assert hits[0].text == "a kayak trip with friends", limit


def test_a_neighbour_told_outside_the_dates_asked_leaves_the_list_for_the_next(vault: Path, config: Config) -> None:
    now = [datetime(2024, 1, 1, 9, 0).astimezone()]
    memory = Memory(vault, config, clock=lambda: now[0])
    facts = vault / "knowledge" / "technical.md"
    old = ["- the tent has two poles", "- the stove runs on gas", "- the rope is blue"]
    facts.write_text("# Technical\n\n## Camping\n" + "\n".join(old) + "\n", "utf-8")
    memory.sync()  # the three lines are first seen on 1 January
    now[0] = datetime(2024, 1, 5, 9, 0).astimezone()
    facts.write_text("# Technical\n\n## Camping\n- the lantern needs batteries\n" + "\n".join(
        [old[0], "- the kayak paddle is carbon", *old[1:]]) + "\n", "utf-8")
    memory.sync()  # the lantern and the kayak are first seen on 5 January
    # The kayak's nearest neighbours are January's first lines, earning as much as the lantern, two lines up;
    # told before the dates asked, each leaves the list when it would be on it, and the lantern moves up.
    hits = memory.search("kayak paddle", limit=2, after="2024-01-05")
    assert [h.text for h in hits] == ["the kayak paddle is carbon", "the lantern needs batteries"]
    assert [h.date for h in memory.search("kayak paddle", limit=3)] == ["2024-01-05", "2024-01-01", "2024-01-01"]
    memory.close()
