"""Query building: rarity weights, common terms set apart, and the filters and sections around them."""

from __future__ import annotations

from pathlib import Path

import pytest

from wolfmem import Memory, UsageError
from wolfmem.search import query
from wolfmem.search.schema import Filters


def write(vault: Path, rel: str, lines: list[str]) -> None:
    """Write a vault file directly, as a user's editor would."""
    (vault / rel).parent.mkdir(parents=True, exist_ok=True)
    (vault / rel).write_text("\n".join(lines) + "\n", "utf-8")


def chat_day(vault: Path, day: str, bullets: list[str]) -> None:
    """One episode file of chat lines."""
    write(vault, f"episodes/{day}.md", [f"# {day}", "", "## 10:00 — Chat", *[f"- {b}" for b in bullets]])


@pytest.fixture
def chatty(vault: Path, memory: Memory) -> Memory:
    """A vault where 'Alice' starts more than COMMON_MIN_FACTS lines; 'kayak' is rare."""
    filler = [f"Alice: note number {n} about groceries" for n in range(query.COMMON_MIN_FACTS + 20)]
    chat_day(vault, "2024-01-01", filler)
    chat_day(vault, "2024-02-01", ["Bob: a lovely kayak trip"])
    chat_day(vault, "2024-02-02", ["Alice: a lovely kayak trip"])
    chat_day(vault, "2024-03-01", ["Alice: the kayak club meets on Sundays"])
    memory.sync()
    return memory


@pytest.mark.parametrize("text", ["what is the", "When did they?", "  ...  "])
def test_a_stop_word_only_query_is_refused(memory: Memory, text: str) -> None:
    with pytest.raises(UsageError):
        memory.search(text)


def test_stop_words_only_message_says_what_to_add(memory: Memory) -> None:
    with pytest.raises(UsageError, match="add the words that matter"):
        query.run(memory.index, "what was it", Filters(), 5)


def test_rarer_terms_weigh_more(chatty: Memory) -> None:
    terms = query.plan(chatty.index, "kayak club").searched
    assert terms["club"] == 1.0
    assert 0 < terms["kayak"] < terms["club"]


def test_common_terms_only_rerank(chatty: Memory) -> None:
    planned = query.plan(chatty.index, "Did Alice enjoy the kayak?")
    assert "alic" in planned.common and "alic" not in planned.searched
    assert "kayak" in planned.searched
    hits = chatty.search("Did Alice enjoy the lovely kayak trip?", limit=2)
    # The common name is not searched, yet it still breaks the tie between the two same lines.
    assert [h.text for h in hits] == ["Alice: a lovely kayak trip", "Bob: a lovely kayak trip"]


def test_a_query_of_only_common_terms_still_searches(chatty: Memory) -> None:
    planned = query.plan(chatty.index, "Alice")
    assert planned.searched == {"alic": 1.0} and not planned.common
    assert chatty.search("Alice", limit=1)


def test_small_vaults_search_every_term(memory: Memory, vault: Path) -> None:
    chat_day(vault, "2024-01-01", ["Alice: hello", "Alice: kayak", "Alice: bye"])
    memory.sync()
    assert set(query.plan(memory.index, "Alice kayak").searched) == {"alic", "kayak"}


def test_filters_hold_with_rescoring(chatty: Memory) -> None:
    hits = chatty.search("Alice kayak", after="2024-03-01")
    assert [h.date for h in hits] == ["2024-03-01"]
    assert {h.date for h in chatty.search("Alice kayak", before="2024-02-28")} == {"2024-02-01", "2024-02-02"}
    assert chatty.search("Alice kayak", sources="knowledge") == []


def test_knowledge_hits_keep_their_section(memory: Memory, vault: Path) -> None:
    write(vault, "knowledge/people.md", ["# People", "", "## Sarah (Manager)", "- Prefers short status updates"])
    hits = memory.search("Who is my manager?")
    assert hits and hits[0].section == "Sarah (Manager)"
    assert hits[0].text == "Prefers short status updates"


def test_a_word_finds_its_other_forms(vault: Path, memory: Memory) -> None:
    # The question's "jogging" and the fact's "jog" are one stem (Whoosh's Porter split them).
    chat_day(vault, "2024-05-20", ["User: I went for a 30-minute jog on Saturday", "User: I did yoga on Monday"])
    memory.sync()
    hits = memory.search("How many hours of jogging did I do?", limit=1)
    assert [h.text for h in hits] == ["User: I went for a 30-minute jog on Saturday"]


def test_a_vault_whose_facts_were_all_deleted_searches_to_nothing(memory: Memory, vault: Path) -> None:
    """Whoosh counts a deleted fact's terms until a merge: no live fact, yet a common term (log of 0)."""
    path = vault / "knowledge" / "people.md"
    for version in range(2):  # the facts made twice: their terms are held by more deleted facts than live ones
        path.write_text("# People\n\n" + "".join(f"- Person {n} likes tea ({version}).\n" for n in range(120)))
        memory.sync()
    path.write_text("# People\n")
    memory.sync()
    assert memory.index.count() == 0 < memory.index.doc_frequency("text", "person")
    assert memory.search("person likes tea with sugar") == []  # sugar: held by none, so searched; the rest re-rank
