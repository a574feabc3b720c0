"""How two wordings of one claim may differ, for fact dedup (pure; no I/O).

`compare.relate` reads each fact into stems and values; this module holds the rules that let
paraphrases read alike without letting a changed value through:

* **Word forms.** Stems are Porter2 (Snowball English) stems of the word's base form: Porter2
  reads "focus" and "focused" alike where the original Porter stemmer makes "focu" of the
  first, and a closed table maps irregular past forms to their base ("wrote" -> "write",
  "led" -> "lead"), which no suffix rule can. An agent noun counts as its verb when the
  other fact has that verb ("leader" / "leads", "owner" / "owns").
* **Light verbs.** A verb that only links its subject to what follows, as "is" does, is
  dropped before the word it links with: "works on" reads as "is on", "serves as" as "is".
* **Word order.** Values (names, numbers, dates) in another order are another claim ("Sarah
  reports to Bob" / "Bob reports to Sarah"), except for two reorderings that keep every
  value's role:
  - items of one list, joined by "and", "or", "&" or "A, B and C", in any order;
  - a compound against a prepositional phrase: "the X key for Y" is "the Y X key", and "the
    lead of Y" is "the Y lead". Only a phrase after a determiner ("the", "a", "my", ...)
    moves, so "Sarah works for Bob" never reads as "Bob works for Sarah".
* **Function words and roles** (issue 23). Prepositions, quantifiers, modals, tense, aspect and
  persons are compared, not dropped, and each preposition or quantifier binds the words after it
  (`structure`, `same_roles`); plain content words keep their order too, except for the moves
  that keep every role: list items, the two sides of one "is", a fronted phrase, a passive read
  as its active ("is used by the team"), "the X for Y" as "the Y X", an agent noun as its verb.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from whoosh.lang.snowball.english import EnglishStemmer

from wolfmem.core import tokens as text

# Irregular verbs: base, then its past forms. A closed class, so a table; a lemmatiser library
# (simplemma) was measured at +25 MB resident for its English dictionary, and it folds more
# than verbs ("best" -> "good"), which would merge a superlative with its plain adjective.
# Forms that are also common nouns or names are left out ("rose", "bound", "ground", "wound").
_IRREGULAR_VERBS = """
    begin:began,begun bite:bit,bitten blow:blew,blown break:broke,broken bring:brought
    build:built buy:bought catch:caught choose:chose,chosen come:came become:became
    deal:dealt dig:dug draw:drew,drawn drink:drank,drunk drive:drove,driven eat:ate,eaten
    fall:fell,fallen feed:fed feel:felt fight:fought find:found flee:fled fly:flew,flown
    forget:forgot,forgotten forgive:forgave,forgiven freeze:froze,frozen get:got,gotten
    give:gave,given grow:grew,grown hang:hung hear:heard hide:hid,hidden hold:held
    keep:kept know:knew,known lay:laid lead:led leave:left lend:lent lose:lost make:made
    mean:meant meet:met oversee:oversaw,overseen pay:paid prove:proven rebuild:rebuilt
    rewrite:rewrote,rewritten ride:rode,ridden ring:rang,rung run:ran say:said see:saw,seen
    seek:sought sell:sold send:sent shake:shook,shaken shine:shone shoot:shot show:shown
    shrink:shrank,shrunk sing:sang,sung sink:sank,sunk sit:sat sleep:slept slide:slid
    speak:spoke,spoken speed:sped spend:spent spin:spun stand:stood steal:stole,stolen
    stick:stuck strike:struck swear:swore,sworn swim:swam,swum swing:swung take:took,taken
    teach:taught tear:tore,torn tell:told think:thought throw:threw,thrown
    undertake:undertook,undertaken understand:understood uphold:upheld wake:woke,woken
    wear:wore,worn weave:wove,woven win:won withdraw:withdrew,withdrawn
    withhold:withheld write:wrote,written
