"""Date phrases in queries: which are dates, what window each opens, and what is left to search."""

from __future__ import annotations

import subprocess
import sys
from datetime import date

import pytest

from wolfmem.search import query_dates
from wolfmem.search.query_dates import (
    DatedQuery,
    Window,
    is_date_phrase,
    period_of,
    read,
    widen,
)

TODAY = date(2024, 1, 10)  # a Wednesday


def d(text: str) -> date:
    return date.fromisoformat(text)


@pytest.mark.parametrize(
    ("query", "rest", "period"),
    [
        # explicit days, months and years
        ("What did Caroline do on 1 May 2022?", "What did Caroline do ?", ("2022-05-01", "2022-05-01")),
        ("What did Gina find on 1 February, 2023?", "What did Gina find ?", ("2023-02-01", "2023-02-01")),
        ("painting shown on October 13, 2023", "painting shown", ("2023-10-13", "2023-10-13")),
        ("standup notes 2023-05-08", "standup notes", ("2023-05-08", "2023-05-08")),
        ("What setback did Melanie face in October 2023?", "What setback did Melanie face ?",
         ("2023-10-01", "2023-10-31")),
        ("beach trips in 2022", "beach trips", ("2022-01-01", "2022-12-31")),
        # a month without a year is the latest one not in the future
        ("camping in June", "camping", ("2023-06-01", "2023-06-30")),
        ("what happened in January", "what happened", ("2024-01-01", "2024-01-31")),
        # relative to today
        ("what did I do yesterday?", "what did I do ?", ("2024-01-09", "2024-01-09")),
        ("What did we decide last Monday?", "What did we decide ?", ("2024-01-08", "2024-01-08")),
        ("events of last month", "events", ("2023-12-01", "2023-12-31")),
        ("meetings two weeks ago", "meetings", ("2023-12-25", "2023-12-31")),
        # the preposition goes with the date; a split date is read whole
        ("since May 2023", "", ("2023-05-01", "2023-05-31")),
        ("the week before 1 August 2023", "the week", ("2023-08-01", "2023-08-01")),
        # several dates: the union, without a year that only restates the months
        ("between March and June 2023", "", ("2023-03-01", "2023-06-30")),
    ],
)
def test_dates_are_read_and_taken_out(query: str, rest: str, period: tuple[str, str]) -> None:
    dated = read(query, TODAY)
    assert dated.text == rest
    assert dated.period == Window(d(period[0]), d(period[1]))
    assert dated.phrases


@pytest.mark.parametrize(
    "query",
    [
        "Who is my manager?",
        "May I ask what we did?",  # the modal verb, and "we" (dateparser's Wednesday)
        "Did I march in the parade?",
        "an august institution",
        "What did Jan say about the deploy?",
        "raise the limit to 2048 users",  # a bare number is not a year
        "How long ago was the 18th birthday",  # an ordinal alone is not a day
        "meet at 5 pm",  # a time is not a date
        "Python 3.11 upgrade",
        "v1.2.3 release notes",
        "the kayak club meets on Sundays",
    ],
)
def test_words_that_only_look_like_dates_stay_search_terms(query: str) -> None:
    assert read(query, TODAY) == DatedQuery(query)


@pytest.mark.parametrize(
    ("phrase", "before", "is_date"),
    [
        ("in March", "", True),
        ("March", "since ", True),
        ("March", "Did I ", False),
        ("May 2023", "", True),
        ("May", "", False),
        ("in 2022", "", True),
        ("2022", "raise it to ", False),
        ("yesterday", "", True),
        ("from 4 years ago", "", True),
        ("18th", "", False),
        ("we", "", False),
    ],
)
def test_which_finds_are_dates(phrase: str, before: str, is_date: bool) -> None:
    assert is_date_phrase(phrase, before) is is_date


@pytest.mark.parametrize(
    ("day", "period", "window", "ranked"),
    [
        ("2024-01-10", "day", ("2024-01-10", "2024-01-10"), ("2024-01-03", "2024-01-17")),
        ("2024-01-10", "week", ("2024-01-08", "2024-01-14"), ("2024-01-08", "2024-01-21")),
        ("2024-02-10", "month", ("2024-02-01", "2024-02-29"), ("2024-02-01", "2024-03-07")),
        ("2023-12-31", "month", ("2023-12-01", "2023-12-31"), ("2023-12-01", "2024-01-07")),
        ("2023-06-15", "year", ("2023-01-01", "2023-12-31"), ("2023-01-01", "2024-01-07")),
    ],
)
def test_windows(day: str, period: str, window: tuple[str, str], ranked: tuple[str, str]) -> None:
    named = period_of(d(day), period)
    assert named == Window(d(window[0]), d(window[1]))
    assert widen(named, period) == Window(d(ranked[0]), d(ranked[1]))


