"""New lines of a curated file that carry a fact a person asked to forget."""

from __future__ import annotations

from collections.abc import Collection

from wolfmem.core import markdown
from wolfmem.core.compare import carries, fact_words
from wolfmem.core.facts import normalise
from wolfmem.curation.candidates import WordIndex


def readded(old: markdown.ParsedFile, new: markdown.ParsedFile, forgotten: Collection[str]) -> list[markdown.Fact]:
    """New facts that carry a fact a person asked to forget (old episodes may still mention it)."""
    if not forgotten:
        return []
    index: WordIndex[str] = WordIndex()
    for text in forgotten:
        index.add(text, text)
    before = {normalise(fact.text) for fact in old.facts}
    out = []
    for fact in new.facts:
        if normalise(fact.text) in before:
            continue
        # The forgotten fact must be inside the new line: its words are a candidate's words.
        if any(carries(fact.text, gone) for gone in index.candidates(fact_words(fact.text))):
            out.append(fact)
    return out
