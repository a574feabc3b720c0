"""Candidate indexes (pure): compare each fact with the few lines that could match it, never with every line.

Curation compares facts pairwise in three places: the offline curator and the audit look for
duplicates, and validation looks for the line that carries a dropped fact or the evidence that backs
a newer one. Comparing every pair is quadratic: 400 similar lines took 13 s. Both indexes here key
lines on the words `facts.relate` compares, so a fact meets only lines that share the words a match
would need.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

from wolfmem.core.facts import Relation, fact_words, normalise, relate

T = TypeVar("T")
# A duplicate shares at least this share of its words with the other fact (`relate`'s own bar).
DUPLICATE_OVERLAP = 0.85
# At most this many candidates are read per fact, and at most RELATE_LIMIT of them (those whose
# word sets overlap enough) are compared with `relate`: a pathological file (thousands of lines
# built from the same few words) then merges fewer duplicates, and never runs for minutes.
CANDIDATE_LIMIT = 200
SCAN_LIMIT = 2000
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


class DuplicateFinder:
    """Finds, fact by fact, an earlier kept fact it duplicates, by prefix filtering.

    Two facts `relate` calls duplicates share at least 85% of their words (Jaccard). Under one
    global order of words, rarest first, two such sets always share a word among the first
    `n - ceil(0.85 n) + 1` of each: only those are indexed and probed, so similar-looking lines
    that differ in one rare word (a name, a number) never meet. A candidate whose words overlap
    less than that is passed over before `relate` reads it. Exact duplicates (after `normalise`)
    are found by key, and facts with the very same words by their word set.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        frequency = Counter(word for text in texts for word in fact_words(text))
        self._rank = {word: (count, word) for word, count in frequency.items()}
        self._by_key: dict[str, int] = {}
        self._by_words: dict[frozenset[str], int] = {}
        self._by_word: dict[str, list[int]] = defaultdict(list)
        self._texts: dict[int, str] = {}
        self._words: dict[int, frozenset[str]] = {}

    def _prefix(self, words: frozenset[str]) -> list[str]:
        words = sorted(words, key=lambda w: self._rank.get(w, (0, w)))
        size = len(words) - math.ceil(DUPLICATE_OVERLAP * len(words) - 1e-9) + 1
        return words[:size]

    def find(self, text: str) -> int | None:
        """The slot of a kept fact that `text` duplicates, or None."""
        slot = self._by_key.get(normalise(text))
        if slot is not None:
            return slot
        words = fact_words(text)
        same = self._by_words.get(words)
        if same is not None and relate(text, self._texts[same]) is Relation.DUPLICATE:
            return same
        scanned: set[int] = set()
        related = 0
        for word in self._prefix(words):
            for slot in self._by_word.get(word, ()):
                if slot in scanned:
                    continue
                if len(scanned) >= SCAN_LIMIT or related >= RELATE_LIMIT:
                    return None
                scanned.add(slot)
                other = self._words[slot]
                if len(words & other) < DUPLICATE_OVERLAP * len(words | other) - 1e-9:
                    continue
                related += 1
                if relate(text, self._texts[slot]) is Relation.DUPLICATE:
                    return slot
        return None

    def keep(self, text: str, slot: int) -> None:
        """Index `text` as the kept fact in `slot` (a slot may gain a second text when the kept line changes)."""
        words = fact_words(text)
        self._by_key.setdefault(normalise(text), slot)
        self._by_words.setdefault(words, slot)
        self._texts[slot] = text
        self._words[slot] = words
        for word in self._prefix(words):
            if slot not in self._by_word[word][-1:]:
                self._by_word[word].append(slot)
