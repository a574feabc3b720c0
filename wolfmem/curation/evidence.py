"""Accounting for every line a rewrite takes out, moves or adds: evidence, not words (pure; no I/O).

Old and new facts are matched by how they read (`meaning.text_key`: only whitespace is not a
change) and by their section, whatever the change list says. Then:

* a fact under the same heading, reading the same, stays: nothing happened;
* a fact that reads the same under another heading *changed section*: allowed only when it is not hand-written
  and its subject stays ("Sarah prefers tea" filed under "## Sarah") or, when its words name nobody, evidence
  since the last run about the new subject backs it; listed either way;
* a fact that leaves must be explained by a declared change, and a claim that fails is refused
  (it never falls through to another explanation):
  - merged into a line of the rewrite about the same subject that *carries* it (`compare.carries`);
  - superseded by a line about the same subject, backed by evidence since the last run about that
    subject that holds the new value (`compare.backs`, `meaning.about`);
  - moved to another curated file: accepted here, then landing checks that file's text holds it
    with its subject;
  - removed as junk with a reason, but never a protected fact (saved or first seen within the window);
* with no declared change, only a rewording `compare.duplicates` calls the same claim about the
  same subject is accepted, and listed; never one that swaps in full-width or superscript forms;
* a new fact nothing explains is an addition: it needs an episode line or a save since the last run
  that supports it (`meaning.supports`), or a fact of another curated file it receives.

What leaves and what is added count against the file's budgets (`curation.budget`); over one, it is staged.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from wolfmem.core import markdown
from wolfmem.core.compare import Relation, backs, carries, duplicates, fact_words, relate, same_subject
from wolfmem.core.credentials import find_secret
from wolfmem.core.facts import fact_key, normalise
from wolfmem.core.reading import read
from wolfmem.core.untrusted import SCANNED_PAST_QUOTE, quote_untrusted
from wolfmem.curation.budget import Growth, over_budget
from wolfmem.curation.candidates import WordIndex
from wolfmem.curation.contract import Change, ChangeKind
from wolfmem.curation.markup import MAX_REASONS
from wolfmem.curation.meaning import (
    Subject,
    Subjects,
    about,
    merge_fault,
    novel_values,
    recharactered,
    states,
    supports,
    text_key,
)
from wolfmem.storage.archive import Reason

PROTECTION_DAYS = 30
QUOTE_CHARS = 80
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
    subject: Subject = frozenset()  # whom it was about: a move to another file must keep it


@dataclass(frozen=True)
class Safeguards:
    """What validation knows beyond the two texts: the evidence since the last run, and what is protected."""

    evidence: tuple[str, ...] = ()  # episode lines, saves and new hand lines since the last run, oldest first
    said_on: tuple[str, ...] = ()  # the day each evidence line was said, when known (else they are in order)
    protected: frozenset[str] = frozenset()  # fact keys never removed as junk (recent saves, hand lines)
    forgotten: tuple[str, ...] = ()  # facts a person asked to forget: never added back
    move_targets: frozenset[str] = frozenset()  # the other curated files a fact may move to
    budget: bool = True  # False when a person lands a staged rewrite
    hand: frozenset[str] = frozenset()  # text keys of the file's hand-written facts: they never change section
    headings: tuple[str, ...] = ()  # every curated file's headings: whom a line names
    # Facts of the other curated files, with their sections: a line holding one, about the same, is a move in.
    incoming: tuple[tuple[str, str], ...] = ()
    growth: Growth = field(default_factory=Growth)


@dataclass
class Accounting:
    """The verdict on what a rewrite changes: each departure, the refusals, the listing and the budgets."""

    departures: list[Departure] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    over_budget: str = ""
    listed: list[Change] = field(default_factory=list)  # changes made but not declared, for the log
    added: int = 0  # new facts and sections, for the growth window
    failed: set[str] = field(default_factory=set)  # lines named by a refused claim: already explained why


def evidence_lines(texts: Iterable[str]) -> tuple[str, ...]:
    """The content lines of episodes, saves and hand edits, without headings and list markers."""
    return dated_lines(("", text) for text in texts)[0]


def dated_lines(texts: Iterable[tuple[str, str]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The content lines of (day, text) pairs, as `evidence_lines`, and the day of each."""
    lines, days = [], []
    for day, text in texts:
        for line in text.splitlines():
            plain = _MARKER.sub("", line).strip()
            if plain and not plain.startswith("#"):
                lines.append(plain)
                days.append(day)
    return tuple(lines), tuple(days)


