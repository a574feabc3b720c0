"""Comparing two facts: duplicate, contradiction, or unrelated; and whether one line carries another (pure).

`relate(new, old)` decides whether a new fact repeats, contradicts, or is
unrelated to an old one, using only explainable word arithmetic:

* Each fact is read into stemmed content words (stop words, subject words such
  as "user", and light words such as "via"/"through"/"go" dropped; a few
  synonyms folded: deploy/ship/release, prefer/like/favor, manager/boss) and
  *values*: numbers (ordinals folded, so "3rd" == "3"; versions and dates kept
  whole), month and weekday names, capitalised names that are not the first
  word (a capital anywhere counts: "macOS"; so do acronyms that spell a stop
  word: "US", "IT"), and whether the fact is negated (not, no, never, n't),
  and what: the word after each negation.
  Word forms, light verbs and the word orders that keep every value's role are
  in `wording` ("wrote" is "write", "works on" is "is on", "uses A and B" is
  "uses B and A", "the X key for Y" is "the Y X key", "leader" is "leads").
* A value is *unmatched* if the other fact lacks it.  A capitalised first word
  counts as a name only opposite an unmatched name ("Sarah is my manager" vs
  "My manager is Susan"), since most first words are not names.  A name counts as present
  if the other fact has that word anywhere, so "Sarah is my manager" and
  "My manager is Sarah" agree.
* Numbers keep what changes their value: a sign, a currency, a unit ("-18",
  "$5000" == "5000 dollars", "5 km"); number words are numbers ("two", "half").
* DUPLICATE: the normalised texts are equal, or no value is unmatched, the
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
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from wolfmem.core import roles as fact_roles
from wolfmem.core import tokens, wording
from wolfmem.core.entities import entity_key, mentions_entity
from wolfmem.core.facts import CANONICAL_CHARS, LIST_MARKER, normalise


class Relation(enum.Enum):
    """How a new fact relates to an existing one."""

    DUPLICATE = "duplicate"
    CONTRADICTS = "contradicts"
    UNRELATED = "unrelated"


_NEGATIONS = frozenset(
    "not no never cannot nobody nothing neither nor dont doesnt didnt isnt wont cant".split()
)
# Subject and glue words that do not change a claim ("User prefers X" == "I prefer X").
_LIGHT_TOKENS = frozenset(
    "user users via through thru using go goes going went gone happen happens happened".split()
)
_CONTRADICTION_OVERLAP = 0.6
_stem = wording.stem  # Porter2 of the base form: 'wrote' -> 'write', 'focused' -> 'focus'


_SYNONYMS = {
    _stem(word): _stem(canonical)
    for canonical, words in {
        "deploy": ["ship", "release"],
        "prefer": ["like", "favor", "favour", "favorite", "favourite"],
        "manager": ["boss"],
    }.items()
    for word in words
}
# Verbs too generic to make two facts "about the same thing" on their own.
_WEAK_STEMS = frozenset(
    _stem(w) for w in "use prefer have know work want need love make get".split()
)
_MONTHS = {
    **{m: m for m in "january february march april june july august september "
       "october november december".split()},
    "jan": "january", "feb": "february", "apr": "april", "jun": "june", "jul": "july",
    "aug": "august", "sep": "september", "sept": "september", "oct": "october",
    "nov": "november", "dec": "december",
}
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_RAW_WORD = re.compile(r"\w+(?:[.\-'\u2019]\w+)*")
_SENTENCE_START = re.compile(r"[.!?]\s*$")


@dataclass(frozen=True)
class _Reading:
    """One fact broken into plain content stems and comparable values."""

    plain: frozenset[str]
    numbers: frozenset[str]
    times: frozenset[str]
    names: frozenset[str]
    negated: bool
    lead: frozenset[str] = frozenset()  # a capitalised first word: maybe a name ("Sarah is ...")
    # Numbers (n:), dates (t:) and capitalised words (w:) in each order the fact may be read in.
    orders: frozenset[wording.Order] = frozenset()
    negates: frozenset[str] = frozenset()  # the word after each "not": what is negated
    # Its meaning-bearing function words and the roles of its content words (`roles.structure`).
    roles: fact_roles.Structure = field(default_factory=fact_roles.Structure)

    @property
    def words(self) -> frozenset[str]:
        """Every stem and value key, for overlap and name matching."""
        return self.plain | self.numbers | self.times | self.names


def _number_key(token: str) -> str:
    """Comparable form of a token holding a digit: '3rd' -> '3', 'v1.2' -> '1.2'."""
    ordinal = _ORDINAL.match(token)
    if ordinal:
        return ordinal.group(1)
    return token[1:] if token[:1] == "v" and token[1:2].isdigit() else token


_UNIT_NAMES = {"dollar": "usd", "euro": "eur", "yen": "jpy", "percent": "%"}


def _decorated(number: str, gap: str, after: str, unit: str | None) -> str:
    """A number with what changes its value: a sign, a currency, a unit ('-18', '5000usd', '5km', '20%').

    `gap` is the text before the number, `after` the text right after it, `unit` the next word if
    it names a unit. "$5000" and "5000 dollars" are one value; "$5000" and "€5000" are not.
    """
    before = gap[len(gap.rstrip("-+$\u20ac\u00a3\u00a5\u20b9")):]
    sign = "-" if "-" in before else ""
    money = next((wording.CURRENCIES[ch] for ch in before + after[:1] if ch in wording.CURRENCIES), "")
    mark = "%" if after[:1] == "%" else "\u00b0" if after[:1] == "\u00b0" else ""
    name = _UNIT_NAMES.get(_stem(unit), _stem(unit)) if unit else ""
    return sign + number + money + mark + name


def _capitalised_words(fact: str) -> tuple[set[str], set[str], set[str]]:
    """Lowercased capitalised words: those not first in a sentence ('May' included), first ones, acronyms."""
    found: set[str] = set()
    leading: set[str] = set()
    acronyms: set[str] = set()
    shouting = fact == fact.upper()
    end = 0  # where the previous word ended: each word looks only at the text since, so this is linear
    first = True
    for match in _RAW_WORD.finditer(fact):
        word = match.group()
        at_start = first or _SENTENCE_START.search(fact[end: match.start()])
        first, end = False, match.end()
        if any(ch.isupper() for ch in word) and word != "I":  # "macOS" and "iOS" are names too
            (leading if at_start else found).update(tokens.tokens(word))
        if len(word) >= 2 and word.isupper() and not shouting:
            acronyms.update(tokens.tokens(word))  # "US", "IT": a name, though "us" and "it" are stop words
    return found, leading, acronyms


def _unit_after(stream: list[tuple[str, str]], i: int) -> tuple[str, int] | None:
    """The unit after token `i` and how many words it takes: "5 km", "4°C", "5.5 mmol/L"; else None."""
    if i + 1 >= len(stream):
        return None
    word, gap = stream[i + 1]
    if gap.strip() == "\u00b0":
        return (word, 1) if word in ("c", "f", "k") else None
    if gap.strip() or word not in wording.UNITS:
        return None
    if i + 2 < len(stream) and stream[i + 2][1] == "/":  # a unit per another: "mmol/L", "km/h"
        return (f"{word}/{stream[i + 2][0]}", 2)
    return (word, 1)


def _read(fact: str) -> _Reading:
    """Split a fact into plain stems and values (see the module docstring)."""
    fact = LIST_MARKER.sub("", fact.translate(CANONICAL_CHARS).strip(), count=1)
    fact = _THOUSANDS.sub("", fact)
    capitalised, leading, acronyms = _capitalised_words(fact)
    plain: set[str] = set()
    numbers: set[str] = set()
    times: set[str] = set()
    names: set[str] = set()
    lead: set[str] = set()
    stream = wording.tokens_with_gaps(fact)
    last = fact.lower().rfind(stream[-1][0]) if stream else -1
    trailing = fact[last + len(stream[-1][0]):] if last >= 0 else ""
    values: list[str | None] = [None] * len(stream)  # each token's value key, for word order
    keys: list[str | None] = [None] * len(stream)  # each token's content key, for roles
    negated = False
    negates: set[str] = set()
    after_negation = False
    consumed = -1  # the last unit word read with the number before it
    for i, (token, _gap) in enumerate(stream):
        following = stream[i + 1][0] if i + 1 < len(stream) else None
        key = None  # what this token adds: a value key, or a plain stem
        negated_now = token in _NEGATIONS or token.endswith("n't")
        number = _number_key(token) if any(ch.isdigit() for ch in token) else wording.NUMBER_WORDS.get(token)
        if i <= consumed:
            keys[i] = fact_roles.SKIP
            continue
        if negated_now:
            negated = after_negation = True
        elif number is not None:
            unit = _unit_after(stream, i)
            after = stream[i + 1][1] if i + 1 < len(stream) else trailing  # "10%" at the end
            value = _decorated(number, _gap, after, unit[0] if unit else None)
            if unit is not None:
                consumed = i + unit[1]
            numbers.add(value)
            # An identifier such as "S3" or "1Password" stands where a name would, so it is ordered with them.
            kind = "w:" if any(ch.isalpha() for ch in number) else "n:"
            key = values[i] = kind + value
        elif token in _WEEKDAYS or token[:-1] in _WEEKDAYS or (token in _MONTHS and token != "may"):
            day = token[:-1] if token[:-1] in _WEEKDAYS else token  # "on Fridays" names the day too
            times.add(_MONTHS.get(day, day))
            key = values[i] = "t:" + _MONTHS.get(day, day)
        elif token == "may" and "may" in capitalised:
            times.add("may")
            key = values[i] = "t:may"
        elif token in acronyms and token in tokens.STOP_WORDS:
            names.add(_stem(token))  # "US", "IT": a name, though "us" and "it" are stop words
            key = values[i] = "w:" + _stem(token)
        elif (token in tokens.STOP_WORDS or token in wording.BINDING or wording.qualifier(token)
              or (token in ("used", "going") and following == "to")):
            continue  # a function word: `roles.structure` reads the ones that carry meaning
        elif token in capitalised or token in acronyms:
            names.add(_stem(token))  # before the light words: "Go" is a name, "go" is glue
            key = values[i] = "w:" + _stem(token)
        elif token not in _LIGHT_TOKENS and not wording.is_light(token, following):
            key = _SYNONYMS.get(_stem(token), _stem(token))
            plain.add(key)
            if token in leading:
                lead.add(key)
                values[i] = "w:" + key
        keys[i] = key
        if after_negation and not negated_now:
            # "Likes coffee but not tea" negates tea, not coffee; a light word counts here too.
            negates.add(key or _stem(token))
            after_negation = False
    read = [wording.Token(word, gap, value, word in leading) for (word, gap), value in zip(stream, values, strict=True)]
    leads = [word in leading and key in lead for (word, _), key in zip(stream, keys, strict=True)]
    is_value = [value is not None and not first for value, first in zip(values, leads, strict=True)]
    roles = fact_roles.structure(stream, keys, is_value, leads)
    return _Reading(frozenset(plain), frozenset(numbers), frozenset(times),
                    frozenset(names), negated, frozenset(lead), wording.value_orders(read),
                    frozenset(negates), roles)


def _jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    """|a ∩ b| / |a ∪ b|, zero for two empty sets."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _unmatched(a: _Reading, b: _Reading) -> dict[str, frozenset[str]]:
    """Values of `a` that `b` lacks, by kind; a name only needs to appear somewhere in `b`."""
    return {
        "numbers": a.numbers - b.numbers,
        "times": a.times - b.times,
        "names": a.names - b.words,
    }


