"""Which words stand where in a fact: its function words, what each binds, its roles (pure; no I/O).

Two facts with the same content words still say different things when their function words or
roles differ (issue 23). `structure` reads one fact's tokens, left to right, into a `Structure`:
prepositions, quantifiers, modals, tense, aspect and persons (listed in `wording`) are compared,
not dropped, and each preposition or quantifier binds the words after it. `same_roles` then asks
whether two structures agree: plain content words keep their order too, except for the moves
that keep every role: list items, the two sides of one "is", a fronted phrase, a passive read
as its active ("is used by the team"), "the X for Y" as "the Y X", an agent noun as its verb.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace

from wolfmem.core import tokens as text
from wolfmem.core import wording


@dataclass(frozen=True)
class Item:
    """A content word of a fact (or the pivot "=" of "X is Y"), where it is read, and how it may move."""

    key: str
    place: float
    run: int  # content words with nothing between them share a run ("the mobile team lead")
    value: bool = False  # a name, number or date: its order is `wording.value_orders`' business
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
            if wording.is_participle(token):
                self.passive = len(self.items) if self.passive is None else self.passive
                self.be_place = None
            elif token.endswith("ing"):
                self.be_place = None  # "is working": no pivot
        past = self.aux is None and wording.is_past(token) and not value
        if self.aux == "have" and wording.is_participle(token) and not value:
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
        elif token in wording.OF_FOR and self.content_before and self._compound(tokens, i):
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
            return tokens[k][0] in wording.DETERMINERS
        j = i + 1
        while j < len(tokens) and tokens[j][0] in wording.ARTICLES:
            j += 1
        return j + 1 < len(tokens) and tokens[j][0] not in text.STOP_WORDS and tokens[j + 1][0] in wording.BE_FORMS

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
        if token == "far" and following == "from":  # "far from a vegetarian": hardly one
            b.markers.append("hardly")
            continue
        mark = wording.qualifier(token)
        if token in wording.BINDING:
            b.binding(token, place, tokens, i)
        elif token in wording.BE_FORMS:
            b.pivot_now()
            b.content_before = False
            b.phrase = None
            b.aux, b.be_place = "be", place
            if mark:
                b.markers.append(mark)
        elif token in wording.HAVE_FORMS:
            b.content_before = False
            b.phrase = None
            b.aux = "have"
            if mark:
                b.markers.append(mark)
        elif token in wording.COORDINATORS or token in wording.ARTICLES or token in ("of", "my", "our", "its"):
            if token == "or":
                b.markers.append("or")
            # A list word joins the content words either side of it; an article after it keeps that.
            b.listed = (token in wording.COORDINATORS and b.content_before) or (token in wording.ARTICLES and listed)
            b.content_before = False
            # Articles, "of" and list words keep a phrase open: "over the limit", "on Tuesday and Friday".
        elif mark is not None or token in wording.ADVERBS or token.endswith("n't"):
            if mark:
                b.markers.append(mark)
                b.phrase = None  # "any admin can restart": the modal ends what "any" binds
            b.content_before = False
            # Qualifiers and negations leave the auxiliary waiting: "is not used", "has never failed".
        else:
            if b.aux is None and wording.is_past(token):
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
) -> tuple[tuple[object, ...], frozenset[object] | None]:
    """The content words outside bound phrases in reading order: lists unordered, "X is Y" either way round.

    With a name (or other value) either side of one "is", also each side's words with its values.
    """
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
    sided: list[tuple[int, str]] = []  # each unbound value with how many words came before it
    after_value = False  # "Vim and tmux": a list of a name and a word, whose order the value rule reads
    for k in sorted(range(len(s.items)), key=lambda j: (place[j], j)):
        item = s.items[k]
        if item.value or k in names:
            if k not in claimed:
                sided.append((len(out), keys[k].partition(":")[2] or keys[k]))
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
        values_left = frozenset(value for n, value in sided if n <= cut)
        values_right = frozenset(value for n, value in sided if n > cut)
        # A name either side: which one a word stands with is the claim ("Tom's manager is Sarah" /
        # "Tom is Sarah's manager"), though the names keep their order.
        sides = frozenset({(left, values_left), (right, values_right)}) if values_left and values_right else None
        if left and right:
            return (PIVOT, frozenset({left, right})), sides
        return left or right, sides
    return tuple(word for word in out if word != PIVOT), None


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
    words_a, sides_a = _sequence(a, keys_a, claimed_a, folded_a, names_a)
    words_b, sides_b = _sequence(b, keys_b, claimed_b, folded_b, names_b)
    return words_a == words_b and (sides_a is None or sides_b is None or sides_a == sides_b)
