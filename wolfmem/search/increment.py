"""A write's index change from its line diff: the facts outside the changed lines are kept, not rebuilt.

A save inserts a line or two into a file of thousands. Building every fact's index document, digest and
catalog row again costs time in proportion to the file (a save into a 2,000-fact file cost 1.9× one into
a 100-fact file, issue 28). Here the text this process last indexed and the new text are compared line by
line (common prefix and suffix): the facts before the change keep their documents, the facts after it
keep theirs moved by the line delta (the catalog shifts their rows with one UPDATE), and only the facts on
the changed lines are built, added and removed.

The shortcut is taken only when it gives exactly what building the file whole gives (`facts_of`, as
`dated_facts` dates it); otherwise `change` returns None and the caller builds the file whole:
- the new parse (the save's, remembered by `markdown.scan`) has the same facts, with the same text and
  section, on the lines before the change and, moved by the delta, after it;
- no fact text on the changed lines occurs on a kept line (a fact's id counts its text's repeats in order);
- every kept fact's date is still the day its text was first seen (or its episode's day).
"""

from __future__ import annotations

import bisect
import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.core.reparse import common_ends
from wolfmem.search.documents import fact_doc, text_digest
from wolfmem.search.schema import FactDoc
from wolfmem.storage.vault import episode_date, source_of

# Only files with this many facts are remembered (below it a whole build is as cheap).
MIN_FACTS = 64
# The sources whose documents `change` knows how to build (an archive line's date is in its data comment).
SOURCES = ("knowledge", "episodes")


@dataclass(frozen=True)
class Indexed:
    """What this process last indexed of one file: the text's revision, the text, its documents in line order.

    `lines`, when given, holds each document's current line: a document kept below a change keeps the
    line it was built at, as making each one again, moved, cost more than the rest of the diff (issue 28:
    a save into the first section of a 2,000-fact file moved ~2,000 of them). `docs` makes them moved,
    once, when asked (a whole commit of the file); a chain of line diffs never asks.
    """

    revision: str
    text: str
    built: tuple[FactDoc, ...]  # the documents in line order, as built: a kept one's line may be older
    lines: tuple[int, ...] | None = None  # each document's current line (None: each one's own)

    def current_lines(self) -> Sequence[int]:
        """Each document's current line."""
        return self.lines if self.lines is not None else [doc.line for doc in self.built]

    @functools.cached_property
    def docs(self) -> tuple[FactDoc, ...]:
        """The documents at their current lines."""
        if self.lines is None:
            return self.built
        return tuple(doc if doc.line == line else _moved(doc, line - doc.line)
                     for doc, line in zip(self.built, self.lines, strict=True))


@dataclass(frozen=True)
class Change:
    """The index change from one text of a file to the next."""

    removed: tuple[str, ...]  # doc ids of the facts on the changed lines before
    added: tuple[FactDoc, ...]  # documents of the facts on the changed lines after
    after_line: int  # facts below this line (in the old text) move...
    delta: int  # ...by this many lines
    indexed: Indexed  # the file as indexed after the change


def change(before: Indexed, revision: str, text: str, first_seen: Mapping[str, str], today: str,
           rel: str) -> tuple[Change, set[str]] | None:
    """The change from `before` to `text` (and the keys first seen today), or None: build the file whole."""
    source = source_of(rel)
    if source not in SOURCES:
        return None
    old_lines, new_lines = markdown.lines_of(before.text), markdown.lines_of(text)  # each with its line ending
    prefix, suffix = common_ends(old_lines, new_lines)
    old_end, new_end = len(old_lines) - suffix, len(new_lines) - suffix  # the changed lines end here (1-based)
    delta = new_end - old_end
    facts = markdown.parse(text).searchable()
    old, at = before.built, before.current_lines()
    head, tail = bisect.bisect_right(at, prefix), len(old) - bisect.bisect_right(at, old_end)
    new_head, new_tail = _count_upto(facts, prefix), len(facts) - _count_upto(facts, new_end)
    if head != new_head or tail != new_tail:
        return None
    kept = [*zip(range(head), facts[:head], strict=True),
            *zip(range(len(old) - tail, len(old)), facts[len(facts) - tail:], strict=True)]
    day = episode_date(rel) or ""
    for number, fact in kept:
        doc = old[number]
        moved = at[number] if fact.line <= prefix else at[number] + delta
        if (fact.text, fact.section, fact.line) != (doc.text, doc.section, moved):
            return None
        if doc.date != (day or first_seen.get(doc.key)):
            return None  # a knowledge line's day changed, or was never recorded: the whole build dates it
    gone, came = old[head:len(old) - tail], facts[new_head:len(facts) - new_tail]
    changed = {doc.text for doc in gone} | {fact.text for fact in came}
    if changed and any(old[number].text in changed for number, _fact in kept):
        return None
    seen_now = {fact_key(fact.text) for fact in came} - set(first_seen) if not day else set()
    occurrences: Counter[str] = Counter()
    added = []
    for fact in came:
        digest = text_digest(fact.text)
        occurrences[digest] += 1
        date = day or first_seen.get(fact_key(fact.text), today)
        added.append(fact_doc(rel, source, fact, occurrences[digest], date))
    below = len(old) - tail
    docs = (*old[:head], *added, *old[below:])
    lines = (*at[:head], *(doc.line for doc in added), *(line + delta for line in at[below:]))
    return Change(tuple(doc.doc_id for doc in gone), tuple(added), old_end, delta,
                  Indexed(revision, text, docs, lines)), seen_now


def _count_upto(items: Sequence[markdown.Fact], line: int) -> int:
    """How many of the facts (in line order) are on lines up to `line`."""
    return bisect.bisect_right(items, line, key=lambda item: item.line)


def _moved(doc: FactDoc, delta: int) -> FactDoc:
    """doc, `delta` lines further down (built directly: `dataclasses.replace` costs 3× as much)."""
    return FactDoc(doc.doc_id, doc.path, doc.source, doc.section, doc.line + delta, doc.text, doc.date, doc.key)