def _quote(text: str) -> str:
    """A line for a reason: the reasons go into the curation log, which agents search, so quoted as untrusted."""
    text = text[: QUOTE_CHARS + SCANNED_PAST_QUOTE]  # what is shown and a margin: never a whole 1 MB line
    visible = "".join(c for c in text if unicodedata.category(c) != "Cf")  # a key split by a zero-width space
    return repr("[withheld: looks like a secret]" if find_secret(visible) else quote_untrusted(text, QUOTE_CHARS))


class _Explainer:
    """Explains the lines of one rewrite against the old file, with its indexes built once."""

    def __init__(self, old: markdown.ParsedFile, new: markdown.ParsedFile, guards: Safeguards) -> None:
        self.guards = guards
        own = [*(s.heading for s in old.sections), *(s.heading for s in new.sections)]
        self.subjects = Subjects([*guards.headings, *own], own)
        self.sections: dict[str, list[str]] = defaultdict(list)  # text key -> sections of the new file
        for fact in new.facts:
            self.sections[text_key(fact.text)].append(fact.section)
        self._evidence: WordIndex[tuple[int, str]] | None = None

    def subject(self, section: str, text: str) -> Subject:
        """Whom a line under `section` speaks of, against every heading known."""
        return self.subjects.of(section, text)

    def evidence(self, words: Iterable[str]) -> list[tuple[int, str]]:
        """The evidence lines sharing any of `words`, with their places, in the order they were said."""
        if self._evidence is None:
            self._evidence = WordIndex()
            for n, line in enumerate(self.guards.evidence):
                self._evidence.add(line, (n, line))
        return sorted(self._evidence.candidates(words))

    def later(self, n: int, m: int) -> bool:
        """Whether evidence line `n` was said after line `m`: on a later day when the days are known."""
        days = self.guards.said_on
        return days[n] > days[m] if len(days) == len(self.guards.evidence) else n > m

    def supported(self, text: str, who: Subject) -> bool:
        """Whether evidence since the last run about `who` supports `text`."""
        return any(supports(line, text, who, self.subjects) for _, line in self.evidence(fact_words(text)))

    def moved_section(self, fact: markdown.Fact, section: str) -> str | None:
        """Why a fact may not change to `section` (None: it may)."""
        if text_key(fact.text) in self.guards.hand:
            return (f"moves the hand-written line {_quote(fact.text)} from '## {fact.section}' to '## {section}'; "
                    "a line a person wrote never changes section by curation")
        after, before = self.subject(section, fact.text), self.subject(fact.section, fact.text)
        # "## Dave" joined into "## [[Dave Smith|Dave]]": one heading names the other's entity and more,
        # but not another heading's entity too ("## Sarah" into "## Sarah and Tom" beside "## Tom").
        own = self.subjects.of(None, fact.text)  # whom its own words name: no evidence files it under another
        named = (bool(before and after) and (before <= after or after <= before)
                 and not self.subjects.names_another(before ^ after)) or (bool(after) and after == own)
        if named or after == before or (not own and self.supported(fact.text, after)):
            return None
        return (f"moves {_quote(fact.text)} from '## {fact.section}' to '## {section}', another subject, "
                "and nothing said since the last run backs it")

    def into_subject(self, into: str, who: Subject) -> bool:
        """Whether the rewrite holds `into` in a section where it speaks of `who`."""
        return any(self.subject(section, into) == who for section in self.sections.get(text_key(into), ()))

    def backed(self, new: str, old: str, who: Subject) -> bool:
        """Whether evidence since the last run, about `who`, backs `new` replacing `old`, and nothing said after
        it backs `old` back: the newest evidence wins ("moved to Paris", then "moved back to Berlin")."""
        lines = self.evidence(fact_words(new) | fact_words(old))
        for_new = [n for n, line in lines if self._says(line, new, old, who)]
        if not for_new:
            return False
        # Any later line that backs the old value back counts, even one the rules above would not take.
        return not any(self.later(n, for_new[-1]) and about(line, who, fact_words(old), self.subjects)
                       and backs(line, old, new) and read(line).negated == read(old).negated for n, line in lines)

    def _says(self, line: str, new: str, old: str, who: Subject) -> bool:
        """Whether one evidence line, about `who`, backs `new` replacing `old`."""
        if not (about(line, who, fact_words(new), self.subjects) and backs(line, new, old) and states(line, new, who)):
            return False
        if read(line).negated != read(new).negated or relate(new, line) is Relation.CONTRADICTS:
            return False  # "Sarah's birthday is not 4 May", "… party is on 4 June": not the new value
        # Nothing new in `new` ("spaces over tabs"): the line must say it whole; a flip, negate what `new` negates.
        flip = read(new).negated != read(old).negated and read(line).negates == read(new).negates
        return bool(fact_words(new) - fact_words(old)) or flip or carries(line, new)

    def claim(self, fact: markdown.Fact, change: Change) -> Departure | str:
        """The departure a declared change explains, or why it does not hold."""
        kind, into, why = change.kind.value, change.new, change.reason
        into_text = _MARKER.sub("", into).strip()
        who = self.subject(fact.section, fact.text)
        if kind == "removed":
            if not why:
                return "removed without a reason"
            if fact_key(fact.text) in self.guards.protected:
                return (f"removed as junk, but it was saved or written within the last {PROTECTION_DAYS} days; "
                        "such a fact may only be merged into a line that carries it, or superseded with evidence")
            return Departure(fact.text, fact.section, Reason.REMOVED, why, subject=who)
        if kind == "moved":
            target = into.strip().removeprefix("file:")
            if target not in self.guards.move_targets:
                return f"moved to {_quote(target)}, which is not another curated file of this run"
            return Departure(fact.text, fact.section, Reason.MOVED, why or "moved", target, subject=who)
        if kind not in ("merged", "superseded", "filed"):
            return f"a change of kind {kind!r} cannot take a fact out"
        if text_key(into_text) not in self.sections:
            return f"{kind} into {_quote(into_text)}, which is not in the rewrite"
        if recharactered(into_text, fact.text):
            return (f"{kind} into {_quote(into_text)}, which writes its characters in another form "
                    f"({recharactered(into_text, fact.text)!r}); it would read and search differently")
        if not self.into_subject(into_text, who):
            return f"{kind} into {_quote(into_text)}, which is filed under another subject"
        if kind in ("merged", "filed"):
            if not carries(into_text, fact.text):
                return f"merged into {_quote(into_text)}, which does not carry its content"
            return Departure(fact.text, fact.section, Reason.MERGED, why or "merged", into_text, subject=who)
        if not same_subject(into_text, fact.text):
            return f"superseded by {_quote(into_text)}, which is about something else"
        if not self.backed(into_text, fact.text, who):
            return (f"superseded by {_quote(into_text)}, but no episode line, save or hand edit since the last run "
                    "backs it (evidence must be new, about the same subject, say the new value, and not be followed by "
                    "a line that says the old one again)")
        return Departure(fact.text, fact.section, Reason.SUPERSEDED, why or "superseded", into_text, subject=who)

    def reworded(self, fact: markdown.Fact, candidates: Iterable[markdown.Fact]) -> markdown.Fact | None:
        """A new line, not declared, that says the same as `fact` about the same subject."""
        who = self.subject(fact.section, fact.text)
        for line in candidates:
            if recharactered(line.text, fact.text):
                continue
            if duplicates(line.text, self.subject(line.section, line.text), fact.text, who):
                return line
        return None


