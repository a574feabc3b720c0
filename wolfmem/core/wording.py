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
* **Function words** (issue 23). The closed classes that carry meaning (prepositions,
  quantifiers, modals, tense, aspect, persons), number words and units are listed here;
  `roles` reads them into what binds what and in which order the content words stand.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

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


@functools.lru_cache(maxsize=8192)
def stem(token: str) -> str:
    """Porter2 stem of a lowercase token's base form ('wrote' -> 'write', 'focused' -> 'focus')."""
    return text.stem(_BASE_FORMS.get(token, token))


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


COORDINATORS = frozenset({"and", "or", "nor", "plus"})
ARTICLES = frozenset({"a", "an", "the"})
# Not "that": it also starts a clause ("the team that Sarah manages for Bob").
DETERMINERS = ARTICLES | frozenset("my our your his her their its this these those".split())
OF_FOR = frozenset({"of", "for"})  # "the X key for Y", "the lead of Y": a compound that may move
# A fact's values in reading order: each group a list whose items may come in any order, each item
# (a multi-word name such as "Dave Smith", or "Port 8080") a tuple whose words keep their order.
Order = tuple[frozenset[tuple[str, ...]], ...]


def _join(between: Sequence[Token], gap_after: str) -> str | None:
    """How two values with `between` tokens (and `gap_after` before the second) are joined."""
    words = {token.word for token in between}
    gaps = "".join(token.gap for token in between) + gap_after
    if words - ARTICLES - COORDINATORS or gaps.strip(" ,&"):
        return None
    if words & COORDINATORS or "&" in gaps:
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
    while k >= 0 and tokens[k].word in ARTICLES:
        k -= 1
    if k < 1 or tokens[k].word not in OF_FOR:
        return None
    start = k
    while start > 0 and tokens[start - 1].word not in text.STOP_WORDS:
        start -= 1
    if start == k or start == 0 or tokens[start - 1].word not in DETERMINERS:
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
    # Words that take back or weaken what the rest says: "hardly a vegetarian", "a former vegetarian".
    **{w: "hardly" for w in _words("hardly barely scarcely")},
    **{w: "almost" for w in _words("almost nearly")},
    **{w: "former" for w in _words("former formerly ex previously")},
    **{w: "partly" for w in _words("mildly slightly somewhat partly partially")},
    "was": "past", "were": "past", "had": "past", "did": "past", "been": "perfect",
}
# Markers that make a line a possibility, a plan or a condition rather than what is so: a line with one backs
# only a fact that says it too ("Sarah might move to Paris" does not back "Sarah lives in Paris").
HEDGES = frozenset(_words(
    "can could may might must shall should will would ought maybe perhaps probably possibly likely unlikely if unless"
))
_CONTRACTED = {"wo": "will", "ca": "can", "sha": "shall"}  # "won't", "can't", "shan't"
_UNSPACED = {"cannot": "can", "cant": "can", "wont": "will", "didnt": "past", "wasnt": "past"}
BE_FORMS = frozenset(_words("is are am be being been was were"))
HAVE_FORMS = frozenset(_words("has have having had"))
# Words that may stand between an auxiliary and its verb without changing which verb it is.
ADVERBS = frozenset(_words(
    "not never always usually often sometimes rarely seldom also still just only already ever now currently no longer"
))


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
    cents mmol kcal cal calorie calories w kw mw gw hz khz mhz ghz bps kbps mbps gbps"""
))
CURRENCIES = {"$": "usd", "\u20ac": "eur", "\u00a3": "gbp", "\u00a5": "jpy", "\u20b9": "inr"}
