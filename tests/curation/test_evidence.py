"""Table tests for curation's evidence rules: carrying, same subject, backing, the budget, and the candidate indexes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wolfmem.core.compare import Relation, backs, carries, relate, same_subject
from wolfmem.core.facts import normalise
from wolfmem.core.markdown import parse
from wolfmem.curation.budget import removal_budget
from wolfmem.curation.candidates import DuplicateFinder, WordIndex
from wolfmem.curation.contract import Change, ChangeKind
from wolfmem.curation.evidence import (
    Safeguards,
    account,
    evidence_lines,
)
from wolfmem.curation.forgotten import readded
from wolfmem.storage.archive import Reason

# (line, fact, carried): does the line say everything the fact says?
CARRIES = [
    ("Sarah prefers tea.", "Sarah prefers tea.", True),
    ("Sarah, my manager, prefers tea.", "Sarah prefers tea.", True),
    ("Sarah, my manager, prefers tea.", "Sarah is my manager.", True),
    ("Tom lives in Berlin, Germany.", "Tom lives in Berlin.", True),
    ("Tom lives in Oslo.", "Tom lives in Berlin.", False),  # a value changed
    ("Sarah and Tom are colleagues.", "Sarah prefers tea.", False),  # a summary sharing a word
    ("Tom does not live in Berlin.", "Tom lives in Berlin.", False),  # negation
    ("Bob reports to Sarah.", "Sarah reports to Bob.", False),  # roles swapped
    ("Tom's office is on floor 3.", "Tom's desk is on floor 4.", False),
    ("The deploy runs at 5pm on Fridays.", "The deploy runs on Fridays.", True),
    ("The deploy runs on Fridays.", "The deploy runs at 5pm on Fridays.", False),  # the detail is lost
]


@pytest.mark.parametrize(("line", "fact", "carried"), CARRIES)
def test_carries(line, fact, carried):
    assert carries(line, fact) is carried


SAME_SUBJECT = [
    ("Tom lives in Oslo.", "Tom lives in Berlin.", True),
    ("Alice leads Project Atlas.", "Bob leads Project Atlas.", True),
    ("Tom dislikes long meetings.", "Tom always hates meetings.", True),
    ("Tom lives in Oslo.", "Tom runs the data team.", False),  # only the name is shared
    ("Sarah is my manager.", "Sarah prefers tea.", False),
]


@pytest.mark.parametrize(("new", "old", "same"), SAME_SUBJECT)
def test_same_subject(new, old, same):
    assert same_subject(new, old) is same


# (evidence, new, old, backed): does a line that arrived since the last run support new replacing old?
BACKS = [
    ("Tom said he moved to Oslo.", "Tom lives in Oslo.", "Tom lives in Berlin.", True),
    ("Alice took over Atlas from Bob today.", "Alice leads Project Atlas.", "Bob leads Project Atlas.", True),
    ("Tom said he only dislikes long meetings.", "Tom dislikes long meetings.", "Tom always hates meetings.", True),
    ("Tom moved to Paris.", "Tom lives in Oslo.", "Tom lives in Berlin.", False),  # another value
    ("Sarah left the company.", "Tom lives in Oslo.", "Tom lives in Berlin.", False),  # another subject
    ("We talked about Oslo.", "Tom lives in Oslo.", "Tom lives in Berlin.", False),  # the subject is missing
    ("Tom is still in Berlin, he said.", "Tom does not live in Berlin.", "Tom lives in Berlin.", False),
]


@pytest.mark.parametrize(("evidence", "new", "old", "backed"), BACKS)
def test_backs(evidence, new, old, backed):
    assert backs(evidence, new, old) is backed


@pytest.mark.parametrize(("facts", "allowed"), [(1, 1), (4, 1), (9, 1), (10, 2), (24, 4), (50, 10), (500, 10)])
def test_removal_budget_is_a_fifth_between_one_and_ten(facts, allowed):
    assert removal_budget(facts) == allowed


OLD = """# People

## Sarah
- Sarah is my manager.
- Sarah prefers tea.

