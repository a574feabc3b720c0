"""Table tests for wolfmem.wording: word forms, light verbs and the word orders that keep roles."""

from __future__ import annotations

import re

import pytest
from dedup_pairs import DEDUP_HELDOUT, DEDUP_PAIRS

from wolfmem.core import tokens as text
from wolfmem.core import wording


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("focus", "focused"),  # Porter made "focu" of the first
        ("focuses", "focusing"),
        ("wrote", "writes"),
        ("written", "write"),
        ("led", "leads"),
        ("built", "building"),
        ("chose", "chooses"),
        ("ran", "runs"),
        ("tagged", "tag"),
        ("planned", "plans"),
    ],
)
def test_stem_reads_word_forms_alike(one: str, other: str) -> None:
    assert wording.stem(one) == wording.stem(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [("lead", "leader"), ("like", "dislike"), ("before", "after"), ("light", "dark"), ("best", "good")],
)
def test_stem_keeps_different_words_apart(one: str, other: str) -> None:
    assert wording.stem(one) != wording.stem(other)


@pytest.mark.parametrize(
    ("noun", "others", "expected"),
    [
        ("leader", {"lead", "team"}, "lead"),
        ("owner", {"own"}, "own"),
        ("writer", {"write"}, "write"),  # writ(e)-r
        ("runner", {"run"}, "run"),  # run-n-er
        ("editor", {"edit"}, "edit"),
        ("leader", {"leader", "lead"}, "leader"),  # the other fact has the noun too
        ("leader", {"team"}, "leader"),  # no verb to fold into
        ("team", {"te"}, "team"),  # not an agent noun
    ],
)
def test_agent_base(noun: str, others: set[str], expected: str) -> None:
    assert wording.agent_base(noun, frozenset(others)) == expected


@pytest.mark.parametrize(
    ("token", "following", "light"),
    [
        ("works", "on", True),
        ("working", "at", True),
        ("worked", "for", True),
        ("serves", "as", True),
        ("acts", "as", True),
        ("works", "with", False),  # "works with Rosa" is not "is with Rosa"
        ("works", None, False),
        ("leads", "on", False),
    ],
)
def test_is_light(token: str, following: str | None, light: bool) -> None:
    assert wording.is_light(token, following) is light


ALL_FACTS = sorted({fact for new, old, _ in DEDUP_PAIRS + DEDUP_HELDOUT for fact in (new, old)})
TRICKY = ["Sarah's team owns it", "İstanbul office", "don't ship", "atlas-dev and v1.2.3", "a,b & c"]


@pytest.mark.parametrize("fact", ALL_FACTS + TRICKY)
def test_tokens_with_gaps_are_the_index_tokens(fact: str) -> None:
    assert [token for token, _ in wording.tokens_with_gaps(fact)] == text.tokens(fact)


def test_tokens_with_gaps_keep_the_punctuation_between() -> None:
    assert wording.tokens_with_gaps("Ana, Ben & Chloe's team") == [
        ("ana", ""), ("ben", ", "), ("chloe", " & "), ("team", "'s ")
    ]


def _orders(fact: str) -> frozenset[wording.Order]:
    """value_orders with every capitalised word (and number) as a value, as compare.relate marks them."""
    tokens = []
    for word, gap in wording.tokens_with_gaps(fact):
        shown = re.search(rf"\b{re.escape(word)}\b", fact, re.IGNORECASE)
        is_value = word.isdigit() or bool(shown and shown.group()[0].isupper() and shown.start() > 0)
        tokens.append(wording.Token(word, gap, f"w:{word}" if is_value else None))
    return wording.value_orders(tokens)


@pytest.mark.parametrize(
    ("one", "other", "same_roles"),
    [
        ("uses Kafka and Postgres", "uses Postgres and Kafka", True),
        ("the team is Ana, Ben and Chloe", "the team is Chloe, Ana and Ben", True),
        ("ports 80 and 443 are open", "ports 443 and 80 are open", True),
        ("the SSH key for GitHub", "the GitHub SSH key", True),
        ("the lead of Atlas is Dave", "the Atlas lead is Dave", True),
        ("met Dave Smith and Ana Lopez", "met Ana Lopez and Dave Smith", True),
        ("met Dave Smith and Ana Lopez", "met Smith Dave and Lopez Ana", False),  # names keep their word order
        ("reports to Bob from Sarah", "reports to Sarah from Bob", False),
        ("so Sarah, Bob's manager, likes tea", "so Bob, Sarah's manager, likes tea", False),  # an aside
        ("so Sarah works for Bob", "so Bob works for Sarah", False),  # no determiner: no compound
        ("the flight from Berlin to Paris", "the flight from Paris to Berlin", False),
        ("the service for EU calls the US gateway", "the service for US calls the EU gateway", False),
        ("moved from 9 to 10", "moved from 10 to 9", False),
        ("ran Linux, then Debian", "ran Debian, then Linux", False),  # a comma without "and"
        ("the team that Sarah manages for Bob", "the team that Bob manages for Sarah", False),  # a clause
        ("the engineer Sarah hired for Bob", "the engineer Bob hired for Sarah", False),  # names after a noun
    ],
)
def test_value_orders(one: str, other: str, same_roles: bool) -> None:
    assert bool(_orders(one) & _orders(other)) is same_roles


def test_project_keeps_one_kind() -> None:
    tokens = [wording.Token("port", "", "w:port"), wording.Token("80", " ", "n:80"),
              wording.Token("and", " "), wording.Token("443", " ", "n:443")]
    orders = wording.value_orders(tokens)
    assert wording.project(orders, "n:") == {(frozenset({("n:80",), ("n:443",)}),)}
    assert wording.values(wording.project(orders, "n:")) == ["n:443", "n:80"]
