"""Validating and comparing one-sentence facts (pure; no I/O).

`relate(new, old)` decides whether a new fact repeats, contradicts, or is
unrelated to an old one, using only explainable word arithmetic:

* Each fact is read into stemmed content words (stop words, subject words such
  as "user", and light words such as "via"/"through"/"go" dropped; a few
  synonyms folded: deploy/ship/release, prefer/like/favor, manager/boss) and
  *values*: numbers (ordinals folded, so "3rd" == "3"; versions and dates kept
  whole), month and weekday names, capitalised names that are not the first
  word, and whether the fact is negated (not, no, never, n't).
* A value is *unmatched* if the other fact lacks it.  A capitalised first word
  counts as a name only opposite an unmatched name ("Sarah is my manager" vs
  "My manager is Susan"), since most first words are not names.  A name counts as present
  if the other fact has that word anywhere, so "Sarah is my manager" and
  "My manager is Sarah" agree.
* DUPLICATE: the normalised texts are equal, or no value is unmatched, the
  negation agrees, and the Jaccard overlap of the word sets is >= 0.85
  (so below seven words the sets must be equal: "runs on port 8080" is not a
  duplicate of "runs on port 8080 in prod").
* The same names or numbers in another order are another claim ("Sarah reports
  to Bob" vs "Bob reports to Sarah"): CONTRADICTS, never DUPLICATE.
* CONTRADICTS: both facts carry an unmatched value of the same kind (or one is
  negated and the other is not), and with the differing values removed the
  remaining words overlap >= 0.6 and still share a real topic: two words, or
  one non-generic word ("manager") when exactly one value was swapped.
* UNRELATED: everything else, including refinements ("Prefers dark mode" vs
  "Prefers dark mode in VS Code").  When in doubt the answer is never
  DUPLICATE, because a false merge loses the user's words.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import re
import unicodedata
from dataclasses import dataclass

from wolfmem.core import credentials, tokens
from wolfmem.errors import InvalidFact, SecretRefused

MAX_FACT_CHARS = 300

_LIST_MARKER = re.compile(r"^(?:[-*+]|\d{1,3}[.)])(?:\s+(?:\[[ xX]\](?:\s+|$))?|$)")
_HEADING = re.compile(r"^#{1,6}(?:\s|$)")
_TABLE_ROW = re.compile(r"^\|.*\|$")
_CANONICAL_CHARS = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
})

# --- sentence splitting --------------------------------------------------------

# A terminator, any closing quotes/brackets, whitespace, then the next sentence.
_BOUNDARY = re.compile(
    r"(?P<end>[.!?\u2026]+)[\"')\]\u201d\u2019]*\s+[\"'(\[\u201c\u2018]*(?P<next>\w)"
)
# CJK full stops end a sentence with no space after them ("李明是经理。他很好。").
_CJK_BOUNDARY = re.compile(r"[\u3002\uff01\uff1f]+[\u300d\u300f\u201d\uff09]*\s*\w")
_ABBREVIATIONS = frozenset(
    """e.g i.e etc vs cf al approx incl esp resp viz dr mr mrs ms mx prof sr jr st mt
    inc ltd co corp dept est fig vol ch sec no ave blvd gen gov rev hon ph.d aka
    jan feb apr jun jul aug sep sept oct nov dec a.m p.m""".split()
)
# "U.S.A", "i.e" — letters only, so a version like "2.0" still ends a sentence.
_DOTTED_ACRONYM = re.compile(r"^(?:[^\W\d_]\.)+[^\W\d_]$")


def _is_sentence_break(fact: str, match: re.Match[str]) -> bool:
    """Whether a terminator followed by more text really ends a sentence."""
    end = match.group("end")
    if "\u2026" in end or ".." in end:
        return False  # ellipses trail off mid-thought
    if not (match.group("next").isupper() or match.group("next").isdigit()):
        return False
    if end != ".":
        return True
    before = fact[: match.start()].split()
    word = before[-1].lstrip("\"'([").lower() if before else ""
    is_initial = len(word) == 1 and word.isalpha()
    return not (is_initial or word in _ABBREVIATIONS or _DOTTED_ACRONYM.match(word))


def count_sentences(fact: str) -> int:
    """How many sentences `fact` holds, ignoring abbreviations, initials, versions and URLs."""
    breaks = sum(_is_sentence_break(fact, m) for m in _BOUNDARY.finditer(fact))
    return 1 + breaks + len(_CJK_BOUNDARY.findall(fact))


# --- validation ----------------------------------------------------------------


# Every character str.splitlines() breaks on: an editor may show any of them as a new line.
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def has_lone_surrogate(value: str) -> bool:
    """Whether `value` cannot be encoded as UTF-8 (JSON's "\\ud800" and undecodable argv bytes)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def text_problem(value: str) -> str | None:
    """Why `value` cannot be written to a UTF-8 markdown line, or None when it can."""
    if has_lone_surrogate(value):
        return "is not valid Unicode (it holds a lone surrogate such as \\ud800)"
    if any(ch in _LINE_BREAKS for ch in value):
        return "spans several lines"
    control = next(
        (ch for ch in value if unicodedata.category(ch) == "Cc" and ch != "\t"), None
    )
    if control is not None:
        return f"holds the control character U+{ord(control):04X}"
    # Bidi overrides and isolates can make the saved line read differently from what it stores.
    bidi = next((ch for ch in value if "\u202a" <= ch <= "\u202e" or "\u2066" <= ch <= "\u2069"), None)
    if bidi is not None:
        return f"holds the invisible text-direction control U+{ord(bidi):04X}"
    return None


def is_blank(value: str) -> bool:
    """Whether `value` has nothing visible: only whitespace and zero-width characters."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in value)


def clean_fact(raw: str) -> str:
    """Return `raw` as one clean sentence, or raise InvalidFact / SecretRefused saying why."""
    # NFC: a fact typed on macOS (decomposed "é") and on Linux is the same fact, byte for byte.
    fact = _LIST_MARKER.sub("", unicodedata.normalize("NFC", raw).strip(), count=1).strip()
    if is_blank(fact):
        raise InvalidFact("fact is empty — pass one sentence such as 'Sarah prefers tea'")
    problem = text_problem(fact)
    if problem == "spans several lines":
        raise InvalidFact(
            "fact spans several lines — save each line as its own fact, one sentence each"
        )
    if problem is not None:
        raise InvalidFact(f"fact {problem} — pass plain text, one sentence")
    fact = fact.replace("\t", " ")
    if len(fact) > MAX_FACT_CHARS:
        raise InvalidFact(
            f"fact is {len(fact)} characters; the limit is {MAX_FACT_CHARS} — "
            "shorten it or split it into several facts"
        )
    if _HEADING.match(fact):
        raise InvalidFact(
            "fact looks like a markdown heading — pass the sentence without '#' "
            "and name the section as the topic instead"
        )
    if "```" in fact or "~~~" in fact:
        raise InvalidFact(
            "fact contains a code fence — describe the code in one sentence, "
            "or use `inline code` for a short snippet"
        )
    if _TABLE_ROW.match(fact):
        raise InvalidFact("fact looks like a table row — write it as a plain sentence")
    sentences = count_sentences(fact)
    if sentences > 1:
        raise InvalidFact(
            f"fact has {sentences} sentences — save each sentence as its own fact"
        )
    kind = credentials.find_secret(fact)
    if kind is not None:
        raise SecretRefused(kind)
    return fact


def normalise(fact: str) -> str:
    """Exact-duplicate key: casefolded, spacing, quotes and dashes unified, end punctuation gone."""
    # NFKC folds decomposed accents and full-width forms ("Ｃａｆé" is "Café").
    fact = unicodedata.normalize("NFKC", fact)
    fact = _LIST_MARKER.sub("", fact.translate(_CANONICAL_CHARS).strip(), count=1)
    return " ".join(fact.split()).casefold().rstrip(".!?;:, ")


# --- comparison ----------------------------------------------------------------


# A save keys every fact of its file to look for a duplicate, and again to index it; remembering the
# keys of recent lines (the five curated files of a 100k-fact vault hold 10k) means only the lines
# that changed are keyed. An entry is ~300 bytes, so the bound is ~5 MB.
@functools.lru_cache(maxsize=16384)
def fact_key(text: str) -> str:
    """The exact-duplicate key of a fact: a digest of its normalised text."""
    return hashlib.sha1(normalise(text).encode()).hexdigest()[:16]


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
_DUPLICATE_OVERLAP = 0.85
_CONTRADICTION_OVERLAP = 0.6
_DOUBLED_END = re.compile(r"([b-df-hj-km-np-rtv-y])\1$")


def _stem(token: str) -> str:
    """Whoosh's Porter stem, undoubling the final consonant it leaves ('tagged' -> 'tag')."""
    return _DOUBLED_END.sub(r"\1", tokens.stem(token))


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
    order: tuple[str, ...] = ()  # numbers (n:), dates (t:) and capitalised words (w:), as they appear

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


def _capitalised_words(fact: str) -> tuple[set[str], set[str]]:
    """Lowercased capitalised words: those not first in a sentence ('May' included), and first ones."""
    found: set[str] = set()
    leading: set[str] = set()
    for match in _RAW_WORD.finditer(fact):
        word = match.group()
        at_start = not fact[: match.start()].strip() or _SENTENCE_START.search(
            fact[: match.start()]
        )
        if word[0].isupper() and word != "I":
            (leading if at_start else found).update(tokens.tokens(word))
    return found, leading


def _read(fact: str) -> _Reading:
    """Split a fact into plain stems and values (see the module docstring)."""
    fact = _LIST_MARKER.sub("", fact.translate(_CANONICAL_CHARS).strip(), count=1)
    fact = _THOUSANDS.sub("", fact)
    capitalised, leading = _capitalised_words(fact)
    plain: set[str] = set()
    numbers: set[str] = set()
    times: set[str] = set()
    names: set[str] = set()
    lead: set[str] = set()
    order: list[str] = []
    negated = False
    for token in tokens.tokens(fact):
        if token in _NEGATIONS or token.endswith("n't"):
            negated = True
        elif any(ch.isdigit() for ch in token):
            numbers.add(_number_key(token))
            order.append("n:" + _number_key(token))
        elif token in _WEEKDAYS or (token in _MONTHS and token != "may"):
            times.add(_MONTHS.get(token, token))
            order.append("t:" + _MONTHS.get(token, token))
        elif token == "may" and "may" in capitalised:
            times.add("may")
            order.append("t:may")
        elif token in tokens.STOP_WORDS or token == "may":
            continue
        elif token in capitalised:
            names.add(_stem(token))  # before the light words: "Go" is a name, "go" is glue
            order.append("w:" + _stem(token))
        elif token not in _LIGHT_TOKENS:
            stemmed = _SYNONYMS.get(_stem(token), _stem(token))
            plain.add(stemmed)
            if token in leading:
                lead.add(stemmed)
                order.append("w:" + stemmed)
    return _Reading(frozenset(plain), frozenset(numbers), frozenset(times),
                    frozenset(names), negated, frozenset(lead), tuple(order))


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

    Each kind is compared on its own, so "June 3rd" and "3 June" are still the same date.
    """
    for kind in ("n:", "t:", "w:"):
        mine = [value for value in a.order if value.startswith(kind)]
        theirs = [value for value in b.order if value.startswith(kind)]
        if len(mine) >= 2 and sorted(mine) == sorted(theirs) and mine != theirs:
            return True
    return False


def relate(new: str, old: str) -> Relation:
    """Decide whether `new` duplicates, contradicts, or is unrelated to `old`."""
    if normalise(new) == normalise(old):
        return Relation.DUPLICATE
    a, b = _read(new), _read(old)
    only_a, only_b = _unmatched(a, b), _unmatched(b, a)
    # A sentence's first word may be a name too ("Sarah is my manager"); it only counts as the value
    # swapped for the other fact's unmatched name, never as a difference on its own.
    for mine, theirs, reading, other in ((only_a, only_b, a, b), (only_b, only_a, b, a)):
        if theirs["names"] and not mine["names"]:
            mine["names"] = reading.lead - other.words
    differing = frozenset().union(*only_a.values(), *only_b.values())
    negation_flip = a.negated != b.negated
    if not differing and not negation_flip:
        if _roles_swapped(a, b):
            return Relation.CONTRADICTS  # "Sarah reports to Bob" / "Bob reports to Sarah"
        same = a.words and _jaccard(a.words, b.words) >= _DUPLICATE_OVERLAP
        return Relation.DUPLICATE if same else Relation.UNRELATED
    clashing = [kind for kind in only_a if only_a[kind] and only_b[kind]]
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


# --- entities ------------------------------------------------------------------

_QUALIFIER = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_HEADING_SEPARATOR = re.compile(r"\s+[-\u2013\u2014|]\s+|:\s")
_ENTITY_WORD = re.compile(r"\w[\w.+#'-]*\w|\w[+#]*")
_GENERIC_HEADING_WORDS = frozenset(
    """notes note unfiled general misc miscellaneous other others inbox todo todos
    ideas facts fact info information preferences prefs stuff project projects
    people person topics topic context background details overview summary log
    journal reference references links""".split()
)


def _entity_words(heading: str) -> list[str]:
    """Distinctive words naming a heading's entity ('Project Atlas — x' -> ['Atlas'])."""
    name = _QUALIFIER.sub(" ", heading.lstrip("#").translate(_CANONICAL_CHARS))
    name = _HEADING_SEPARATOR.split(name, maxsplit=1)[0]
    return [
        word for word in (w.rstrip(".") for w in _ENTITY_WORD.findall(name))
        if len(word) >= 2
        and word.lower() not in _GENERIC_HEADING_WORDS
        and word.lower() not in tokens.STOP_WORDS
    ]


def mentions_entity(heading: str, fact: str) -> bool:
    """Whether `fact` names, as a whole word, the entity that `heading` is about."""
    return any(
        re.search(rf"(?<!\w){re.escape(word)}(?!\w)", fact, re.IGNORECASE)
        for word in _entity_words(heading)
    )
