"""Comparing two facts: duplicate, contradiction, or unrelated; and whether one line carries another (pure).

`relate(new, old)` decides whether a new fact repeats, contradicts, or is
unrelated to an old one, using only explainable word arithmetic:

* Each fact is read into stemmed content words and *values* (numbers, dates,
  names), with its negation and its roles (`reading.read`).
* A value is *unmatched* if the other fact lacks it.  A capitalised first word
  counts as a name only opposite an unmatched name ("Sarah is my manager" vs
  "My manager is Susan"), since most first words are not names.  A name counts as present
  if the other fact has that word anywhere, so "Sarah is my manager" and
  "My manager is Sarah" agree.
* DUPLICATE: the normalised texts are equal (case folded but for unit symbols,
  `units`: 10MB is not 10Mb), or no value is unmatched, the
  negation agrees, the word sets are equal, and the meaning-bearing function
  words and roles agree (`roles.structure` / `roles.same_roles`: the same
  prepositions, quantifiers, modals, tense and aspect, each preposition binding
  the same words, the content words in the same order up to the reorderings
  that keep every role).  A word on one side only is either a detail that
  merging would lose ("runs on port 8080" / "... in prod") or a word swapped for
  another ("light" / "dark" mode, "likes" / "dislikes"), so it is never a
  duplicate, however long the fact.
* The same words with another function word or in other roles are the same
  claim changed ("tabs over spaces" / "spaces over tabs", "Sarah reports to Bob"
  / "Bob reports to Sarah", "was" / "is", "only Sarah" / "Sarah"): CONTRADICTS,
  never DUPLICATE; so is the same plain wording with another quantity or
  qualifier ("Both printers" / "One printer").
* CONTRADICTS: both facts carry an unmatched value of the same kind (a name
  against an identifier such as "1Password" counts as one kind), or one is
  negated and the other is not (or they negate different words), and with the
  differing values removed the remaining words overlap >= 0.6 and still share
  a real topic: two words, or one non-generic word ("manager") when exactly one
  value was swapped.
* UNRELATED: everything else, including refinements ("Prefers dark mode" vs
  "Prefers dark mode in VS Code").  When in doubt the answer is never
  DUPLICATE, because a false merge loses the user's words.

`duplicates` adds the subject: the same claim under two people's headings is two
facts (`subject_key`). Save-time dedup and the offline curator both use it.
"""

from __future__ import annotations

import enum
import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from wolfmem.core import roles as fact_roles
from wolfmem.core import tokens, wording
from wolfmem.core.credentials import visible_text
from wolfmem.core.entities import entity_key, mentions_entity
from wolfmem.core.facts import normalise
from wolfmem.core.reading import SYNONYMS, Reading, read
from wolfmem.core.units import unit_symbols


class Relation(enum.Enum):
    """How a new fact relates to an existing one."""

    DUPLICATE = "duplicate"
    CONTRADICTS = "contradicts"
    UNRELATED = "unrelated"


# A fact is at most 300 characters (limits.MAX_FACT_CHARS). A hand-written line far longer is a
# pasted paragraph, not one claim, and reading one costs ~6 µs a character (a 1 MB line ~7 s, and
# a save compared it with every candidate): such a line is compared by its exact text only, so it
# never duplicates, contradicts, carries or backs another. Each of those rules then errs the safe
# way: no merge, no contradiction flag, no supersession it would have backed.
COMPARED_CHARS = 2_000
# Each fact is read as a person sees it (`visible_text`): a zero-width joiner inside "7\u200d77" split it
# into the words "7" and "77", so "Eve's code is 7" passed as a duplicate of a line that shows 777.
# An embedding, override or isolate control reorders what follows it on screen ("Room \u202e12" shows
# "Room 21"), so a line holding one is compared by its exact text only, like a long line: it never
# duplicates what it does not spell. The marks (U+200E, U+200F) only place punctuation, and are dropped.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def comparable(text: str) -> bool:
    """Whether a line is read for comparison: short enough (`COMPARED_CHARS`) and shown in the order it is spelt."""
    return len(text) <= COMPARED_CHARS and _BIDI_CONTROLS.isdisjoint(text)


_CONTRADICTION_OVERLAP = 0.6
# Verbs too generic to make two facts "about the same thing" on their own.
_WEAK_STEMS = frozenset(
    wording.stem(w) for w in "use prefer have know work want need love make get".split()
)


