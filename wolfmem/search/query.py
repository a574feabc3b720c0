"""Natural-language query → weighted index terms → ranked facts.

A question is mostly glue ("what did ... do"); the words that find the answer are the rare ones.
So each content term is weighted by its rarity on top of BM25F's own IDF. Terms held by a large
share of the facts (a name that starts every chat line, "user" in a profile) are not searched
for: their long posting lists would be most of the search's cost. They only break ties among
the candidates the rarer terms found. Measured on LoCoMo in BENCHMARKS.md.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from datetime import date

from wolfmem.errors import UsageError
from wolfmem.search import neighbours
from wolfmem.search.index import FactIndex
from wolfmem.search.query_dates import DAY_SLACK, DatedQuery, Window
from wolfmem.search.schema import Filters, IndexHit, Placed, path_of

# A term in more than this share of the facts is too common to search for ...
COMMON_SHARE = 0.05
# ... unless it is in no more facts than this: in a small vault every term is cheap and may matter.
COMMON_MIN_FACTS = 100
# How many candidates the rarer terms fetch (or `limit`, when more are asked), for common terms and
# neighbours to re-rank. A fixed number, not a multiple of the limit: the first hits of a search are the
# same whatever limit up to POOL is asked (with three per wanted hit, limit 20 credited the neighbours of
# 60 candidates, and its first ten were not limit 10's).
POOL = 30
# At most this many terms are searched for; a question has a handful, a pasted page thousands,
# and Whoosh's cost grows with every term OR-ed in. The rest only re-rank.
MAX_SEARCHED_TERMS = 32
# How strongly a term's rarity weighs on top of BM25's own IDF (weight = (idf / top idf) ** RARITY).
RARITY = 1.0
# A fact's score halves every FADE days it lies from the period a query names (0: no fading, and the
# window is a hard edge: the facts outside it only fill the list after every fact inside).
FADE = DAY_SLACK.days


@dataclass(frozen=True)
class QueryTerms:
    """A query's stemmed terms: those searched for, and common ones that only re-rank, with weights."""

    searched: dict[str, float]
    common: dict[str, float]


def idf(facts: int, holding: int) -> float:
    """BM25's inverse document frequency of a term held by `holding` of `facts` facts."""
    return math.log(1.0 + (facts - holding + 0.5) / (holding + 0.5))


def plan(index: FactIndex, text: str) -> QueryTerms:
    """Weigh the query's content terms by rarity (the rarest weighs 1.0) and set the common ones apart."""
    facts = index.count()
    holding = {term: index.doc_frequency("text", term) for term in dict.fromkeys(index.analyse(text))}
    if not holding:
        return QueryTerms({}, {})
    limit = max(COMMON_SHARE * facts, COMMON_MIN_FACTS)
    searched = [term for term, n in holding.items() if n <= limit] or list(holding)
    if len(searched) > MAX_SEARCHED_TERMS:
        # The rarest say the most; a term no fact holds finds nothing, so it goes last.
        searched = sorted(searched, key=lambda term: holding[term] or math.inf)[:MAX_SEARCHED_TERMS]
    weight = {term: idf(facts, n) for term, n in holding.items()}
    top = max(weight[term] for term in searched)
    weight = {term: (value / top) ** RARITY * top for term, value in weight.items()}
    chosen = set(searched)
    return QueryTerms(
        searched={term: weight[term] / top for term in searched},
        common={term: weight[term] / top for term in holding if term not in chosen},
    )


def run(
    index: FactIndex, text: str, filters: Filters, limit: int, dates: DatedQuery | None = None
) -> list[IndexHit]:
    """Rank facts for a natural-language query; facts inside the dates it names rank first.

    `dates` is what query_dates read from the query; `text` is then the query without its dates.
    A query of dates alone ("what did I do yesterday?") lists the facts of the named period.
    The window (the period with some slack) is searched first, so its facts are all candidates; then every
    candidate's score is faded by how far from the named period it was told (`faded`): the day named beats the
    days around it, and a fact outside the window still competes, since people name periods loosely ("last
    week" for a jog told two days before that week).
    When no fact at all lies inside the window, the date's words are searched with the rest, unfaded.
    """
    terms = plan(index, text)
    # Bounds the caller gave win over the dates the query's words name.
    explicit = filters.after is not None or filters.before is not None
    if not terms.searched:
        if dates is not None and dates.period is not None:
            return index.first_facts(filters if explicit else _within(filters, dates.period), limit)
        raise UsageError(
            f"query {text!r} has only stop words — add the words that matter, e.g. a name or a topic"
        )
    if explicit or dates is None or dates.window is None:
        return _ranked(index, terms, filters, limit)
    inside = _ranked(index, terms, _within(filters, dates.window), limit)
    if not inside and not index.count(_within(filters, dates.window)):
        # Nothing at all was told in the named period: the date is what the facts talk about, not when they
        # were told ("the match in 2017", told in 2024), so it is searched as words, and no day is nearer.
        return _ranked(index, plan(index, " ".join((text, *dates.phrases))), filters, limit)
    if len(inside) == limit and not FADE:
        return inside
    # The unfiltered search adds the facts outside, so a date that is off (or a fact told much later) still shows.
    # They are faded from a fixed number of candidates: fading re-orders them, so the first of a short list
    # must come from the same candidates as a long one's.
    placed = {(hit.path, hit.line) for hit in inside}
    rest = [hit for hit in _ranked(index, terms, filters, max(limit, POOL)) if (hit.path, hit.line) not in placed]
    if not FADE:
        return inside + rest[: limit - len(inside)]
    # Every fact is faded by how far it lies from the period named, the window's facts too: of two facts told in
    # the week around "on 19.01.2024", the one told that day ranks first.
    nearer = [faded(hit, dates.period or dates.window) for hit in inside + rest]
    return sorted(nearer, key=lambda hit: -hit.score)[:limit]  # stable: a tie goes to the fact inside the window


