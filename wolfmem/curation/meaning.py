"""What a fact says and whom it is about, as curation's checks need it (pure; no I/O).

Curation may tidy a file, never change what a line says: these are the rules the
accounting (`curation.evidence`) and the validator apply to every line that leaves,
moves or arrives.

* How a line reads is its text up to whitespace (`text_key`): case, punctuation and
  Unicode forms are part of it, so "106" rewritten as "10⁶" is an edit, not the same line.
* Whom a fact is about is `compare.subject_key` of its section and text, against the
  headings of the files before and after (`Subjects`): a section is part of what a fact says,
  so a line that names one section's entity under another section of its file is about both.
* An evidence line is *about* a subject (`about`) when it names that subject, or names
  nobody else: not another section's entity, not a name the fact does not hold.
* An evidence line *states* a fact (`states`) when it says it as so, not only its words: not a
  question, a hedge, an aim, refusal or thought, or what nearly happened ("Sarah refused to move to
  Paris", "almost moved to Paris" state no "Sarah lives in Paris"), each value after the fact's
  preposition (or "to" with a verb of change), and it holds every content word of the fact but the subject's name,
  save one that a verb of change stands for ("Sarah moved to Paris" for "lives"), and a form of
  "be" or "have" when the fact says what someone is or has ("Sarah ran 35 laps" states no "Sarah is 35").
* An evidence line *supports* a new fact (`supports`) when it is about the fact's subject,
  carries it, or states it, holds every value of it (number, date, name), agrees on negation
  and never says the contrary.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence

from wolfmem.core import wording
from wolfmem.core.compare import Relation, asserts, carries, relate, subject_key
from wolfmem.core.entities import entity_key
from wolfmem.core.reading import Reading, read
from wolfmem.core.tokens import tokens

Subject = frozenset[str]
_PART = re.compile(r"\w+")


def text_key(text: str) -> str:
    """How a line reads, blind only to whitespace: any other change is an edit."""
    return " ".join(text.split())


class Subjects:
    """Whom lines speak of (`compare.subject_key`) against one set of headings, remembered per line.

    A line is compared only with the headings sharing a word with it: a file of thousands of sections
    is not scanned once per line.
    """

    def __init__(self, headings: Iterable[str], local: Iterable[str] = ()) -> None:
        self.headings = tuple(dict.fromkeys(headings))
        self._local = {key for key in map(entity_key, local) if key}  # the entities of the file's own sections
        self._by_part: dict[str, list[str]] = defaultdict(list)
        for heading in self.headings:
            for part in {part for word in entity_key(heading) for part in _PART.findall(word)}:
                self._by_part[part].append(heading)
        self._memo: dict[tuple[str, str], Subject] = {}
        self._entities: set[Subject] | None = None  # each heading's entity, once asked
        self._names_another: dict[Subject, bool] = {}

    def names_another(self, extra: Subject) -> bool:
        """Whether `extra` (the words one heading names beyond another) holds some heading's whole entity."""
        if extra not in self._names_another:
            if self._entities is None:
                self._entities = {key for key in map(entity_key, self.headings) if key}
            self._names_another[extra] = any(key <= extra for key in self._entities)
        return self._names_another[extra]

    def of(self, section: str | None, text: str) -> Subject:
        """Whom `text`, filed under `section` (None: no heading), speaks of."""
        key = (section or "", text)
        if key not in self._memo:
            parts = set(_PART.findall(unicodedata.normalize("NFC", text).casefold()))
            named = list(dict.fromkeys(heading for part in parts for heading in self._by_part.get(part, ())))
            who = subject_key(section or None, text, named)
            home = entity_key(section) if section else frozenset()
            # "Sarah lives in Berlin" under "## Tom" of the file that has "## Sarah" speaks of Sarah, filed as
            # Tom's: of both, so no move, merge or rewording takes a fact of hers there.
            foreign = who in self._local and home and not (home <= who or who <= home)
            self._memo[key] = who | home if foreign else who
        return self._memo[key]


def recharactered(line: str, fact: str) -> str:
    """Compatibility characters (full-width, superscript, ligatures) `line` has and `fact` had not ('' if none).

    NFKC folds them away for dedup, but they change how the line reads and what search finds.
    """
    added = {c for c in line if unicodedata.normalize("NFKC", c) != c} - set(fact)
    return "".join(sorted(added))


_MARKS = frozenset("?!")


def added_marks(line: str, sources: Iterable[str]) -> str:
    """Symbols and '?' / '!' that `line` has and none of `sources` had ('' if none).

    The words may all be there while a mark reverses or doubts them: "❌ Runs the data team",
    "¬ likes tea", "Runs the data team?". A merge or rewording may not add one.
    """
    held = set().union(*map(set, sources))
    added = {c for c in line if c in _MARKS or unicodedata.category(c) in ("Sm", "So")} - held
    return "".join(sorted(added))