"""
_BASE_FORMS = {
    form: base
    for entry in _IRREGULAR_VERBS.split()
    for base, forms in [entry.split(":")]
    for form in forms.split(",")
}

_STEMMER = EnglishStemmer()


@functools.lru_cache(maxsize=8192)
def stem(token: str) -> str:
    """Porter2 stem of a lowercase token's base form ('wrote' -> 'write', 'focused' -> 'focus')."""
    return _STEMMER.stem(_BASE_FORMS.get(token, token))


# A light verb is dropped when the next word is one of these: it then says no more than "is".
_LIGHT_VERBS = {stem("work"): frozenset({"on", "at", "for"}), stem("serve"): frozenset({"as"}),
                stem("act"): frozenset({"as"})}


def is_light(token: str, following: str | None) -> bool:
    """Whether `token` is a light verb here: one that links what follows as "is" would."""
    return following is not None and following in _LIGHT_VERBS.get(stem(token), ())


def agent_base(stem_: str, others: frozenset[str]) -> str:
    """The verb stem in `others` that agent noun `stem_` is made from ('leader' -> 'lead'), else itself."""
    if stem_ in others or not stem_.endswith(("er", "or")):
        return stem_
    # lead-er, writ(e)-r, run-n-er: the suffix, the suffix after a silent e, a doubled consonant.
    bases = (stem_[:-2], stem_[:-1], stem_[:-3] if stem_[-3:-2] == stem_[-4:-3] else "")
    return next((base for base in bases if base and base in others), stem_)


# --- word order --------------------------------------------------------------------------

@dataclass(frozen=True)
class Token:
    """One word token of a fact, the text between it and the previous one, and its value key if any."""

    word: str
    gap: str
    value: str | None = None
    lead: bool = False  # a capitalised first word: maybe a name, maybe a verb ("Uses Kafka")


_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def tokens_with_gaps(fact: str) -> list[tuple[str, str]]:
    """`text.tokens(fact)`, each with the text that precedes it (punctuation, spaces)."""
    lowered = fact.translate(_APOSTROPHES).lower()  # as text.tokens reads them
    out = []
    position = 0
    for word in text.tokens(fact):
        found = lowered.find(word, position)
        if found < 0:  # a character that lowercases differently: no gap to report
            out.append((word, ""))
            continue
        out.append((word, lowered[position:found]))
        position = found + len(word)
    return out


_COORDINATORS = frozenset({"and", "or", "nor", "plus"})
_ARTICLES = frozenset({"a", "an", "the"})
# Not "that": it also starts a clause ("the team that Sarah manages for Bob").
_DETERMINERS = _ARTICLES | frozenset("my our your his her their its this these those".split())
_OF = frozenset({"of", "for"})
# A fact's values in reading order: each group a list whose items may come in any order, each item
# (a multi-word name such as "Dave Smith", or "Port 8080") a tuple whose words keep their order.
Order = tuple[frozenset[tuple[str, ...]], ...]


def _join(between: Sequence[Token], gap_after: str) -> str | None:
    """How two values with `between` tokens (and `gap_after` before the second) are joined."""
    words = {token.word for token in between}
    gaps = "".join(token.gap for token in between) + gap_after
    if words - _ARTICLES - _COORDINATORS or gaps.strip(" ,&"):
        return None
    if words & _COORDINATORS or "&" in gaps:
        return "and"
    if "," in gaps:
        return "comma"
    return "space" if not words else None


