"""Invisible characters in a fact never make a changed fact read as the same one, and never crash a comparison.

A zero-width joiner between two digits split "7\u200d77" into the words "7" and "77": "Eve's code is 7"
then passed as a duplicate of a hand line that shows "777". Facts are compared as a reader sees them;
a bidi override, which shows characters in another order than they are spelt, leaves only exact equality.
"""

from __future__ import annotations

import pytest

from wolfmem import Memory
from wolfmem.core.compare import Relation, carries, relate

# (a hand line holding an invisible character, a fact that shows something else)
CHANGED = [
    ("Eve's code is 7\u200d77.", "Eve's code is 7."),  # zero-width joiner: shows 777
    ("Bob's room is 1\u20602.", "Bob's room is 1 2."),  # word joiner: shows 12
    ("Tom is n\u200bot my manager.", "Tom is my manager."),  # zero-width space inside "not"
    ("Room \u202e12\u202c is Ann's.", "Room 12 is Ann's."),  # right-to-left override: shows 21
    ("Ann's budget is 40\u0338 euros.", "Ann's budget is 40 euros."),  # a combining stroke through the 0
]
# (a hand line holding an invisible character, the same fact as a reader sees it)
SAME = [
    ("Sarah's budget is 4\u200b0 euros.", "Sarah's budget is 40 euros."),
    ("Eve's code is 7\u200d77.", "Eve's code is 777."),
    ("Max is my\u00ad manager.", "Max is my manager."),
    ("Lea is my\u200e manager.", "Lea is my manager."),  # a left-to-right mark places no letter
]


@pytest.mark.parametrize(("old", "new"), CHANGED)
def test_a_changed_fact_is_never_the_same_as_an_invisibly_marked_line(old: str, new: str) -> None:
    for a, b in ((new, old), (old, new)):
        assert relate(a, b) is not Relation.DUPLICATE
    assert not carries(old, new)


@pytest.mark.parametrize(("old", "new"), SAME)
def test_what_a_reader_sees_as_the_same_fact_is_a_duplicate(old: str, new: str) -> None:
    assert relate(new, old) is Relation.DUPLICATE and relate(old, new) is Relation.DUPLICATE


def test_a_save_is_compared_with_hand_lines_as_they_show(memory: Memory, vault) -> None:
    people = vault / "knowledge/people.md"
    hand = ["Eve's code is 7\u200d77.", "Tom is n\u200bot my manager.", "Sarah's budget is 4\u200b0 euros.",
            "Odd \x00\u0301\u202e\u2066 marks \u200d\u200d."]  # the last one must crash nothing
    people.write_text("# People\n\n## Everyone\n" + "".join(f"- {line}\n" for line in hand), "utf-8")
    memory.sync()
    changed = memory.save("Eve's code is 7.", "people", "Everyone")
    assert changed.status == "saved" and "contradict" in changed.message
    assert "contradict" in memory.save("Tom is my manager.", "people", "Everyone").message
    assert memory.save("Sarah's budget is 40 euros.", "people", "Everyone").status == "duplicate"
    assert "- Eve's code is 7.\n" in people.read_text("utf-8")
