"""Issue 23: facts that share their words but say something else are never duplicates, and are flagged."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from meaning_pairs import MEANING_PAIRS

from wolfmem import Memory
from wolfmem.core import reading
from wolfmem.core.compare import Relation, carries, duplicates, relate, subject_key

KINDS = ("order", "negation", "aspect", "preposition", "modal", "tense", "quantifier", "number")


def test_the_set_covers_every_kind() -> None:
    counts = Counter(kind for *_, kind in MEANING_PAIRS)
    assert len(MEANING_PAIRS) >= 100
    assert set(counts) == set(KINDS)
    assert min(counts.values()) >= 5
    assert len({old for old, *_ in MEANING_PAIRS}) == len(MEANING_PAIRS)  # not one sentence templated


@pytest.mark.parametrize(("old", "new", "kind"), MEANING_PAIRS)
def test_a_meaning_change_is_a_possible_contradiction(old: str, new: str, kind: str) -> None:
    # Either way round: never "already on file", always flagged so the agent can tell the user.
    assert relate(new, old) is Relation.CONTRADICTS
    assert relate(old, new) is Relation.CONTRADICTS


@pytest.mark.parametrize(("old", "new", "kind"), MEANING_PAIRS)
def test_saving_a_meaning_change_writes_it_and_names_the_line(memory: Memory, old: str, new: str, kind: str) -> None:
    first = memory.save(old)
    receipt = memory.save(new)
    assert receipt.status == "saved"
    assert receipt.possibly_contradicts == [first.ref]
    assert first.ref in receipt.message
    assert receipt.ref != first.ref


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Prefers tabs over spaces", "Prefers tabs over spaces."),
        ("Sarah is my manager", "My manager is Sarah"),
        ("Deploys never happen on Fridays", "On Fridays deploys never happen"),
        ("Meeting on June 3rd", "Meeting on 3 June"),
        ("The rent is $5000 a month", "The rent is 5000 dollars a month"),
        ("The team uses Python 3.11", "Python 3.11 is used by the team"),
        ("Likes tea and coffee", "Likes coffee and tea"),
        ("Sarah gave up sugar", "Sarah gave sugar up"),
        ("The cron job for cleanup runs at 02:00", "The cleanup cron job runs at 02:00"),
        ("Tom's manager is Sarah", "The manager of Tom is Sarah"),
    ],
)
def test_paraphrases_that_keep_every_role_stay_duplicates(old: str, new: str) -> None:
    assert relate(new, old) is Relation.DUPLICATE
    assert relate(old, new) is Relation.DUPLICATE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Alice was replaced by Bob", "Alice replaced Bob"),  # a passive keeps its agent's role
        ("The cat was chased by the dog", "The cat chased the dog"),
        ("The frontend waits for the backend", "The backend waits for the frontend"),
        ("The team of Sarah owns billing", "The team of billing owns Sarah"),
        ("Likes tea and the cake", "Likes the cake"),
        # The names keep their order, but the noun moves from one to the other across "is".
        ("Tom's manager is Sarah", "Tom is Sarah's manager"),
        ("The manager of Tom is Sarah", "Tom is Sarah's manager"),
        ("Ana's mentor is Priya", "Ana is the mentor of Priya"),
        ("The CTO's assistant is Maya", "The CTO is Maya's assistant"),  # a noun after "is", not a verb
        ("The CTO's lead is Maya", "The CTO is Maya's lead"),
    ],
)
def test_the_paraphrase_moves_do_not_swap_roles(old: str, new: str) -> None:
    assert relate(new, old) is not Relation.DUPLICATE
    assert relate(old, new) is not Relation.DUPLICATE


@pytest.mark.parametrize(
    ("heading", "fact", "headings", "subject"),
    [
        ("Sarah (Manager)", "Prefers tea", [], {"sarah"}),
        ("Unfiled", "My manager is Sarah", ["Sarah (Manager)"], {"sarah"}),
        ("Unfiled", "Prefers tea", ["Sarah (Manager)"], set()),
        (None, "Prefers tea", ["Sarah (Manager)"], set()),  # a save without a topic: the user's
        ("Build", "We chose uv over pip", [], set()),  # "we": the user, whatever the heading
        ("Tom", "Prefers tea", [], {"tom"}),
    ],
)
def test_subject_key(heading: str | None, fact: str, headings: list[str], subject: set[str]) -> None:
    assert subject_key(heading, fact, headings) == frozenset(subject)


def test_the_same_words_about_two_people_are_not_duplicates() -> None:
    sarah, tom = subject_key("Sarah", "Prefers tea"), subject_key("Tom", "Prefers tea")
    assert not duplicates("Prefers tea", tom, "Prefers tea", sarah)
    assert duplicates("Prefers tea", sarah, "Prefers tea.", sarah)


def test_a_save_for_someone_else_is_not_their_duplicate(memory: Memory) -> None:
    sarah = memory.save("Prefers tabs over spaces", type="people", topic="Sarah")
    tom = memory.save("Prefers tabs over spaces", type="people", topic="Tom")
    assert tom.status == "saved" and tom.section == "Tom"
    assert tom.possibly_contradicts == []  # the same words of two people contradict nothing
    again = memory.save("Prefers tabs over spaces", type="people", topic="Sarah")
    assert again.status == "duplicate" and again.duplicate_of == sarah.ref
    # Without a topic the fact is the user's: neither Sarah's nor Tom's line repeats it.
    mine = memory.save("Prefers tabs over spaces", type="people")
    assert mine.status == "saved" and mine.section == "Unfiled"


def test_a_contradiction_about_someone_else_is_not_flagged(memory: Memory) -> None:
    memory.save("Prefers tabs over spaces", type="people", topic="Sarah")
    receipt = memory.save("Prefers spaces over tabs", type="people", topic="Tom")
    assert receipt.status == "saved" and receipt.possibly_contradicts == []


def test_reading_a_line_is_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 24: a 150 kB hand-written line made the comparison quadratic. Count the characters the
    # sentence-start check scans (it once re-read everything before each word): a bounded share each.
    scanned = 0
    pattern = reading._SENTENCE_START

    class Counting:
        def search(self, text: str, *args: int) -> re.Match[str] | None:
            nonlocal scanned
            scanned += len(text)
            return pattern.search(text, *args)

    monkeypatch.setattr(reading, "_SENTENCE_START", Counting())
    line = " ".join(f"Word{i % 97} goes over thing{i % 89} and Sarah." for i in range(1500))
    relate(line, line + " again")
    assert scanned <= 4 * len(line)


def test_heldout_meaning_changes_never_merge() -> None:
    from meaning_heldout import MEANING_HELDOUT

    apart = [(old, new) for old, new, expected in MEANING_HELDOUT if expected == "apart"]
    assert len(MEANING_HELDOUT) >= 30 and len(apart) >= 15
    for old, new in apart:
        assert Relation.DUPLICATE not in (relate(new, old), relate(old, new)), (old, new)


@pytest.mark.parametrize(
    ("line", "fact", "expected"),
    [
        ("Sarah was my manager", "Sarah is my manager", False),  # another time
        ("Only Sarah has access to the vault", "Sarah has access to the vault", False),
        ("Interns must push to main", "Interns can push to main", False),
        ("Sarah no longer works at Acme", "Sarah works at Acme", False),
        ("Prefers spaces over tabs", "Prefers tabs over spaces", False),
        ("Tom has a cat called Rex", "Tom has a cat", True),  # detail, in its own words
        ("Prefers tabs in Go", "Prefers tabs", True),
        ("Sarah, my manager, prefers green tea", "Sarah prefers tea", True),
    ],
)
def test_a_line_carries_a_fact_only_with_its_function_words(line: str, fact: str, expected: bool) -> None:
    # Curation's evidence rule: a rewrite that changes a fact's tense, modal or quantifier does not carry it.
    assert carries(line, fact) is expected