def _jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    """|a ∩ b| / |a ∪ b|, zero for two empty sets."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _unmatched(a: Reading, b: Reading) -> dict[str, frozenset[str]]:
    """Values of `a` that `b` lacks, by kind; a name only needs to appear somewhere in `b`."""
    return {
        "numbers": a.numbers - b.numbers,
        "times": a.times - b.times,
        "names": a.names - b.words,
    }


def _roles_swapped(a: Reading, b: Reading) -> bool:
    """The same names (or numbers) in another order: a different claim, never a duplicate.

    Each kind is compared on its own, so "June 3rd" and "3 June" are still the same date, and
    each fact may be read in the orders `wording.value_orders` allows (lists, compounds).
    """
    for kind in ("n:", "t:", "w:"):
        mine, theirs = wording.project(a.orders, kind), wording.project(b.orders, kind)
        values = wording.values(mine)
        if len(values) >= 2 and values == wording.values(theirs) and not mine & theirs:
            return True
    return False


def _fold_agent_nouns(reading: Reading, other: Reading) -> Reading:
    """`reading` with each agent noun the other fact has as a verb read as that verb ('leader' -> 'lead')."""
    plain = frozenset(wording.agent_base(stem, other.plain) for stem in reading.plain)
    if plain == reading.plain:
        return reading
    lead = frozenset(wording.agent_base(stem, other.plain) for stem in reading.lead)
    return replace(reading, plain=plain, lead=lead)


def _identifier_swapped(only_a: dict[str, frozenset[str]], only_b: dict[str, frozenset[str]]) -> bool:
    """A name against an identifier holding a digit ('Bitwarden' / '1Password'): values of one kind."""
    for mine, theirs in ((only_a, only_b), (only_b, only_a)):
        if mine["names"] and any(any(ch.isalpha() for ch in value) for value in theirs["numbers"]):
            return True
    return False


def _role_keys(reading: Reading, other: Reading) -> tuple[list[str], set[int]]:
    """Each item's key with an agent noun read as the other fact's verb ('owner' -> 'own'), and which were."""
    verbs = {item.key for item in other.roles.items if not item.value and not item.agentive}
    keys, folded = [], set()
    for k, item in enumerate(reading.roles.items):
        key = item.key
        if item.agentive and not item.value:
            base = wording.agent_base(key, frozenset(verbs))
            if base != key or key in verbs:
                key = base
                folded.add(k)
        keys.append(SYNONYMS.get(key, key))
    # "Jin is the mobile team lead": the last noun of a compound after "is" reads as the verb the
    # other fact has ("Jin leads the mobile team"), as an agent noun does; not when the other fact has
    # an "is" too, where the word is a noun ("The CTO's assistant is Maya" / "The CTO is Maya's assistant").
    if any(item.key == fact_roles.PIVOT for item in other.roles.items):
        return keys, folded
    items = reading.roles.items
    order = sorted(range(len(items)), key=lambda k: items[k].place)
    start = 0  # where the current run begins in `order`
    for n, k in enumerate(order):
        if n and items[order[n - 1]].run != items[k].run:
            start = n
        last = n + 1 == len(order) or items[order[n + 1]].run != items[k].run
        after_pivot = start > 0 and items[order[start - 1]].key == fact_roles.PIVOT
        if last and n > start and after_pivot and keys[k] in verbs and not items[k].value:
            folded.add(k)
    return keys, folded


def _same_roles(a: Reading, b: Reading) -> bool:
    """Whether two facts with the same words use the same meaning-bearing function words in the same roles."""
    keys_a, folded_a = _role_keys(a, b)
    keys_b, folded_b = _role_keys(b, a)
    return fact_roles.same_roles(a.roles, b.roles, keys_a, keys_b, folded_a, folded_b)


def _same_units(new: str, old: str) -> bool:
    """Whether the unit symbols that agree without case agree with it too ("10MB" / "10 MB", not "10Mb")."""
    mine, theirs = Counter(unit_symbols(new)), Counter(unit_symbols(old))
    folded = Counter(symbol.casefold() for symbol in mine.elements())
    return folded != Counter(symbol.casefold() for symbol in theirs.elements()) or mine == theirs


def _qualified_otherwise(a: Reading, b: Reading, differing: frozenset[str]) -> bool:
    """Whether the function words differ beyond a phrase that only adds a value ("tabs in Go" / "tabs")."""
    extra = Counter(a.roles.markers)
    extra.subtract(b.roles.markers)
    for reading, sign in ((a, 1), (b, -1)):
        for marker, phrase in reading.roles.bound:
            keys = {reading.roles.items[k].key.partition(":")[2] for k in phrase}
            if phrase and all(reading.roles.items[k].value for k in phrase) and keys <= differing:
                extra[marker] -= sign  # "in Go": the detail a refinement adds, not another claim
    return any(extra.values())


def relate(new: str, old: str) -> Relation:
    """Decide whether `new` duplicates, contradicts, or is unrelated to `old`."""
    if normalise(new) == normalise(old):
        return Relation.DUPLICATE
    if not (comparable(new) and comparable(old)):
        return Relation.UNRELATED
    a, b = _reading(new), _reading(old)  # a save compares its fact with a dozen candidates: read it once
    a, b = _fold_agent_nouns(a, b), _fold_agent_nouns(b, a)
    only_a, only_b = _unmatched(a, b), _unmatched(b, a)
    # A sentence's first word may be a name too ("Sarah is my manager"); it only counts as the value
    # swapped for the other fact's unmatched name, never as a difference on its own.
    for mine, theirs, reading, other in ((only_a, only_b, a, b), (only_b, only_a, b, a)):
        if theirs["names"] and not mine["names"]:
            mine["names"] = reading.lead - other.words
    differing = frozenset().union(*only_a.values(), *only_b.values())
    # "Likes coffee but not tea" / "Likes tea but not coffee": both negated, but not the same thing.
    negation_flip = a.negated != b.negated or a.negates != b.negates
    if not differing and not negation_flip:
        if _roles_swapped(a, b):
            return Relation.CONTRADICTS  # "Sarah reports to Bob" / "Bob reports to Sarah"
        # A word on one side only is a detail that merging would drop, or a word swapped for
        # another (light / dark, before / after): the paraphrase rules above absorb the rest.
        if not (a.words and a.words == b.words):
            return Relation.UNRELATED
        # The same words: a duplicate only with the same function words binding them the same way,
        # in the same order; otherwise the same claim with another role, time, modal or quantity.
        # Words are read without case, but a unit symbol's case is its value: 10MB / 10Mb.
        return Relation.DUPLICATE if _same_roles(a, b) and _same_units(new, old) else Relation.CONTRADICTS
    if a.plain and a.plain == b.plain and _qualified_otherwise(a, b, differing):
        return Relation.CONTRADICTS  # "Both printers are broken" / "One printer is broken"
    clashing = [kind for kind in only_a if only_a[kind] and only_b[kind]]
    if not clashing and _identifier_swapped(only_a, only_b):
        clashing = ["names"]
    if not clashing and not negation_flip:
        return Relation.UNRELATED  # one side only adds detail: a refinement
    topic_a, topic_b = a.words - differing, b.words - differing
    shared = topic_a & topic_b
    strong = shared - _WEAK_STEMS
    single_swap = len(differing) <= 2 and len(clashing) + negation_flip == 1
    same_topic = _jaccard(topic_a, topic_b) >= _CONTRADICTION_OVERLAP
    if same_topic and strong and (len(shared) >= 2 or single_swap):
        return Relation.CONTRADICTS
    return Relation.UNRELATED


# --- whom a fact is about -----------------------------------------------------------------

_FIRST_PERSON = frozenset({"i", "we", "my", "our", "me", "us", "user", "users"})


def subject_key(heading: str | None, fact: str, headings: Sequence[str] = ()) -> frozenset[str]:
    """Whom a fact filed under `heading` (a section, or a save's topic) speaks of.

    The one entity of `headings` the fact names itself ("My manager is Sarah" and "## Sarah"); else
    the user, when the fact says "I" / "we" / "my" first; else the entity its heading names
    ("Prefers tea" under "## Sarah (Manager)" is Sarah's); else the user: the empty key.
    """
    named = {entity_key(other) for other in headings if entity_key(other) and mentions_entity(other, fact)}
    if len(named) == 1:
        return next(iter(named))
    words = tokens.tokens(fact)[:2]
    if words[:1] and (words[0] in _FIRST_PERSON or words == ["the", "user"]):
        return frozenset()
    return entity_key(heading) if heading else frozenset()


def duplicates(new: str, new_subject: frozenset[str], old: str, old_subject: frozenset[str]) -> bool:
    """Whether `new` repeats `old`: the same claim (`relate`) about the same subject (`subject_key`).

    "Prefers tea" under "## Sarah" and under "## Tom" say the same words of two people: not a duplicate.
    Save-time dedup and the offline curator both merge only what this calls a duplicate.
    """
    return new_subject == old_subject and relate(new, old) is Relation.DUPLICATE


# --- carrying and support (curation's evidence rules) -----------------------------------

# A line that carries a fact may leave out this share of the fact's plain words (never a value):
# "Sarah, my manager, prefers green tea" carries "Sarah prefers tea"; a summary sharing a word does not.
_CARRY_SLACK = 5  # one plain word in five


@functools.lru_cache(maxsize=8192)
def _reading(fact: str) -> Reading:
    """`read` of what a reader sees, remembered: the evidence rules compare one fact against many lines (a long
    line, or one holding a bidi control, reads as no words)."""
    return read(visible_text(fact) if comparable(fact) else "")


def fact_words(fact: str) -> frozenset[str]:
    """The stems and value keys `relate` compares: for candidate indexes over many facts."""
    return _reading(fact).words


def carries(line: str, fact: str) -> bool:
    """Whether `line` says everything `fact` says: a duplicate of it, or the same claim with more detail.

    Every value of the fact (number, date, name) must be in the line, the negation must agree, the
    roles must not be swapped, the function words must agree (the line may add prepositions), and
    at most one plain word in five may be missing.
    """
    if normalise(line) == normalise(fact):
        return True
    if not (comparable(line) and comparable(fact)):
        return False
    relation = relate(fact, line)
    if Relation.DUPLICATE in (relation, relate(line, fact)):
        return True
    if relation is Relation.CONTRADICTS:
        return False  # the same words in other roles ("spaces over tabs"), or another value
    a, b = _reading(fact), _reading(line)
    if not a.words or a.negated != b.negated or _roles_swapped(a, b):
        return False
    # Every function word of the fact is in the line, which may add only prepositions and past forms
    # of its own new words (a detail: "in Go", "a cat called Rex"), never a tense, modal, quantifier
    # or aspect of the claim ("was", "can", "only", "no longer").
    missing, extra = Counter(a.roles.markers), Counter(b.roles.markers)
    missing.subtract(b.roles.markers)
    extra.subtract(a.roles.markers)
    extra["past"] -= sum(item.past and item.key not in a.words for item in b.roles.items)
    if any(n > 0 for n in missing.values()) or any(n > 0 and m not in wording.PREPOSITIONS for m, n in extra.items()):
        return False
    if any(_unmatched(a, b).values()) or not _bindings_kept(a, b):
        return False
    return len(a.plain - b.words) <= len(a.plain) // _CARRY_SLACK


def _bindings_kept(fact: Reading, line: Reading) -> bool:
    """Whether the words each preposition or quantifier of `fact` binds are bound by the same one in `line`.

    "Now prefers spaces over tabs" holds every word of "Prefers tabs over spaces", and more, but "over"
    binds another word: the roles are swapped, so it does not carry it.
    """
    held = [(marker, {line.roles.items[k].key for k in phrase}) for marker, phrase in line.roles.bound]
    for marker, phrase in fact.roles.bound:
        keys = {fact.roles.items[k].key for k in phrase}
        if keys and not any(other == marker and keys <= got for other, got in held):
            return False
    return True


def same_subject(new: str, old: str) -> bool:
    """Whether two facts speak about the same thing: a duplicate or contradiction, or two shared words, one strong."""
    if relate(new, old) in (Relation.DUPLICATE, Relation.CONTRADICTS):
        return True
    shared = _reading(new).words & _reading(old).words
    return len(shared) >= 2 and bool(shared - _WEAK_STEMS)


def asserts(evidence: str, fact: str) -> bool:
    """Whether an evidence line says that `fact` is so, not asks it or says it might be, will be or would be if.

    A question ("Does Sarah live in Paris?") asserts nothing, and a hedge, plan or condition the fact does
    not hold ("Sarah might move to Paris", "If Sarah moves to Paris ...") is not the fact.
    """
    if evidence.rstrip(" \t\"'”’)]").endswith("?"):
        return False
    return set(_reading(evidence).roles.markers) & wording.HEDGES <= set(_reading(fact).roles.markers)


def backs(evidence: str, new: str, old: str) -> bool:
    """Whether an evidence line (an episode line, a save, a hand edit) supports `new` replacing `old`.

    The evidence must assert it (`asserts`) and not say `old` again (carry it), name the subject the two
    share (a strong word), hold every value `new` introduces, at least half of its other new words, and
    agree with `new` on negation when `new` flips it. With no new value in `new` (only other words:
    "likes" / "dislikes", or nothing new), the evidence must also share two of the words the two lines
    share: what the claim is of ("tea"), not only whom ("Sarah dislikes coffee" backs no "Sarah dislikes tea").
    """
    a, b, e = _reading(new), _reading(old), _reading(evidence)
    if a.negated != b.negated and e.negated != a.negated:
        return False
    if not asserts(evidence, new) or carries(evidence, old):
        return False  # a question or a maybe; or the old claim said again ("lives in Berlin and visits Paris")
    subject = a.words & b.words
    if not (subject & e.words) - _WEAK_STEMS:
        return False
    novel = a.words - b.words
    if not (novel & (a.numbers | a.times | a.names)) <= e.words:
        return False
    if novel and 2 * len(novel & e.words) < len(novel):
        return False
    # A new name, number or date is the claim; a new plain word ("dislikes") is not, without what it is of.
    return bool(novel & (a.numbers | a.times | a.names | a.lead)) or len(subject & e.words) >= min(2, len(subject))
