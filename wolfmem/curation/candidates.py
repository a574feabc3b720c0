"""Candidate indexes (pure): compare each fact with the few lines that could match it, never with every line.

Curation compares facts pairwise in three places: the offline curator and the audit look for
duplicates, and validation looks for the line that carries a dropped fact or the evidence that backs
a newer one. Comparing every pair is quadratic: 400 similar lines took 13 s. Both indexes here key
lines on the words `compare.relate` compares, so a fact meets only lines holding the words a match
would need.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar, cast

from wolfmem.core import wording
from wolfmem.core.compare import Relation, fact_words, relate
from wolfmem.core.facts import normalise

T = TypeVar("T")
# At most this many candidates are read per query: a pathological file (thousands of lines built
# from the same few words) then finds fewer matches, and never runs for minutes.
CANDIDATE_LIMIT = 200
# At most this many kept facts with the same words are compared with `relate` (they differ only in
# word order or negation; more than a few is already a pathological file).
RELATE_LIMIT = 50


class WordIndex(Generic[T]):
    """Items indexed by the words of their text; a query returns items sharing its rarest words."""

    def __init__(self, limit: int = CANDIDATE_LIMIT) -> None:
        self.limit = limit
        self._items: list[T] = []
        self._postings: dict[str, list[int]] = defaultdict(list)

    def add(self, text: str, item: T) -> None:
        """Index one item under the words of `text`."""
        self._items.append(item)
        for word in fact_words(text):
            self._postings[word].append(len(self._items) - 1)

    def rarest(self, words: Iterable[str], count: int) -> list[str]:
        """The `count` words with the fewest items, the indexed ones first."""
        present = sorted((w for w in set(words) if w in self._postings), key=lambda w: (len(self._postings[w]), w))
        return present[:count]

    def candidates(self, words: Iterable[str]) -> list[T]:
        """Items indexed under any of `words`, rarest words first, at most `limit`, each once."""
        seen: dict[int, None] = {}
        for word in self.rarest(words, len(self._postings)):
            for number in self._postings[word]:
                seen.setdefault(number)
                if len(seen) >= self.limit:
                    return [self._items[n] for n in seen]
        return [self._items[n] for n in seen]

    def carriers(self, fact: str, carries: Callable[[str, str], bool], text_of: Callable[[T], str]) -> T | None:
        """The first item whose text carries `fact`; one of its rarest words must be there, so only those are read."""
        words = fact_words(fact)
        # A carrying line may miss one plain word in five, so one of the n//5 + 1 rarest is certainly in it.
        for item in self.candidates(self.rarest(words, len(words) // 5 + 1)):
            if carries(text_of(item), fact):
                return item
        return None


class _Without:
    """A word set with one word left out, for `wording.agent_base` (which asks only `in`)."""

    def __init__(self, words: frozenset[str], left_out: str) -> None:
        self.words = words
        self.left_out = left_out

    def __contains__(self, word: object) -> bool:
        return word != self.left_out and word in self.words


class DuplicateFinder:
    """Finds, fact by fact, an earlier kept fact it duplicates, looking only where one can be.

    `relate` calls two facts duplicates only when they hold the same words once an agent noun on
    one side is read as the verb on the other ("leader" / "leads"). So every fact gets a key: its
    words, each agent noun read as a verb some fact of the file holds. Two duplicates have the
    same key, so a fact is compared (with `relate`, for roles and negation) only with the kept
    facts of its own key: linear in the file, whatever its shape. Exact duplicates (after
    `normalise`) are found by their text. Should `relate` ever merge facts whose words differ,
    this finds fewer duplicates than it could, never a false one.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        self._vocabulary = frozenset(word for text in texts for word in fact_words(text))
        self._bases: dict[str, str] = {}
        self._by_key: dict[str, int] = {}
        self._by_words: dict[frozenset[str], list[int]] = defaultdict(list)
        self._texts: dict[int, str] = {}

    def _words(self, text: str) -> frozenset[str]:
        """The fact's words with each agent noun read as a verb of the file ('leader' -> 'lead')."""
        out = []
        for word in fact_words(text):
            if word not in self._bases:
                others = cast(frozenset[str], _Without(self._vocabulary, word))
                self._bases[word] = wording.agent_base(word, others)
            out.append(self._bases[word])
        return frozenset(out)

    def find(self, text: str) -> int | None:
        """The slot of a kept fact that `text` duplicates, or None."""
        slot = self._by_key.get(normalise(text))
        if slot is not None:
            return slot
        for slot in self._by_words.get(self._words(text), ())[:RELATE_LIMIT]:
            if relate(text, self._texts[slot]) is Relation.DUPLICATE:
                return slot
        return None

    def keep(self, text: str, slot: int) -> None:
        """Index `text` as the kept fact in `slot` (a slot may gain a second text when the kept line changes)."""
        self._by_key.setdefault(normalise(text), slot)
        self._texts[slot] = text
        same = self._by_words[self._words(text)]
        if slot not in same:
            same.append(slot)