## Tom
- Tom lives in Berlin.
- Tom runs the data team.
- Tom has a bike.
"""


def change(kind, old, new="", reason=""):
    return Change(ChangeKind(kind), tuple(old), new, reason)


def test_account_explains_each_departure_from_the_texts():
    new = OLD.replace("- Sarah is my manager.\n- Sarah prefers tea.\n", "- Sarah, my manager, prefers tea.\n")
    new = new.replace("Tom lives in Berlin.", "Tom lives in Oslo.").replace("- Tom has a bike.\n", "")
    both = ["- Sarah is my manager.", "- Sarah prefers tea."]
    changes = [change("merged", both, "- Sarah, my manager, prefers tea."),
               change("superseded", ["- Tom lives in Berlin."], "- Tom lives in Oslo.", "he moved"),
               change("removed", ["- Tom has a bike."], reason="trivia")]
    guards = Safeguards(evidence=("Tom said he moved to Oslo.",), budget=False)
    result = account(parse(OLD), parse(new), changes, guards)
    assert result.reasons == []
    assert [(d.fact, d.reason, d.into) for d in result.departures] == [
        ("Sarah is my manager.", Reason.MERGED, "Sarah, my manager, prefers tea."),
        ("Sarah prefers tea.", Reason.MERGED, "Sarah, my manager, prefers tea."),
        ("Tom lives in Berlin.", Reason.SUPERSEDED, "Tom lives in Oslo."),
        ("Tom has a bike.", Reason.REMOVED, ""),
    ]
    # Merging two facts into one new line costs one; a reworded line none; a removal one.
    assert "takes 2 of 5 facts out" in account(parse(OLD), parse(new), changes,
                                                 Safeguards(evidence=guards.evidence)).over_budget


def test_account_counts_lines_not_sets():
    doubled = OLD.replace("- Tom has a bike.\n", "- Tom has a bike.\n- Tom has a bike.\n")
    once = account(parse(doubled), parse(OLD), [], Safeguards())
    assert once.reasons == [] and [(d.reason, d.counted) for d in once.departures] == [(Reason.MERGED, False)]


def test_a_move_names_another_curated_file_of_the_run():
    new = OLD.replace("- Tom runs the data team.\n", "")
    moved = [change("moved", ["- Tom runs the data team."], "knowledge/projects.md")]
    refused = account(parse(OLD), parse(new), moved, Safeguards())
    assert "not another curated file of this run" in refused.reasons[0]
    accepted = account(parse(OLD), parse(new), moved, Safeguards(move_targets=frozenset({"knowledge/projects.md"})))
    assert [(d.reason, d.into) for d in accepted.departures] == [(Reason.MOVED, "knowledge/projects.md")]


def test_readded_finds_new_lines_carrying_a_forgotten_fact():
    new = OLD + "- Tom has a red bike.\n- Tom likes chess.\n"
    found = readded(parse(OLD.replace("- Tom has a bike.\n", "")), parse(new), ["Tom has a bike."])
    assert [fact.text for fact in found] == ["Tom has a bike.", "Tom has a red bike."]


def test_evidence_lines_drop_headings_and_markers():
    episode = "# 2026-11-29\n\n## 09:00 — Tom\n- Tom moved to Oslo.\n\n  * He likes it.\n"
    assert evidence_lines([episode, "- Sarah left."]) == ("Tom moved to Oslo.", "He likes it.", "Sarah left.")


def test_word_index_finds_a_carrier_among_many_lines():
    index: WordIndex[str] = WordIndex()
    lines = [f"Person {n} likes item {n}." for n in range(1000)] + ["Sarah, my manager, prefers green tea."]
    for line in lines:
        index.add(line, line)
    assert index.carriers("Sarah prefers tea.", carries, lambda line: line) == lines[-1]
    assert index.carriers("Sarah prefers coffee.", carries, lambda line: line) is None


WORDS = st.sampled_from("Tom Sarah leads leader likes tea coffee not the data team 3 4 Monday Berlin".split())


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(WORDS, min_size=1, max_size=5).map(" ".join), min_size=1, max_size=12))
def test_the_duplicate_finder_finds_what_comparing_every_pair_finds(texts):
    """Against the quadratic definition: a fact is a duplicate iff some earlier kept fact relates as one."""
    finder = DuplicateFinder(texts)
    kept: list[str] = []
    for text in texts:
        pairwise = any(normalise(text) == normalise(other) or relate(text, other) is Relation.DUPLICATE
                       for other in kept)
        slot = finder.find(text)
        assert (slot is not None) == pairwise, (text, kept)
        if slot is None:
            finder.keep(text, len(kept))
            kept.append(text)