def test_the_ranking_window_is_widened_from_the_named_period() -> None:
    dated = read("What did John do on 1 August 2023?", TODAY)
    assert dated.window == Window(d("2023-07-25"), d("2023-08-08"))
    assert read("camping in June", TODAY).window == Window(d("2023-06-01"), d("2023-07-07"))


def test_dateparser_is_imported_only_for_queries_that_may_name_a_date() -> None:
    code = (
        "import sys; from datetime import date; from wolfmem.search import query_dates; "
        "query_dates.read('Who is my manager?', date(2024, 1, 10)); "
        "print('dateparser' in sys.modules); "
        "query_dates.read('What did I do yesterday?', date(2024, 1, 10)); "
        "print('dateparser' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_dateparser_reads_a_bounded_part_of_a_long_query(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 24: a 20,000-character query went whole to dateparser (~1 ms a character)."""
    import dateparser.search

    read_chars: list[int] = []
    real = dateparser.search.search_dates

    def counting(text: str, *args: object, **kwargs: object) -> object:
        read_chars.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(dateparser.search, "search_dates", counting)
    filler = "release 42 budget review with the platform team and a note about port 8080 " * 300
    query = "What did Caroline do on 1 May 2022? " + filler
    assert len(query) > 20_000
    dated = read(query, TODAY)
    assert sum(read_chars) <= query_dates.DATE_CHARS
    assert dated.period == Window(d("2022-05-01"), d("2022-05-01"))  # a date near the start is still read
    assert "Caroline" in dated.text and "8080" in dated.text


def test_short_queries_are_read_whole() -> None:
    assert query_dates.regions("What did Caroline do on 1 May 2022?") == [(0, 35)]
    long = "word " * 100 + "on 1 May 2022 " + "word " * 100
    spans = query_dates.regions(long)
    assert sum(end - start for start, end in spans) <= query_dates.DATE_CHARS
    assert any("1 May 2022" in long[start:end] for start, end in spans)


@pytest.mark.parametrize(
    ("query", "day"),
    [
        ("What is Paola planning to do on 10.01.2024 with her friends?", "2024-01-10"),
        ("Which book did he finish on 02.01.2024?", "2024-01-02"),
        ("What happened 21.01.2024", "2024-01-21"),  # no preposition: the dotted form is sure on its own
        ("on 1/10/2024", "2024-01-10"),  # slashes stay month first
        ("standup notes 2024-10-01", "2024-10-01"),
    ],
)
def test_a_numeric_date_is_read_in_the_order_its_form_is_written(query: str, day: str) -> None:
    assert read(query, TODAY).period == Window(d(day), d(day))


def test_a_dotted_number_without_a_four_digit_year_is_a_version() -> None:
    assert read("release notes of 1.2.10", TODAY) == DatedQuery("release notes of 1.2.10")


@pytest.mark.parametrize(
    "query",
    ['When did he start reading "11/22/63" by Stephen King?', "the song \u201cSeptember 2023\u201d"],
)
def test_a_date_in_double_quotes_is_a_title_and_stays_a_search_term(query: str) -> None:
    assert read(query, TODAY) == DatedQuery(query)


def test_a_date_beside_a_quoted_title_is_still_read() -> None:
    dated = read('reading "11/22/63" on 1 May 2023', TODAY)
    assert dated.text == 'reading "11/22/63"'
    assert dated.period == Window(d("2023-05-01"), d("2023-05-01"))


@pytest.mark.parametrize(
    "query", ["Did Elise spend her day on 7 Jan 2024 alone?", "What was she watching shortly before 7 Jan 2024?"]
)
def test_a_day_number_before_a_month_is_part_of_the_date(query: str) -> None:
    # dateparser finds only "Jan" and "2024" here, which alone would open the whole month.
    dated = read(query, TODAY)
    assert dated.period == Window(d("2024-01-07"), d("2024-01-07"))
    assert "7" not in dated.text.split()


@pytest.mark.parametrize(("query", "text", "day"), [
    ("What did Kevin watch on the night of 10.01.2024?", "What did Kevin watch night ?", "2024-01-10"),
    ("What did I cook on the evening of 3 May 2023?", "What did I cook evening ?", "2023-05-03"),
])
def test_a_part_of_the_day_in_a_date_phrase_stays_a_search_word(query: str, text: str, day: str) -> None:
    dated = read(query, TODAY)
    assert dated.period == Window(d(day), d(day))
    assert dated.text == text


def test_prepare_loads_dateparser_so_a_servers_first_dated_query_finds_it_loaded() -> None:
    probe = (
        "import sys\n"
        "from wolfmem.search import query_dates\n"
        "assert 'dateparser' not in sys.modules, 'loaded at import'\n"
        "query_dates.prepare()\n"
        "assert 'dateparser.search' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=120)