def faded(hit: IndexHit, window: Window) -> IndexHit:
    """A fact with its score halved for every FADE days it lies outside the window; undated, it scores 0."""
    try:
        day = date.fromisoformat(hit.date)
    except ValueError:
        return dataclasses.replace(hit, score=0.0)
    outside = (window.start - day).days if day < window.start else max(0, (day - window.end).days)
    return dataclasses.replace(hit, score=hit.score * 0.5 ** (outside / FADE)) if outside else hit


def _within(filters: Filters, window: Window) -> Filters:
    return dataclasses.replace(filters, after=window.start.isoformat(), before=window.end.isoformat())


def _ranked(index: FactIndex, terms: QueryTerms, filters: Filters, limit: int) -> list[IndexHit]:
    """The best facts for planned terms: rarer terms search, common ones re-rank, neighbours are credited.

    Candidates are ranked by document number and id; only the `limit` chosen have their text read.
    """
    with index.snapshot():  # the numbers ranked are read back from the same searcher
        pool = index.ranked(terms.searched, filters, max(limit, POOL), bonus=_bonus(index, terms.common))
        if filters.keys:  # an exact lookup (dedup's) wants the facts themselves
            return index.stored(pool[:limit])
        earned = neighbours.credit(pool, index.near_all(pool, neighbours.SPAN), neighbours.PART)
        pooled = {hit.doc_id for hit in pool}
        newcomers = [n for n in earned.values() if n.doc_id not in pooled]
        return index.stored(_listed(index, pool, earned, newcomers, filters, limit))


def _listed(index: FactIndex, pool: list[Placed], earned: dict[str, neighbours.Neighbour],
            newcomers: list[neighbours.Neighbour], filters: Filters, limit: int) -> list[Placed]:
    """The `limit` best of the credited pool and newcomers; a newcomer is looked up only once it is among them.

    A newcomer's score is its credit, so newcomers list in `order` and only the first `limit` that hold can
    list at all. A newcomer no longer indexed, or (a neighbour shares its pooled fact's file, so of the
    filters only its date may not hold) told outside the dates asked, gives its place to the next in order.
    About one listed hit in twenty is a newcomer at 10k facts, so most newcomers are never looked up.
    """
    ordered = iter(sorted(newcomers, key=neighbours.order))

    def waiting_for(count: int) -> dict[str, Placed]:
        return {n.doc_id: Placed(-1, n.doc_id, path_of(n.doc_id), n.line, 0.0)
                for n in itertools.islice(ordered, count)}

    waiting, found = waiting_for(limit), dict[str, Placed]()
    while True:
        listed = sorted(neighbours.merged(pool, earned, {**waiting, **found}), key=lambda hit: -hit.score)[:limit]
        wanted = {hit.doc_id: hit.line for hit in listed if hit.doc_id in waiting}
        if not wanted:
            return listed
        fetched = index.fetch(wanted)
        if filters.after is not None or filters.before is not None:
            dated = index.stored(list(fetched.values()))
            fetched = {hit.doc_id: one for one, hit in zip(fetched.values(), dated, strict=True)
                       if _dated_within(hit, filters)}
        for doc_id in wanted:
            del waiting[doc_id]
        found.update(fetched)
        waiting.update(waiting_for(len(wanted) - len(fetched)))


def _bonus(index: FactIndex, common: dict[str, float]) -> dict[str, float]:
    """What one occurrence of each common term adds to a candidate holding it (in its text or section).

    The value is the term's weight times the index's IDF: BM25 of one occurrence in a fact of
    average length. Common terms only re-rank what the rarer ones found (Lucene's common terms).
    """
    facts = index.count()
    if not facts:  # every fact deleted, their terms still counted until a merge: nothing to find, nor re-rank
        return {}
    return {term: weight * (math.log(facts / (index.doc_frequency("text", term) + 1)) + 1)
            for term, weight in common.items()}


def _dated_within(hit: IndexHit, filters: Filters) -> bool:
    """Whether a fact passes the filters' dates (a neighbour shares its file, so the rest holds)."""
    after, before = filters.after or "", filters.before or "\uffff"
    return after <= hit.date <= before