def merge_fault(line: str, sources: Sequence[str]) -> str:
    """Why `line` may not stand for the facts merged into it ('' when it may): a mark none had, or crossed parts."""
    if marks := added_marks(line, sources):
        return f"which adds {marks!r}, a mark no line it replaces had: it may say 'no' or 'maybe'"
    if _crossed(line, sources):
        return ("which carries one of the lines it replaces in none of its clauses: their parts are crossed "
                "(each must be one clause, read with the words they share in front)")
    return ""


_CLAUSE = re.compile(r"\s*(?:;|\b(?:and|but|while|whereas)\b)\s*", re.IGNORECASE)


def _crossed(line: str, sources: Sequence[str]) -> bool:
    """Whether a fact of one clause merged with others into `line` is carried by none of its clauses.

    "Sarah drinks tea at night and coffee in the morning" holds every word of "Sarah drinks tea in the
    morning" and of "Sarah drinks coffee at night", with the times crossed. A later clause is read with the
    first clause's leading words that every fact shares ("Sarah drinks coffee in the morning").
    """
    clauses = [clause for clause in _CLAUSE.split(line) if clause.strip()]
    if len(sources) < 2 or len(clauses) < 2:
        return False
    shared = frozenset.intersection(*(read(source).words for source in sources))
    head = list(itertools.takewhile(lambda word: read(word).words <= shared, clauses[0].split()))
    readings = [clauses[0], *(" ".join([*head, clause]) for clause in clauses[1:])]
    return any(not _CLAUSE.search(source) and not any(carries(clause, source) for clause in readings)
               for source in sources)


# "Sarah's brother": a name, its possessive, and the next word (what or whom of hers the line speaks of).
_POSSESSIVE = re.compile(r"(\w+)['\u2019]s\s+(\w+)")


def _owner_only(evidence: str, who: Subject, fact_words: frozenset[str]) -> bool:
    """Whether `evidence` names `who` only as the owner of someone or something the fact does not speak of.

    "Sarah's brother is 35" is about her brother, not about Sarah; "Sarah's birthday is 4 May" is about
    her birthday, which her fact names too.
    """
    folded = unicodedata.normalize("NFC", evidence).casefold()
    mentions = sum(1 for part in _PART.findall(folded.replace("\u2019", "'")) if part in who)
    owned = [thing for owner, thing in _POSSESSIVE.findall(folded) if owner in who]
    others = [thing for thing in owned if not (fact_words & read(thing).words)]
    return bool(others) and len(others) == len(owned) == mentions


def about(evidence: str, who: Subject, fact_words: frozenset[str], subjects: Subjects) -> bool:
    """Whether an evidence line may speak of `who`: it names them, or names nobody else.

    "Tom's birthday is 4 May" is not about Sarah, whatever it shares with her line; "Her birthday
    moved to 4 May" names nobody else, so it may be. Nor is "Sarah's brother is 35", which names her
    only as the owner of someone her fact does not speak of (`_owner_only`).
    """
    if who and _owner_only(evidence, who, fact_words):
        return False
    said = subjects.of(None, evidence)
    if said == who:
        return True
    if said and said != who:
        return False  # it names another entity of the file (or speaks of the user first)
    if who and _names(evidence) & who:
        return True
    return not (_names(evidence) - fact_words - who)


# Verbs that say a value came about: each may stand for the one content word of the fact it lacks
# ("Sarah moved to Paris" says "Sarah lives in Paris", "Tom got a dog" says "Tom owns a dog"), and so may
# "take over" ("Alice took over Atlas" says "Alice leads Atlas").
_CHANGE = frozenset(map(wording.stem, "move relocate become turn switch change get adopt buy succeed".split()))
# Verbs that put a value in an aim, a refusal or a thought, not in what is so.
_INTENT = frozenset(map(wording.stem, """want wish hope plan intend consider refuse decline reject try attempt
    think dream dreamt imagine pretend deny doubt wonder rumour rumor""".split()))
# Qualifiers (`wording`) that say it did not quite happen: "Sarah almost moved to Paris".
_SHORT_OF = frozenset({"almost", "hardly", "former"})
# Words that put the value ahead, in a plan ("Sarah is moving to Paris next year", "is going to move"):
# "will" is a hedge already (`wording.HEDGES`); these say the same without it.
_AHEAD = frozenset(map(wording.stem, "next soon tomorrow upcoming".split()))
_GOING_TO = re.compile(r"\b(?:going to|gonna)\b", re.IGNORECASE)


def as_so(evidence: str, fact: str) -> bool:
    """Whether `evidence` says what it says as so: not a question, a hedge, a plan ahead, an aim, a refusal or
    a thought the fact does not hold ("Does Sarah live in Paris?", "Sarah is moving to Paris next year",
    "Sarah wants to live in Paris")."""
    e, f = read(evidence), read(fact)
    ahead = bool((e.plain & _AHEAD) - f.plain) or (bool(_GOING_TO.search(evidence)) and not _GOING_TO.search(fact))
    return asserts(evidence, fact) and not ahead and not (e.plain & _INTENT) - f.plain and not (
        _SHORT_OF & set(e.roles.markers)) - set(f.roles.markers)