def _groups(tokens: Sequence[Token]) -> list[list[list[int]]]:
    """Token positions of values: lists ("A, B and C") of items (one name, possibly of several words)."""
    positions = [i for i, token in enumerate(tokens) if token.value is not None]
    runs: list[list[tuple[int, str | None]]] = []
    for previous, current in zip([None, *positions], positions, strict=False):
        join = None if previous is None else _join(tokens[previous + 1: current], tokens[current].gap)
        if join == "space" and tokens[previous].lead:  # type: ignore[index]
            join = None
        if join is None:
            runs.append([(current, None)])
        else:
            runs[-1].append((current, join))
    groups: list[list[list[int]]] = []
    for run in runs:
        # A comma joins list items only when "and"/"or" closes the list later on; otherwise it is
        # an aside ("Sarah, Bob's manager, ..."), and the values keep their own places.
        last_and = max((k for k, (_, join) in enumerate(run) if join == "and"), default=-1)
        for k, (position, join) in enumerate(run):
            if join is None or (join == "comma" and k > last_and):
                groups.append([[position]])
            elif join == "space":
                groups[-1][-1].append(position)
            else:
                groups[-1].append([position])
    return groups


def _compound_start(tokens: Sequence[Token], first: int) -> int | None:
    """Where "the X key" starts when the value at `first` ends "the X key for <value>", else None."""
    k = first - 1
    while k >= 0 and tokens[k].word in _ARTICLES:
        k -= 1
    if k < 1 or tokens[k].word not in _OF:
        return None
    start = k
    while start > 0 and tokens[start - 1].word not in text.STOP_WORDS:
        start -= 1
    if start == k or start == 0 or tokens[start - 1].word not in _DETERMINERS:
        return None
    # A compound's names come first ("the GitHub SSH key"); a name after a noun starts a clause
    # ("the engineer Sarah hired for Bob"), whose roles a move would swap.
    kinds = [token.value is not None for token in tokens[start:k]]
    if kinds != sorted(kinds, reverse=True):
        return None
    return start


def _canonical(order: list[frozenset[tuple[str, ...]]]) -> Order:
    """`order` with each lone item (not in a list) split into one group per value.

    Only a list needs items of several words ("Dave Smith and Ana Lopez"); elsewhere adjacent
    values are just in sequence, so "the Atlas Slack channel" lines up with "the Slack channel
    for Atlas" read as a compound.
    """
    out: list[frozenset[tuple[str, ...]]] = []
    for group in order:
        if len(group) == 1:
            out.extend(frozenset({(value,)}) for value in next(iter(group)))
        elif group:
            out.append(group)
    return tuple(out)


def value_orders(tokens: Sequence[Token]) -> frozenset[Order]:
    """The orders a fact's values may be read in: as written, and with "X for Y" read as "Y X"."""
    groups = _groups(tokens)
    written = [
        frozenset(tuple(str(tokens[p].value) for p in item) for item in group) for group in groups
    ]
    moves = [(g, start) for g, group in enumerate(groups)
             if (start := _compound_start(tokens, group[0][0])) is not None]
    orders = set()
    for count in range(min(len(moves), 3) + 1):
        for chosen in itertools.combinations(moves, count):
            place = {g: float(group[0][0]) for g, group in enumerate(groups)}
            place.update((g, start - 0.5) for g, start in chosen)
            orders.add(_canonical([written[g] for g in sorted(place, key=lambda g: (place[g], g))]))
    return frozenset(orders)


def project(orders: frozenset[Order], kind: str) -> frozenset[Order]:
    """The same orders with only the values whose key starts with `kind` ("n:", "w:", ...)."""
    return frozenset(
        _canonical([
            frozenset(item for item in (tuple(v for v in item if v.startswith(kind)) for item in group) if item)
            for group in order
        ])
        for order in orders
    )


def values(orders: frozenset[Order]) -> list[str]:
    """Every value key of a fact's orders, sorted (each order holds the same values)."""
    first = next(iter(orders), ())
    return sorted(value for group in first for item in group for value in item)


# --- function words that carry meaning (issue 23) --------------------------------------------
#
# Two facts with the same content words still say different things when a word from one of these
# closed classes differs: a preposition or particle ("tabs over spaces", "on" / "off"), a quantifier
# ("only", "all", "some"), a modal ("can" / "must"), a tense or aspect ("was", "will", "used to",
# "no longer", "stopped"), a person ("he" / "she"), "or", "if". They are compared as written: a fact
# repeats another only with the same ones. Prepositions and quantifiers also bind the words that
# follow them, so "over spaces" and "over tabs" differ though both facts hold "tabs" and "spaces".

