"""The dates a query names ("yesterday", "in June 2023", "on 1 May 2022") → a window of fact dates.

dateparser finds and resolves the phrases; the rules here only decide which of its finds are
dates at all and how wide a window each one opens:
- a named day opens that day ±7 days: an event is often logged days after it happened, and the
  day a question names is often approximate ("on 1 May" for something told on the 3rd);
- a named week, month or year opens that period plus the 7 days after it, when its last events
  are still being written down;
- several phrases open the union of their windows, after dropping a window that only restates
  another it contains ("2023" beside "1 August").

dateparser matches generously ("we" as Wednesday, "march in the", "18th", a bare "2048"), and a
false date would cost the query its words. So a find counts only when it holds a digit-bearing
date, a relative word (yesterday, ago, last week, ...), or a month name that is clearly a month:
with a number, or after a preposition ("in March", "since May"). Only English phrases are read.
Numeric dates read as they are written where each form is used: 2024-01-10 year first, 1/10/2024
month first (the US form, dateparser's English default), 10.01.2024 day first (as wherever dates
are written with dots). Words in double quotes are a title or a name as written ("11/22/63",
the novel), never a date.

Importing dateparser costs about 0.3 s and 25 MB, and its first parse another 0.3 s, so it is
imported only when the query holds a digit or a date word (DATE_HINT).

dateparser's search costs about 1 ms per character it reads (a 20,000-character query took 8–20 s),
so it never reads more than DATE_CHARS characters of one query: a longer query is read only in
windows of REACH characters either side of its first date hints (`regions`), and a date named
past those windows stays a search word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Literal

Period = Literal["day", "week", "month", "year"]

# How far a window reaches around a named day, and past the end of a named week, month or year.
DAY_SLACK = timedelta(days=7)
AFTER_SLACK = timedelta(days=7)

_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_WEEKDAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_RELATIVE = (
    rf"yesterday|today|tonight|tomorrow|ago|(?:last|this|next|past)\s+(?:week|month|year|{_WEEKDAYS})"
    rf"|on\s+{_WEEKDAYS}"
)
# A dotted date with a four-digit year ("10.01.2024") is day first, as wherever dates are written with dots;
# a shorter one ("1.2.10") is as likely a version number, and is left to the rules for words.
_DOTTED = r"\d{1,2}\.\d{1,2}\.(?:19|20)\d\d"
_NUMERIC = r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4}|" + _DOTTED
_PREPOSITION = r"in|on|of|since|during|until|till|by|from|before|after|between|and|through|throughout"
_PART_OF_DAY = re.compile(r"\b(?:morning|afternoon|evening|night|weekend)\b", re.IGNORECASE)
# Cheap test run on every query: could it name a date at all? Only then is dateparser loaded.
DATE_HINT = re.compile(rf"\d|\b(?:{_MONTHS}|{_WEEKDAYS}|{_RELATIVE})\b", re.IGNORECASE)
_SURE = re.compile(rf"\b(?:{_RELATIVE})\b|(?<!\d)(?:{_NUMERIC})(?!\d)", re.IGNORECASE)
_MONTH = re.compile(rf"\b(?:{_MONTHS})\b", re.IGNORECASE)
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_DAY_FIRST = re.compile(rf"(?<![\d.]){_DOTTED}(?![\d.])")
_LEADS = re.compile(rf"^(?:{_PREPOSITION})\b", re.IGNORECASE)
_LED = re.compile(rf"\b(?:{_PREPOSITION})\s*$", re.IGNORECASE)
_DAY_BEFORE = re.compile(r"(?<![\d.:/])\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?$", re.IGNORECASE)
# Words in double quotes are a name as written ("11/22/63", the novel), never a date.
_QUOTED = re.compile(r'"[^"]*"|\u201c[^\u201d]*\u201d')
# Two finds with only this between them are one date that dateparser split ("1 August" "2023").
_JOIN = re.compile(r"^[\s,]*(?:of\s+)?$", re.IGNORECASE)

# The most characters of one query dateparser reads (~1 ms each), and how far a window reaches
# either side of a date hint: "the first week of June 2023" is 27 characters.
DATE_CHARS = 240
REACH = 40


@dataclass(frozen=True)
class Window:
    """An inclusive range of fact dates."""

    start: date
    end: date

    def contains(self, other: Window) -> bool:
        """Whether this window holds all of another."""
        return self.start <= other.start and other.end <= self.end


@dataclass(frozen=True)
class DatedQuery:
    """A query with its date phrases taken out, the period they name, and the window to rank first."""

    text: str
    phrases: tuple[str, ...] = ()
    period: Window | None = None
    window: Window | None = None


def period_of(day: date, period: Period) -> Window:
    """The whole day, ISO week (Monday to Sunday), month or year that holds `day`."""
    if period == "day":
        return Window(day, day)
    if period == "week":
        monday = day - timedelta(days=day.weekday())
        return Window(monday, monday + timedelta(days=6))
    if period == "month":
        first = day.replace(day=1)
        following = (first + timedelta(days=32)).replace(day=1)
        return Window(first, following - timedelta(days=1))
    return Window(date(day.year, 1, 1), date(day.year, 12, 31))


def widen(window: Window, period: Period) -> Window:
    """The ranking window of one named period: a day ±DAY_SLACK, anything longer +AFTER_SLACK."""
    if period == "day":
        return Window(window.start - DAY_SLACK, window.end + DAY_SLACK)
    return Window(window.start, window.end + AFTER_SLACK)


def is_date_phrase(phrase: str, before: str = "") -> bool:
    """Whether a phrase dateparser found is a date, given the query text just before it."""
    if _SURE.search(phrase):
        return True
    if not _MONTH.search(phrase):
        # A bare year only after a preposition: "in 2022", not "raise it to 2048".
        return bool(_YEAR.search(phrase)) and bool(_LEADS.match(phrase) or _LED.search(before))
    # A month word is a month with a number ("May 2023", "March 3rd") or after a preposition
    # ("in March", "since May"), not the verb in "may I" or "march in the parade".
    return bool(re.search(r"\d", phrase)) or bool(_LEADS.match(phrase) or _LED.search(before))


def prepare() -> None:
    """Load dateparser and read one date, so a long-lived server's first dated query does not wait for it.

    The first read of a process loads every locale and builds the time zone patterns: about 0.4 s of
    CPU and 15 MB, which a server pays once at start (in a thread of its own) rather than mid-answer.
    """
    read("yesterday", date.today())


def read(query: str, today: date) -> DatedQuery:
    """Find the date phrases in a query, resolve them against `today`, and take them out of it."""
    if not DATE_HINT.search(query):
        return DatedQuery(query)
    found = _find(query, today)
    if not found:
        return DatedQuery(query)
    spans = tuple((period_of(day, kind), kind) for _, _, day, kind in found)
    # A window that holds another only restates it ("2023" beside "June 2023"): keep the narrower.
    kept = tuple(
        (window, kind)
        for window, kind in spans
        if not any(other != window and window.contains(other) for other, _ in spans)
    )
    text = query
    for start, end, _, _ in sorted(found, reverse=True):
        # The preposition that led into the date goes with it: "since", "between" are not topics. A part of the
        # day stays a search word: it says what as well as when ("the night of 10.01" / "had a great night").
        led = _LED.search(text[:start])
        kept_words = " ".join(_PART_OF_DAY.findall(text[start:end]))
        text = text[: led.start() if led else start] + f" {kept_words} " + text[end:]
    widened = [widen(window, kind) for window, kind in kept]
    return DatedQuery(
        text=" ".join(text.split()),
        phrases=tuple(query[start:end] for start, end, _, _ in found),
        period=Window(min(w.start for w, _ in kept), max(w.end for w, _ in kept)),
        window=Window(min(w.start for w in widened), max(w.end for w in widened)),
    )


def _find(query: str, today: date) -> list[tuple[int, int, date, Period]]:
    """(start, end, day, period) of each date phrase, left to right."""
    from dateparser import DateDataParser  # heavy: only for queries that pass DATE_HINT
    from dateparser.search import search_dates

    settings = {
        "RELATIVE_BASE": datetime.combine(today, time(12)),
        "PREFER_DATES_FROM": "past",
        # Day 1 is valid in every month; today's day-of-month ("the 30th") is not.
        "PREFER_DAY_OF_MONTH": "first",
    }
    parser = DateDataParser(languages=["en"], settings=settings)
    dotted = _DAY_FIRST.search(query)
    day_first = DateDataParser(languages=["en"], settings={**settings, "DATE_ORDER": "DMY"}) if dotted else parser
    spans: list[tuple[int, int]] = []
    unquoted = _QUOTED.sub(lambda match: " " * len(match.group()), query)  # same offsets, no quoted words
    for low, high in regions(query):
        part, cursor = unquoted[low:high], 0
        for phrase, _ in search_dates(part, languages=["en"], settings=settings) or []:
            start = part.find(phrase, cursor)
            if start < 0:
                continue
            spans.append((low + start, low + start + len(phrase)))
            cursor = start + len(phrase)
    found: list[tuple[int, int, date, Period]] = []
    for group in _groups(query, spans):
        whole = (group[0][0], group[-1][1])
        # A day number just before a month dateparser left out is part of the date ("her day on 7 Jan 2024").
        lead = _DAY_BEFORE.search(query, max(0, whole[0] - REACH), whole[0]) if _MONTH.match(query, whole[0]) else None
        wholes = [(lead.start(), whole[1]), whole] if lead else [whole]
        # Read a split date whole ("1 August 2023"); if that fails, its parts one by one.
        for start, end in wholes if len(group) == 1 else [*wholes, *group]:
            phrase = query[start:end]
            before = query[max(0, start - REACH):start]
            reader = day_first if _DAY_FIRST.search(phrase) else parser
            data = reader.get_date_data(phrase) if is_date_phrase(phrase, before) else None
            if data is not None and data.date_obj is not None:
                kind: Period = data.period if data.period in ("week", "month", "year") else "day"
                found.append((start, end, data.date_obj.date(), kind))
                if (start, end) in wholes:
                    break
    return found


def regions(query: str) -> list[tuple[int, int]]:
    """The (start, end) spans of a query that dateparser reads: all of a short query, else windows
    of whole words around its first date hints, DATE_CHARS characters in all."""
    if len(query) <= DATE_CHARS:
        return [(0, len(query))]
    spans: list[tuple[int, int]] = []
    left = DATE_CHARS
    for hint in DATE_HINT.finditer(query):
        if left <= 0:
            break
        if spans and hint.start() < spans[-1][1]:
            continue  # inside the window already taken
        low, high = max(0, hint.start() - REACH), min(len(query), hint.end() + REACH)
        # Whole words only: a window that starts or ends inside a word would read half of it.
        if low > 0:
            low = query.find(" ", low, hint.start()) + 1 or hint.start()
        if high < len(query):
            space = query.rfind(" ", hint.end(), high)
            high = space if space >= 0 else hint.end()
        if spans and low <= spans[-1][1]:
            low, taken = spans.pop()  # overlapping windows are read as one
            left += taken - low
        high = min(high, low + left)
        spans.append((low, high))
        left -= high - low
    return spans


def _groups(query: str, spans: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Runs of spans that only commas or spaces separate."""
    groups: list[list[tuple[int, int]]] = []
    for start, end in spans:
        if groups and _JOIN.match(query[groups[-1][-1][1]:start]):
            groups[-1].append((start, end))
        else:
            groups.append([(start, end)])
    return groups