# "30 cats' worth of food" is an amount of food: the number and the noun before "worth of" measure it, and
# say nothing of cats. Found from "worth of" back, at most MEASURE_CHARS before it, so a long line costs one pass.
_WORTH_OF = re.compile(r"\bworth\s+of\b", re.IGNORECASE)
_MEASURED = re.compile(
    r"(?:\b(?:an?|\d[\d.,]{0,20})\s+)?[$\u20ac\u00a3]?\b\w{1,40}(?:['\u2019]s|s['\u2019])?\s+$", re.IGNORECASE)
MEASURE_CHARS = 100


def without_measures(text: str) -> str:
    """`text` with each measure before "worth of" taken out: "bought 30 cats' worth of food" → "bought food"."""
    kept, last = [], 0
    for found in _WORTH_OF.finditer(text):
        head = text[last:found.start()]
        measure = _MEASURED.search(head, max(0, len(head) - MEASURE_CHARS))
        kept += [head[: measure.start()] if measure else head, " "]
        last = found.end()
    return "".join(kept) + text[last:]


def states(evidence: str, fact: str, who: Subject) -> bool:
    """Whether `evidence` says what `fact` says, as so, of `who`: see the module docstring.

    "Sarah visited Paris" holds "Sarah" and "Paris" but not "lives"; "Sarah wants to live in Paris"
    holds every word, as a wish.
    """
    if not as_so(evidence, fact):
        return False
    measured = without_measures(evidence)
    f, e = read(without_measures(fact)), read(measured)
    if measured != evidence and (f.numbers | f.times) & (read(evidence).words - e.words):
        return False  # the fact's value is in the evidence only as a measure
    missing = f.plain - e.words - who - {wording.stem(word) for word in who}
    changed = bool((e.plain & _CHANGE) - f.plain) or ("take" in e.plain and "over" in e.roles.markers)
    # What someone is or has is said with "is" or "has" too ("Sarah has 30 cats" / "Sarah donated 30 cats").
    # The value after another preposition is another claim ("an hour from Paris" / "in Paris"); "to" with a
    # verb of change says where it came to be ("moved to Paris").
    held = _bound(e)
    for value, markers in _bound(f).items():
        if held.get(value) and not held[value] & markers and not (changed and "to" in held[value]):
            return False
    links, said = _links(fact), _links(evidence)
    if not changed and any(links & forms and not said & forms for forms in (wording.BE_FORMS, wording.HAVE_FORMS)):
        return False
    return not missing or (len(missing) == 1 and changed)


def _bound(reading: Reading) -> dict[str, set[str]]:
    """The prepositions that bind each value of a line ("in Paris": {"w:pari": {"in"}})."""
    bound: dict[str, set[str]] = defaultdict(set)
    for marker, phrase in reading.roles.bound:
        for k in phrase:
            if marker in wording.PREPOSITIONS and reading.roles.items[k].value:
                bound[reading.roles.items[k].key].add(marker)
    return bound


_CONTRACTED_BE = re.compile(r"\b(?:he|she|it|they|who|that|there)['\u2019]s\b", re.IGNORECASE)


def _links(text: str) -> set[str]:
    """The forms of "be" and "have" a line uses ("isn't" is "is"; "she's" is both "is" and "has")."""
    words = {word.removesuffix("n't") for word in tokens(text)} & (wording.BE_FORMS | wording.HAVE_FORMS)
    return words | ({"is", "has"} if _CONTRACTED_BE.search(text) else set())


def supports(evidence: str, fact: str, who: Subject, subjects: Subjects) -> bool:
    """Whether an evidence line backs `fact` (about `who`) being on file: see the module docstring."""
    if not about(evidence, who, read(fact).words, subjects) or not as_so(evidence, fact):
        return False
    if carries(without_measures(evidence), without_measures(fact)):
        return True
    a, e = read(fact), read(evidence)
    if a.negated != e.negated or relate(fact, evidence) is Relation.CONTRADICTS:
        return False
    # "Tom said he moved to Oslo" backs "Tom lives in Oslo"; "Sarah visited Paris" backs no "Sarah lives in Paris".
    return (a.numbers | a.times | a.names) <= e.words and states(evidence, fact, who)


def novel_values(line: str, sources: Iterable[str]) -> frozenset[str]:
    """The values (numbers, dates, names) of `line` that none of `sources` holds: what a merge would invent."""
    reading = read(line)
    held: set[str] = set()
    for source in sources:
        held |= read(source).words
    return (reading.numbers | reading.times | reading.names) - held


def _names(text: str) -> frozenset[str]:
    """The names a line holds; a capitalised first word only when possessive ("Tom's birthday")."""
    reading = read(text)
    first = text.split()[:1]
    possessive = bool(first) and first[0].endswith(("'s", "\u2019s"))
    return reading.names | (reading.lead if possessive else frozenset())