def _words(text_: str) -> list[str]:
    """The words of a word list written as one string."""
    return text_.split()


# Each binds the phrase after it: the words it binds must be the same in both facts.
PREPOSITIONS = frozenset(_words(
    """on off in out up down over under above below before after with without for against from to
    into onto at by about between since until till within toward towards across behind beside inside
    outside near per than as around during except upon beyond beneath along among throughout"""
))
QUANTIFIERS = frozenset(_words("only all any both each every few fewer many more most less least some several none"))
BINDING = PREPOSITIONS | QUANTIFIERS
# Compared as a count only: they qualify the whole claim, wherever they stand.
_QUALIFYING = {
    **{w: w for w in _words("can could may might must shall should will would ought")},
    **{w: w for w in _words("always usually often sometimes rarely seldom occasionally frequently generally "
                            "normally typically")},
    **{w: w for w in _words("still anymore longer again already yet ever")},
    **{w: "stop" for w in _words("stop stops stopped stopping quit quits quitting cease ceases ceased")},
    **{w: "start" for w in _words("start starts started starting begin begins began begun")},
    **{w: "he" for w in _words("he him his himself")},
    **{w: "she" for w in _words("she her hers herself")},
    **{w: "they" for w in _words("they them their theirs themselves")},
    **{w: "you" for w in _words("you your yours yourself yourselves")},
    **{w: w for w in _words("or if unless either here there same other such")},
    # Hedges are modality too ("Sarah probably prefers tea"), and so are multiples ("half the team").
    **{w: w for w in _words("maybe perhaps probably possibly likely unlikely certainly definitely")},
    **{w: w for w in _words("half twice double triple")},
    "was": "past", "were": "past", "had": "past", "did": "past", "been": "perfect",
}
_CONTRACTED = {"wo": "will", "ca": "can", "sha": "shall"}  # "won't", "can't", "shan't"
_UNSPACED = {"cannot": "can", "cant": "can", "wont": "will", "didnt": "past", "wasnt": "past"}
BE_FORMS = frozenset(_words("is are am be being been was were"))
HAVE_FORMS = frozenset(_words("has have having had"))
# Words that may stand between an auxiliary and its verb without changing which verb it is.
ADVERBS = frozenset(_words(
    "not never always usually often sometimes rarely seldom also still just only already ever now currently no longer"
))
COORDINATORS = frozenset({"and", "or", "nor", "plus"})
DETERMINERS = _DETERMINERS


def qualifier(token: str) -> str | None:
    """The marker key a qualifying word adds ('won't' -> 'will', 'was' -> 'past'), else None."""
    if token.endswith("n't"):
        base = token[:-3]
        return _QUALIFYING.get(_CONTRACTED.get(base, base))
    if token.endswith("'ll"):
        return "will"
    if token.endswith("'d"):
        return "would"
    return _UNSPACED.get(token) or _QUALIFYING.get(token)


# Past forms: the first form of each irregular verb (its simple past), and regular "-ed" forms.
# A participle after "is" / "has" is not a past of its own: the auxiliary carries the tense.
_PAST_FORMS = frozenset(
    forms.split(",")[0] for entry in _IRREGULAR_VERBS.split() for forms in [entry.split(":")[1]]
) | {"went", "did", "had", "used"}
_PARTICIPLES = frozenset(_BASE_FORMS) | {"gone", "done", "been"}


def is_regular_past(token: str) -> bool:
    """Whether `token` reads as a regular '-ed' form: 'joined', 'moved'; not 'need', 'speed', 'red'."""
    return len(token) >= 4 and token.endswith("ed") and not token.endswith("eed") and token.isalpha()