def account(
    old: markdown.ParsedFile, new: markdown.ParsedFile, changes: list[Change], guards: Safeguards
) -> Accounting:
    """Explain every fact the rewrite takes out, moves or adds, or say why not; see the module docstring."""
    explain = _Explainer(old, new, guards)
    result = Accounting()
    refused: list[str] = []
    unused = {n: fact for n, fact in enumerate(new.facts)}
    by_place: dict[tuple[str, str], list[int]] = defaultdict(list)
    by_text: dict[str, list[int]] = defaultdict(list)
    for n, fact in enumerate(new.facts):
        by_place[(markdown.heading_key(fact.section), text_key(fact.text))].append(n)
        by_text[text_key(fact.text)].append(n)
    declared: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        for line in change.old:
            declared[normalise(line)].append(change)

    def take(numbers: list[int]) -> markdown.Fact | None:
        number = next((n for n in numbers if n in unused), None)
        return unused.pop(number) if number is not None else None

    left = []
    for fact in old.facts:  # 1. the same line under the same heading
        if take(by_place[(markdown.heading_key(fact.section), text_key(fact.text))]) is None:
            left.append(fact)
    leaving = []
    for fact in left:  # 2. the same line under another heading: a change of section
        moved = take(by_text[text_key(fact.text)])
        if moved is None:
            leaving.append(fact)
            continue
        why = explain.moved_section(fact, moved.section)
        if why:
            refused.append(why)
        elif not declared.get(normalise(fact.text)):
            result.listed.append(Change(ChangeKind.SECTION, (f"- {fact.text}",), f"## {moved.section}",
                                        f"moved from '## {fact.section}' (not declared)"))
    old_texts = {text_key(fact.text) for fact in old.facts}
    fresh = [fact for fact in unused.values() if text_key(fact.text) not in old_texts]
    for fact in leaving:  # 3. the line left: a declared change explains it, or a rewording, or nothing
        who = explain.subject(fact.section, fact.text)
        if any(explain.subject(section, fact.text) == who for section in explain.sections.get(text_key(fact.text), ())):
            result.departures.append(Departure(fact.text, fact.section, Reason.MERGED,
                                               "an exact duplicate of a line kept", fact.text, counted=False))
            continue
        claims = declared.get(normalise(fact.text), [])
        outcomes = [explain.claim(fact, change) for change in claims]
        departure = next((outcome for outcome in outcomes if isinstance(outcome, Departure)), None)
        if departure is not None:
            result.departures.append(departure)
        elif claims:
            result.failed.update(text_key(_MARKER.sub("", change.new).strip()) for change in claims)
            refused.append(f"drops a fact the change list does not account for: {_quote(fact.text)} ({outcomes[0]})")
        elif (same := explain.reworded(fact, fresh)) is not None:
            result.departures.append(Departure(fact.text, fact.section, Reason.MERGED,
                                               "reworded (not declared)", same.text, subject=who))
            result.listed.append(Change(ChangeKind.MERGED, (f"- {fact.text}",), f"- {same.text}",
                                        "reworded, saying the same (not declared)"))
        else:
            refused.append(f"drops a fact the change list does not account for: {_quote(fact.text)} "
                           "(a line changes only by a listed change, or by a rewording that says the same)")
    refused += _additions(explain, fresh, result)
    refused += _new_sections(old, new, result)
    result.reasons = refused[:MAX_REASONS] + (
        [f"…and {len(refused) - MAX_REASONS} more unaccounted changes"] if len(refused) > MAX_REASONS else []
    )
    result.over_budget = _over_budget(old, result, guards)
    return result


