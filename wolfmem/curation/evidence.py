"""Accounting for every fact a rewrite takes out of a curated file: evidence, not words (pure; no I/O).

Old and new facts are compared as multisets of normalised lines, whatever the change list says.
Each fact that leaves must be explained by one of these, checked with the save path's
value-aware rules (names, numbers, dates, negation):

* an exact copy stays in the file: nothing is lost (duplicated lines collapsed);
* merged into a line of the new file that *carries* it (`compare.carries`: a duplicate of it, or the
  same claim with more detail), whether or not the change list says so;
* superseded by a line of the new file about the same subject (`facts.same_subject`) and *backed*
  (`facts.backs`) by evidence that arrived since the last run: an episode line, a save, a hand edit;
* moved to another curated file: accepted here, then landing checks that the same run's text of
  that file carries it;
* removed as junk with a reason, but never a protected fact (saved or first seen within the window).

What leaves counts against the file's removal budget, `removal_budget(n)` facts per run: each
removal and move, and each merge or supersession except one per new line (merging three facts into
one new line costs two; rewording one line costs nothing). A rewrite over budget is staged for a
person, never landed.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from wolfmem.core import markdown
from wolfmem.core.compare import backs, carries, fact_words, same_subject
from wolfmem.core.facts import fact_key, normalise
from wolfmem.curation.candidates import WordIndex
from wolfmem.curation.contract import Change
from wolfmem.storage.archive import Reason

# The removal budget: a fifth of a file's facts per run, at least 1 and at most 10.
BUDGET_SHARE = 5
BUDGET_MIN = 1
BUDGET_MAX = 10
PROTECTION_DAYS = 30
QUOTE_CHARS = 80
MAX_REASONS = 5
_MARKER = re.compile(r"^\s*(?:[-*+>]|\d{1,3}[.)])\s+")


@dataclass(frozen=True)
class Departure:
    """One fact that leaves a curated file: why, and the line (or file) that now holds its content."""

    fact: str
    section: str
    reason: Reason
    why: str = ""
    into: str = ""
    counted: bool = True  # counts against the removal budget (an exact copy kept does not)


@dataclass(frozen=True)
class Safeguards:
    """What validation knows beyond the two texts: the evidence since the last run, and what is protected."""

    evidence: tuple[str, ...] = ()  # episode lines, saves and hand lines since the last run
    protected: frozenset[str] = frozenset()  # fact keys never removed as junk (recent saves, hand lines)
    forgotten: tuple[str, ...] = ()  # facts a person asked to forget: never added back
    move_targets: frozenset[str] = frozenset()  # the other curated files a fact may move to
    budget: bool = True  # False when a person lands a staged rewrite


@dataclass
class Accounting:
    """The verdict on what a rewrite takes out: each departure, the refusals, and a budget overrun."""

    departures: list[Departure] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    over_budget: str = ""


def removal_budget(total: int) -> int:
    """How many facts may leave a file of `total` facts in one run."""
    return min(BUDGET_MAX, max(BUDGET_MIN, total // BUDGET_SHARE))


def evidence_lines(texts: Iterable[str]) -> tuple[str, ...]:
    """The content lines of episodes, saves and hand edits, without headings and list markers."""
    out = []
    for text in texts:
        for line in text.splitlines():
            plain = _MARKER.sub("", line).strip()
            if plain and not plain.startswith("#"):
                out.append(plain)
    return tuple(out)


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= QUOTE_CHARS else flat[: QUOTE_CHARS - 1] + "…")


class _Explainer:
    """Explains dropped facts against one rewrite, with its indexes built once."""

    def __init__(self, new: markdown.ParsedFile, guards: Safeguards) -> None:
        self.guards = guards
        self.kept = Counter(normalise(fact.text) for fact in new.facts)
        self._new: WordIndex[str] | None = None
        self._new_facts = [fact.text for fact in new.facts]
        self._evidence: WordIndex[str] | None = None

    def carrier(self, fact: str) -> str | None:
        """A line of the new file that carries `fact`."""
        if self._new is None:
            self._new = WordIndex()
            for text in self._new_facts:
                self._new.add(text, text)
        return self._new.carriers(fact, carries, lambda text: text)

    def backed(self, new: str, old: str) -> bool:
        """Whether some evidence line since the last run backs `new` replacing `old`."""
        if self._evidence is None:
            self._evidence = WordIndex()
            for line in self.guards.evidence:
                self._evidence.add(line, line)
        subject = fact_words(new) & fact_words(old)
        return any(backs(line, new, old) for line in self._evidence.candidates(subject))

    def claim(self, fact: markdown.Fact, change: Change) -> Departure | str:
        """The departure a declared change explains, or why it does not hold."""
        kind, into, why = change.kind.value, change.new, change.reason
        into_text = _MARKER.sub("", into).strip()
        if kind == "removed":
            if not why:
                return "removed without a reason"
            if fact_key(fact.text) in self.guards.protected:
                return (f"removed as junk, but it was saved or written within the last {PROTECTION_DAYS} days; "
                        "such a fact may only be merged into a line that carries it, or superseded with evidence")
            return Departure(fact.text, fact.section, Reason.REMOVED, why)
        if kind == "moved":
            target = into.strip().removeprefix("file:")
            if target not in self.guards.move_targets:
                return f"moved to {_quote(target)}, which is not another curated file of this run"
            return Departure(fact.text, fact.section, Reason.MOVED, why or "moved", target)
        if kind not in ("merged", "superseded", "filed"):
            return f"a change of kind {kind!r} cannot take a fact out"
        if not self.kept[normalise(into_text)]:
            return f"{kind} into {_quote(into_text)}, which is not in the rewrite"
        if kind in ("merged", "filed"):
            if not carries(into_text, fact.text):
                return f"merged into {_quote(into_text)}, which does not carry its content"
            return Departure(fact.text, fact.section, Reason.MERGED, why or "merged", into_text)
        if not same_subject(into_text, fact.text):
            return f"superseded by {_quote(into_text)}, which is about something else"
        if not self.backed(into_text, fact.text):
            return (f"superseded by {_quote(into_text)}, but no episode line, save or hand edit "
                    "since the last run backs it")
        return Departure(fact.text, fact.section, Reason.SUPERSEDED, why or "superseded", into_text)


def account(
    old: markdown.ParsedFile, new: markdown.ParsedFile, changes: list[Change], guards: Safeguards
) -> Accounting:
    """Explain every fact the rewrite takes out, or say why not; see the module docstring."""
    explainer = _Explainer(new, guards)
    left = Counter(explainer.kept)
    declared: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        for line in change.old:
            declared[normalise(line)].append(change)
    result = Accounting()
    refused: list[str] = []
    for fact in old.facts:
        key = normalise(fact.text)
        if left[key]:
            left[key] -= 1
            continue
        if explainer.kept[key]:
            result.departures.append(Departure(fact.text, fact.section, Reason.MERGED,
                                               "an exact duplicate of a line kept", fact.text, counted=False))
            continue
        failures = []
        for change in declared.get(key, ()):
            outcome = explainer.claim(fact, change)
            if isinstance(outcome, Departure):
                result.departures.append(outcome)
                break
            failures.append(outcome)
        else:
            carrier = explainer.carrier(fact.text)
            if carrier is not None:
                result.departures.append(Departure(fact.text, fact.section, Reason.MERGED,
                                                   "carried by a line of the rewrite", carrier))
            else:
                detail = f" ({failures[0]})" if failures else ""
                refused.append(f"drops a fact the change list does not account for: {_quote(fact.text)}{detail}")
    result.reasons = refused[:MAX_REASONS] + (
        [f"…and {len(refused) - MAX_REASONS} more unaccounted facts"] if len(refused) > MAX_REASONS else []
    )
    counted = _cost(result.departures, {normalise(fact.text) for fact in old.facts})
    allowed = removal_budget(len(old.facts))
    if guards.budget and counted > allowed:
        result.over_budget = (
            f"over the removal budget: the rewrite takes {counted} of {len(old.facts)} facts out in one run "
            f"(n facts merged into one new line count n - 1), and at most {allowed} may go "
            f"(a fifth of the file, {BUDGET_MIN} to {BUDGET_MAX}); "
            "a mass deletion is staged for a person, never landed unattended"
        )
    return result


def _cost(departures: list[Departure], old_keys: set[str]) -> int:
    """How much of the budget the departures use: a new line absorbs the first fact it replaces."""
    absorbed: set[str] = set()
    cost = 0
    for departure in departures:
        if not departure.counted:
            continue
        into = normalise(departure.into)
        if departure.reason in (Reason.MERGED, Reason.SUPERSEDED) and into not in old_keys and into not in absorbed:
            absorbed.add(into)
            continue
        cost += 1
    return cost


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