def is_past(token: str) -> bool:
    """Whether `token` is a simple past form ('wrote', 'joined')."""
    return token in _PAST_FORMS or is_regular_past(token)


def is_participle(token: str) -> bool:
    """Whether `token` can be a past participle ('written', 'used', 'tagged')."""
    return token in _PARTICIPLES or is_regular_past(token)


# Number words and units: "two designers" holds the number 2; "5 km" and "5 miles" are other values.
NUMBER_WORDS = {
    **{w: str(n) for n, w in enumerate(_words("zero one two three four five six seven eight nine ten eleven twelve"))},
    "twenty": "20", "thirty": "30", "hundred": "100", "thousand": "1000", "dozen": "12",
}
UNITS = frozenset(_words(
    """km m cm mm mi mile miles ft feet foot inch inches yd yard yards kg g mg lb lbs oz ton tons
    tonne tonnes l ml dl litre liter litres liters gallon gallons gb tb mb kb gib mib tib hour hours
    hr hrs h minute minutes min mins second seconds sec secs s ms day days week weeks month months
    year years degree degrees percent dollar dollars euro euros usd eur gbp yen pound pounds cent
    cents mmol kcal cal calorie calories"""
))
CURRENCIES = {"$": "usd", "\u20ac": "eur", "\u00a3": "gbp", "\u00a5": "jpy", "\u20b9": "inr"}


# --- roles: which words stand where -------------------------------------------------------------

@dataclass(frozen=True)
class Item:
    """A content word of a fact (or the pivot "=" of "X is Y"), where it is read, and how it may move."""

    key: str
    place: float
    run: int  # content words with nothing between them share a run ("the mobile team lead")
    value: bool = False  # a name, number or date: its order is `value_orders`' business
    agentive: bool = False  # an "-er"/"-or" noun, which reads as its verb opposite that verb
    listed: bool = False  # joined to the content word before it by "and" / "or": a list item
    lead: bool = False  # a capitalised first word: a name when the other fact writes it as one
    past: bool = False  # a past form ("wrote", "joined"), which adds the marker "past"


@dataclass(frozen=True)
class Structure:
    """The meaning-bearing function words of a fact, its content words in reading order, and what each binds."""

    markers: tuple[str, ...] = ()  # sorted, with repeats
    items: tuple[Item, ...] = ()
    bound: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (preposition or quantifier, the items it binds)


PIVOT = "="
SKIP = ""  # a token whose meaning another token already carries ("km" of "5 km", "to" of "used to")
_PUNCTUATION = frozenset(",;:()[]{}!?\"/|")


def _closes(gap: str) -> bool:
    """Whether the text between two words ends a phrase: a comma, a bracket, a colon."""
    return any(ch in _PUNCTUATION for ch in gap)