def _additions(explain: _Explainer, fresh: list[markdown.Fact], result: Accounting) -> list[str]:
    """New lines nothing old explains need support; a merged line may not invent a value."""
    sources: dict[str, list[str]] = defaultdict(list)
    backed = {text_key(d.into) for d in result.departures if d.reason is Reason.SUPERSEDED}
    for departure in result.departures:
        if departure.reason is Reason.MERGED:
            sources[text_key(departure.into)].append(departure.fact)
    incoming: WordIndex[tuple[str, str]] = WordIndex()
    for text, section in explain.guards.incoming:
        incoming.add(text, (text, section))
    reasons = []
    for fact in fresh:
        if text_key(fact.text) in backed | result.failed:
            continue  # a supersession backed by its own evidence, or a refused claim's line (refused already)
        who = explain.subject(fact.section, fact.text)
        merged_from = sources.get(text_key(fact.text))
        if merged_from:
            invented = novel_values(fact.text, merged_from)
            if invented and not explain.supported(fact.text, who):
                reasons.append(f"merges into {_quote(fact.text)}, which adds {', '.join(sorted(invented))}: "
                               "no line it replaces and no evidence since the last run holds it")
            elif fault := merge_fault(fact.text, merged_from):
                reasons.append(f"merges into {_quote(fact.text)}, {fault}")
            continue
        moved_in = incoming.candidates(fact_words(fact.text))
        if any(carries(fact.text, text) and explain.subject(section, text) == who for text, section in moved_in):
            result.added += 1  # a fact moved in from another curated file of the run
            continue
        if not explain.supported(fact.text, who):
            reasons.append(f"adds {_quote(fact.text)}, which no episode line or save since the last run backs "
                           f"(about {'/'.join(sorted(who)) or 'the user'})")
            continue
        result.added += 1
    return reasons


def _new_sections(old: markdown.ParsedFile, new: markdown.ParsedFile, result: Accounting) -> list[str]:
    """Headings added or renamed are listed; an added section with no fact is filler, refused."""
    before = Counter(markdown.heading_key(s.heading) for s in old.sections)
    after = Counter(markdown.heading_key(s.heading) for s in new.sections)
    gone = [s.heading for s in old.sections if (before - after)[markdown.heading_key(s.heading)]]
    came = [s for s in new.sections if (after - before)[markdown.heading_key(s.heading)]]
    reasons = []
    for n, section in enumerate(came):
        was = f"## {gone[n]}" if n < len(gone) else ""
        result.listed.append(Change(ChangeKind.SECTION, (was,) if was else (), f"## {section.heading}",
                                    "heading renamed" if was else "section added"))
        if not any(section.line < fact.line <= section.end for fact in new.facts):
            reasons.append(f"adds the section '## {section.heading}' with no fact in it")
        result.added += 1
    for heading in gone[len(came):]:
        result.listed.append(Change(ChangeKind.SECTION, (f"## {heading}",), "", "heading removed"))
    return reasons


def _over_budget(old: markdown.ParsedFile, result: Accounting, guards: Safeguards) -> str:
    """Why the rewrite must wait for a person (`budget.over_budget`); '' when it need not."""
    if not guards.budget:
        return ""
    counted = _cost(result.departures, {normalise(fact.text) for fact in old.facts})
    return over_budget(counted, len(old.facts), result.added, guards.growth)


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