def _roles_swapped(a: _Reading, b: _Reading) -> bool:
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


def _fold_agent_nouns(reading: _Reading, other: _Reading) -> _Reading:
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


def _role_keys(reading: _Reading, other: _Reading) -> tuple[list[str], set[int]]:
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
        keys.append(_SYNONYMS.get(key, key))
    # "Jin is the mobile team lead": the last noun of a compound after "is" reads as the verb the
    # other fact has ("Jin leads the mobile team"), as an agent noun does.
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


def _same_roles(a: _Reading, b: _Reading) -> bool:
    """Whether two facts with the same words use the same meaning-bearing function words in the same roles."""
    keys_a, folded_a = _role_keys(a, b)
    keys_b, folded_b = _role_keys(b, a)
    return fact_roles.same_roles(a.roles, b.roles, keys_a, keys_b, folded_a, folded_b)


def _qualified_otherwise(a: _Reading, b: _Reading, differing: frozenset[str]) -> bool:
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
    a, b = _read(new), _read(old)
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
        return Relation.DUPLICATE if _same_roles(a, b) else Relation.CONTRADICTS
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
def _reading(fact: str) -> _Reading:
    """`_read`, remembered: the evidence rules compare one fact against many lines."""
    return _read(fact)


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
    if any(_unmatched(a, b).values()):
        return False
    return len(a.plain - b.words) <= len(a.plain) // _CARRY_SLACK


def same_subject(new: str, old: str) -> bool:
    """Whether two facts speak about the same thing: a duplicate or contradiction, or two shared words, one strong."""
    if relate(new, old) in (Relation.DUPLICATE, Relation.CONTRADICTS):
        return True
    shared = _reading(new).words & _reading(old).words
    return len(shared) >= 2 and bool(shared - _WEAK_STEMS)


def backs(evidence: str, new: str, old: str) -> bool:
    """Whether an evidence line (an episode line, a save, a hand edit) supports `new` replacing `old`.

    The evidence must name the subject the two share (a strong word), hold every value `new`
    introduces, at least half of its other new words, and agree with `new` on negation when
    `new` flips it. With nothing new in `new`, the evidence must share two subject words.
    """
    a, b, e = _reading(new), _reading(old), _reading(evidence)
    if a.negated != b.negated and e.negated != a.negated:
        return False
    subject = a.words & b.words
    if not (subject & e.words) - _WEAK_STEMS:
        return False
    novel = a.words - b.words
    if not (novel & (a.numbers | a.times | a.names)) <= e.words:
        return False
    if novel:
        return 2 * len(novel & e.words) >= len(novel)
    return len(subject & e.words) >= min(2, len(subject))