class _Builder:
    """Reads a fact's tokens once, left to right, into a `Structure` (see `structure`)."""

    def __init__(self) -> None:
        self.markers: list[str] = []
        self.items: list[Item] = []
        self.bound: list[tuple[str, list[int]]] = []
        self.phrase: list[int] | None = None  # the items the latest preposition binds, while it is open
        self.run = 0
        self.content_before = False  # the previous token was a content word
        self.aux: str | None = None  # "be" / "have": the next verb may be a participle
        self.be_place: float | None = None  # a form of "be" whose role the next word decides
        self.listed = False
        self.passive: int | None = None  # the participle's item in "is used", read as the active verb
        self.agent: list[int] | None = None  # the items after "by" in "is used by the team"
        self.compounds: list[tuple[list[int], float, int]] = []  # ("for" phrase, where its noun starts, run)

    def close(self) -> None:
        """A comma or bracket: the open phrase and the run of content words end here."""
        self.phrase = None
        self.run += 1
        self.content_before = False

    def pivot_now(self) -> None:
        """The pending "is" links two sides ("Sarah is my manager"): a pivot either side may stand on."""
        if self.be_place is not None:
            self.items.append(Item(PIVOT, self.be_place, -1))
            self.be_place = None

    def content(self, token: str, key: str, place: float, value: bool, lead: bool = False) -> None:
        """A content word: settles a waiting "is" (pivot, passive, progressive) and joins the open phrase."""
        if self.aux == "be" and self.be_place is not None and not value:
            if is_participle(token):
                self.passive = len(self.items) if self.passive is None else self.passive
                self.be_place = None
            elif token.endswith("ing"):
                self.be_place = None  # "is working": no pivot
        past = self.aux is None and is_past(token) and not value
        if self.aux == "have" and is_participle(token) and not value:
            self.markers.append("perfect")
        elif past:
            self.markers.append("past")
        self.pivot_now()
        agentive = not value and len(token) > 3 and token.endswith(("er", "or"))
        self.items.append(Item(key, place, self.run, value, agentive, self.listed, lead, past))
        moving = self.phrase is not None and any(self.phrase is c[0] for c in self.compounds[-1:])
        if moving and self.phrase and not (value and all(self.items[k].value for k in self.phrase)):
            self.phrase = None  # "the deploy key for GitHub lives": only "GitHub" (or a name of several words) moves
        if self.phrase is not None:
            self.phrase.append(len(self.items) - 1)
        self.aux = None
        self.listed = False
        self.content_before = True

    def binding(self, token: str, place: float, tokens: Sequence[tuple[str, str]], i: int) -> None:
        """A preposition or quantifier: opens the phrase it binds (or an agent, or a compound's moving part)."""
        self.pivot_now()
        if token == "by" and self.passive is not None and self.passive == len(self.items) - 1:
            self.agent = self.phrase = []  # "is used by the team": the team uses it
        elif token in _OF and self.content_before and self._compound(tokens, i):
            # "the deploy key for GitHub" is "the GitHub deploy key": the phrase moves before the noun.
            start = next(k for k in range(len(self.items) - 1, -1, -1)
                         if k == 0 or self.items[k - 1].run != self.items[k].run)
            self.phrase = []
            self.compounds.append((self.phrase, self.items[start].place, self.items[start].run))
        else:
            self.markers.append(token)
            self.phrase = []
            self.bound.append((token, self.phrase))
        self.run += 1
        self.content_before = False
        self.aux = None

    @staticmethod
    def _compound(tokens: Sequence[tuple[str, str]], i: int) -> bool:
        """Whether "for" at token `i` ends a noun phrase: "the X key for Y", or "X notes for Y is ..." first.

        After a determiner the words before "for" name a thing; at the start of a fact they do only
        when "is" / "are" follows the one word after "for" ("Release notes for wolfmem are kept"),
        since "Cooks dinner for the kids" starts with a verb.
        """
        k = i - 1
        while k >= 0 and tokens[k][0] not in text.STOP_WORDS and not _closes(tokens[k + 1][1]):
            k -= 1
        if k == i - 1:
            return False
        if k >= 0:
            return tokens[k][0] in DETERMINERS
        j = i + 1
        while j < len(tokens) and tokens[j][0] in _ARTICLES:
            j += 1
        return j + 1 < len(tokens) and tokens[j][0] not in text.STOP_WORDS and tokens[j + 1][0] in BE_FORMS

    def finish(self) -> Structure:
        """The structure, with a passive read as its active and each "the X for Y" as "the Y X"."""
        self.pivot_now()
        items = list(self.items)
        if self.passive is not None:
            participle = self.passive
            # "Releases are tagged" reads "tag releases"; "... by the team": "the team tags releases".
            items[participle] = replace(items[participle], place=-1.0)
            if self.agent is not None and not any(items[k].value for k in self.agent):
                for n, k in enumerate(self.agent):
                    items[k] = replace(items[k], place=-2.0 + n / 1000)
            elif self.agent is not None:
                self.markers.append("by")  # a name after "by" keeps "by": its order is the value rule's
                self.bound.append(("by", self.agent))
        for phrase, start, run in self.compounds:
            for n, k in enumerate(phrase):
                items[k] = replace(items[k], place=start - 0.5 + n / 1000, run=run)
        return Structure(tuple(sorted(self.markers)), tuple(items),
                         tuple((marker, tuple(phrase)) for marker, phrase in self.bound))


