"""Reading one fact into what dedup compares: content stems, values, negation, roles (pure; no I/O).

`read(fact)` is the one reader `compare` relates two facts with:

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
  "uses B and A", "the X key for Y" is "the Y X key", "leader" is "leads");
  which function words bind what, and in which order, is in `roles`.
* Numbers keep what changes their value: a sign, a currency, a unit ("-18",
  "$5000" == "5000 dollars", "5 km"); number words are numbers ("two", "half").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from wolfmem.core import roles as fact_roles
from wolfmem.core import tokens, wording
from wolfmem.core.facts import CANONICAL_CHARS, LIST_MARKER

_NEGATIONS = frozenset(
    "not no never cannot nobody nothing neither nor dont doesnt didnt isnt wont cant".split()
)
# Subject and glue words that do not change a claim ("User prefers X" == "I prefer X").
_LIGHT_TOKENS = frozenset(
    "user users via through thru using go goes going went gone happen happens happened".split()
)
_stem = wording.stem  # Porter2 of the base form: 'wrote' -> 'write', 'focused' -> 'focus'

# Words read as one another; `compare` folds the keys of roles with them too.
SYNONYMS = {
    _stem(word): _stem(canonical)
    for canonical, words in {
        "deploy": ["ship", "release"],
        "prefer": ["like", "favor", "favour", "favorite", "favourite"],
        "manager": ["boss"],
    }.items()
    for word in words
}
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
class Reading:
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


def read(fact: str) -> Reading:
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
              or (token in ("used", "going") and following == "to") or (token == "far" and following == "from")):
            continue  # a function word: `roles.structure` reads the ones that carry meaning
        elif token in capitalised or token in acronyms:
            names.add(_stem(token))  # before the light words: "Go" is a name, "go" is glue
            key = values[i] = "w:" + _stem(token)
        elif token not in _LIGHT_TOKENS and not wording.is_light(token, following):
            key = SYNONYMS.get(_stem(token), _stem(token))
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
    return Reading(frozenset(plain), frozenset(numbers), frozenset(times),
                    frozenset(names), negated, frozenset(lead), wording.value_orders(read),
                    frozenset(negates), roles)