def structure(
    tokens: Sequence[tuple[str, str]], keys: Sequence[str | None], values: Sequence[bool], leads: Sequence[bool]
) -> Structure:
    """Read a fact's function words and roles: `keys[i]` is token i's content key, None, or SKIP.

    A content key is a stem or value key the caller chose; None marks a function word, which is
    read here: prepositions and quantifiers open a phrase that binds the content words after them,
    qualifiers (modals, tense, aspect, persons) are counted, a form of "be" is a pivot ("X is Y"),
    a passive ("is used by the team") reads as its active, "the X for Y" reads as "the Y X".
    """
    b = _Builder()
    skip_next = False
    for i, ((token, gap), key) in enumerate(zip(tokens, keys, strict=True)):
        following = tokens[i + 1][0] if i + 1 < len(tokens) else None
        if _closes(gap):
            b.close()
        if skip_next or key == SKIP:
            skip_next = False
            continue
        place = float(i)
        if key is not None:
            b.content(token, key, place, values[i], leads[i])
            continue
        b.run += 1  # any function word ends a run of content words
        listed, b.listed = b.listed, False
        if token in ("used", "going") and following == "to":
            b.markers.append("used" if token == "used" else "will")  # "used to", "is going to"
            b.be_place = None
            skip_next = True
            continue
        mark = qualifier(token)
        if token in BINDING:
            b.binding(token, place, tokens, i)
        elif token in BE_FORMS:
            b.pivot_now()
            b.content_before = False
            b.phrase = None
            b.aux, b.be_place = "be", place
            if mark:
                b.markers.append(mark)
        elif token in HAVE_FORMS:
            b.content_before = False
            b.phrase = None
            b.aux = "have"
            if mark:
                b.markers.append(mark)
        elif token in COORDINATORS or token in _ARTICLES or token in ("of", "my", "our", "its"):
            if token == "or":
                b.markers.append("or")
            # A list word joins the content words either side of it; an article after it keeps that.
            b.listed = (token in COORDINATORS and b.content_before) or (token in _ARTICLES and listed)
            b.content_before = False
            # Articles, "of" and list words keep a phrase open: "over the limit", "on Tuesday and Friday".
        elif mark is not None or token in ADVERBS or token.endswith("n't"):
            if mark:
                b.markers.append(mark)
                b.phrase = None  # "any admin can restart": the modal ends what "any" binds
            b.content_before = False
            # Qualifiers and negations leave the auxiliary waiting: "is not used", "has never failed".
        else:
            if b.aux is None and is_past(token):
                b.markers.append("past")  # "went", "got": a light verb still has a tense
            if token not in ("do", "does", "doing", "done", "get", "gets", "got"):
                b.pivot_now()
            if b.phrase is not None and b.phrase:
                b.phrase = None
            b.run += 1
            b.content_before = False
    return b.finish()


def _matched(a: Sequence[str], b: Sequence[str]) -> int | None:
    """How many leading words two bound phrases agree on, or None if they bind different things.

    The same words in any order agree ("on June 3rd" / "on 3 June"); so does one phrase that
    starts with all of the other ("On Fridays deploys never happen" / "... happen on Fridays"),
    where only the shared start is bound.
    """
    if sorted(a) == sorted(b):
        return len(a)
    short, long_ = sorted((tuple(a), tuple(b)), key=len)
    return len(short) if long_[: len(short)] == short else None


def _sequence(
    s: Structure, keys: Sequence[str], claimed: set[int], folded: set[int], names: set[int]
) -> tuple[object, ...]:
    """The content words outside bound phrases in reading order: lists unordered, "X is Y" either way round."""
    place = {k: item.place for k, item in enumerate(s.items)}
    run_start: dict[int, float] = {}
    for item in s.items:
        run_start[item.run] = min(run_start.get(item.run, item.place), item.place)
    pivots = sorted((item.place, k) for k, item in enumerate(s.items) if item.key == PIVOT)
    words = sorted(item.place for k, item in enumerate(s.items)
                   if not item.value and k not in names and item.key != PIVOT and k not in claimed)
    dropped: set[int] = set()
    for k in folded:
        # "is the owner of the repo" reads "owns the repo": the noun leads its run, its "is" goes.
        start = run_start[s.items[k].run]
        place[k] = start - 0.1
        before = bisect.bisect_left(pivots, (start, -1)) - 1
        if before >= 0 and bisect.bisect_left(words, start) == bisect.bisect_right(words, pivots[before][0]):
            dropped.add(pivots[before][1])
    out: list[object] = []
    after_value = False  # "Vim and tmux": a list of a name and a word, whose order the value rule reads
    for k in sorted(range(len(s.items)), key=lambda j: (place[j], j)):
        item = s.items[k]
        if item.value or k in names:
            after_value = True
            continue
        if k in claimed or k in dropped:
            continue
        listed, after_value = item.listed and not after_value, False
        if listed and out and out[-1] != PIVOT:
            last = out.pop()
            out.append(frozenset(last) | {keys[k]} if isinstance(last, frozenset) else frozenset({last, keys[k]}))
        else:
            out.append(keys[k])
    if out.count(PIVOT) == 1:
        cut = out.index(PIVOT)
        left, right = tuple(out[:cut]), tuple(out[cut + 1:])
        if left and right:
            return (PIVOT, frozenset({left, right}))
        return left or right
    return tuple(word for word in out if word != PIVOT)


def same_roles(a: Structure, b: Structure, keys_a: Sequence[str], keys_b: Sequence[str],
               folded_a: set[int], folded_b: set[int]) -> bool:
    """Whether two facts with the same words bind them alike and read them in the same order.

    `keys_*` are each item's key once agent nouns are read as verbs (`folded_*` are those items).
    Each preposition or quantifier must bind the same words in both (matched in order of
    occurrence); the words outside those phrases must then come in the same order, except that
    list items may swap and the two sides of one "is" may swap ("Sarah is my manager").
    """
    if a.markers != b.markers:
        return False
    claimed_a: set[int] = set()
    claimed_b: set[int] = set()
    for marker in sorted({marker for marker, _ in a.bound}):
        mine = [phrase for m, phrase in a.bound if m == marker]
        theirs = [phrase for m, phrase in b.bound if m == marker]
        if len(mine) != len(theirs):
            return False
        for x, y in zip(mine, theirs, strict=True):
            shared = _matched([keys_a[k] for k in x], [keys_b[k] for k in y])
            if shared is None:
                return False
            claimed_a.update(x[:shared])
            claimed_b.update(y[:shared])
    # A capitalised first word is a name (ordered by the value rule) unless the other fact writes it in
    # lower case: "Deploys go through ..." / "We deploy via ...".
    plain_a = {keys_a[k] for k, item in enumerate(a.items) if not item.value and not item.lead}
    plain_b = {keys_b[k] for k, item in enumerate(b.items) if not item.value and not item.lead}
    names_a = {k for k, item in enumerate(a.items) if item.lead and keys_a[k] not in plain_b}
    names_b = {k for k, item in enumerate(b.items) if item.lead and keys_b[k] not in plain_a}
    return (_sequence(a, keys_a, claimed_a, folded_a, names_a)
            == _sequence(b, keys_b, claimed_b, folded_b, names_b))
