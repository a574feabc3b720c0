"""Search with dates in the query, curation logs left out by default, and answers found by their neighbours."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import pytest
from conftest import run_cli

from wolfmem import Config, Memory, UsageError
from wolfmem.search import query
from wolfmem.search.query_dates import Window
from wolfmem.search.schema import IndexHit


def write(vault: Path, rel: str, lines: list[str]) -> None:
    """Write a vault file directly, as a user's editor would."""
    (vault / rel).parent.mkdir(parents=True, exist_ok=True)
    (vault / rel).write_text("\n".join(lines) + "\n", "utf-8")


def day(vault: Path, when: str, bullets: list[str]) -> None:
    """One episode file of bullets under one heading."""
    write(vault, f"episodes/{when}.md", [f"# {when}", "", "## 10:00 — Chat", *[f"- {b}" for b in bullets]])


@pytest.fixture
def diary(vault: Path, config: Config) -> Memory:
    """Painting talk on several days; 'today' is 2023-10-20 by the clock."""
    day(vault, "2023-05-08", ["Mel painted a sunset with her kids, a painting of the lake and the painting club"])
    day(vault, "2023-06-02", ["Mel showed a painting of a horse"])
    day(vault, "2023-10-13", ["Mel showed her painting of a sunrise"])
    day(vault, "2023-10-19", ["Mel finished a painting of her dog"])
    memory = Memory(vault, config, clock=lambda: datetime(2023, 10, 20, 9, 0).astimezone())
    memory.sync()
    yield memory
    memory.close()


def test_facts_inside_the_named_day_come_first(diary: Memory) -> None:
    plain = diary.search("Mel painting")
    assert plain[0].date == "2023-05-08"  # more painting words: the best match on words alone
    hits = diary.search("Which painting did Mel show on October 13, 2023?")
    # The named day ±7 days holds the 13th and the 19th; the rest fill in after them.
    assert [h.date for h in hits[:2]] == ["2023-10-13", "2023-10-19"]
    assert {h.date for h in hits[2:]} == {"2023-05-08", "2023-06-02"}


def test_a_named_month_reaches_seven_days_past_its_end(diary: Memory) -> None:
    hits = diary.search("What did Mel paint in May 2023?")
    assert [h.date for h in hits[:2]] == ["2023-05-08", "2023-06-02"]


def test_relative_dates_count_from_the_clock_or_from_today(diary: Memory) -> None:
    # Yesterday ±7 days, from the clock's 2023-10-20.
    assert {h.date for h in diary.search("Mel painting yesterday")[:2]} == {"2023-10-13", "2023-10-19"}
    assert diary.search("Mel painting yesterday", today="2023-06-03")[0].date == "2023-06-02"
    assert diary.search("Mel painting yesterday", today=date(2023, 5, 9))[0].date == "2023-05-08"


@pytest.mark.parametrize("today", ["20.10.2023", "2023-02-30", 7])
def test_a_bad_today_is_refused(diary: Memory, today: object) -> None:
    with pytest.raises(UsageError, match="today"):
        diary.search("Mel painting yesterday", today=today)


def test_explicit_bounds_win_over_dates_in_the_query(diary: Memory) -> None:
    hits = diary.search("Which painting did Mel show on October 13, 2023?", before="2023-06-30")
    assert {h.date for h in hits} == {"2023-05-08", "2023-06-02"}


def test_a_query_of_dates_alone_lists_that_period_in_order(diary: Memory, vault: Path) -> None:
    day(vault, "2023-10-19", ["Walked the dog", "Mel finished a painting of her dog"])
    hits = diary.search("What did I do yesterday?")
    assert [(h.date, h.text) for h in hits] == [
        ("2023-10-19", "Walked the dog"),
        ("2023-10-19", "Mel finished a painting of her dog"),
    ]
    assert diary.search("in June 2023")[0].text == "Mel showed a painting of a horse"
    with pytest.raises(UsageError, match="only stop words"):
        diary.search("what did I do")


def test_words_that_only_look_like_dates_are_still_searched(memory: Memory, vault: Path) -> None:
    day(vault, "2023-01-02", ["The march through the old town was loud", "Port 2048 is open"])
    assert memory.search("Did I march in the parade?")[0].text.startswith("The march")
    assert memory.search("port 2048")[0].text == "Port 2048 is open"


def test_curation_logs_are_searched_only_when_asked_for(memory: Memory, vault: Path) -> None:
    write(vault, "knowledge/people.md", ["# People", "", "## Sarah (Manager)", "- Sarah is my manager"])
    write(vault, "consolidated/2026-W48.md", [
        "# Curation log", "", "## Curation 2026-11-27",
        *[f"- knowledge/people.md: kept 'Sarah is my manager' (seen {n} times)" for n in range(8)],
    ])
    hits = memory.search("Who is my manager?")
    assert [h.path for h in hits] == ["knowledge/people.md"]
    logged = memory.search("Who is my manager?", sources=["knowledge", "consolidated"])
    assert {h.source for h in logged} == {"knowledge", "consolidated"}
    assert memory.search("manager", sources="consolidated")[0].path == "consolidated/2026-W48.md"


def test_an_answer_two_lines_away_is_found(memory: Memory, vault: Path) -> None:
    day(vault, "2024-01-01", [
        "Ann: Did you ever go to the aquarium?",
        "Bo: Oh yes!",
        "Bo: We saw jellyfish and a huge turtle there.",
        *[f"Ann: unrelated chat about groceries {n}" for n in range(6)],
    ])
    assert "turtle" in " ".join(h.text for h in memory.search("aquarium", limit=3))


def test_the_cli_counts_relative_dates_from_today(vault: Path) -> None:
    day(vault, "2023-05-08", ["Mel painted a sunset"])
    day(vault, "2023-10-19", ["Mel painted a sunset again"])
    found = run_cli("search", "Mel painted yesterday", "--today", "2023-05-09", "--json", "--vault", str(vault))
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["date"] == "2023-05-08"
    bad = run_cli("search", "Mel painted yesterday", "--today", "May 9", "--vault", str(vault))
    assert bad.returncode == 2 and "today" in bad.stderr


def test_a_fact_just_outside_the_named_week_still_competes(memory: Memory, vault: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Asked on Tuesday 2023-05-30, "last week" is 05-22 to 05-28 (ranked to 06-04); the jog was told
    # on the Saturday before it, as people name periods loosely.
    day(vault, "2023-05-20", ["I went for a jog around the neighbourhood"])
    day(vault, "2023-05-24", ["The neighbourhood had a street party"])
    day(vault, "2023-03-01", ["A jog around the neighbourhood, then another jog"])
    question = "Where did I jog around the neighbourhood last week?"
    hits = memory.search(question, today="2023-05-30")
    # Two days outside, the jog's score fades to 0.5 ** (2/7) of it and still beats the weaker line inside;
    # twelve weeks outside, the other jog fades to nothing and comes last.
    assert [h.date for h in hits] == ["2023-05-20", "2023-05-24", "2023-03-01"]
    monkeypatch.setattr(query, "FADE", 0)  # a hard window: everything inside first
    assert [h.date for h in memory.search(question, today="2023-05-30")][:1] == ["2023-05-24"]


def test_the_day_named_ranks_above_the_days_around_it(memory: Memory, vault: Path) -> None:
    # "on 19.01.2024" searches 12 to 26 January first; of its facts the one told that day comes first, though
    # the one told a week before holds the words more often (faded by a week: half its score).
    day(vault, "2024-01-12", ["Paola met friends for coffee with friends"])
    day(vault, "2024-01-19", ["Paola met friends at the lake"])
    day(vault, "2024-01-22", ["Paola met her friends at the museum with friends"])
    hits = memory.search("Where did Paola meet her friends on 19.01.2024?", today="2024-01-28")
    assert [h.date for h in hits] == ["2024-01-19", "2024-01-22", "2024-01-12"]


def test_a_score_halves_every_fade_days_outside_the_window() -> None:
    window = Window(date(2023, 5, 22), date(2023, 6, 4))
    one = IndexHit(path="episodes/x.md", source="episodes", section="", line=3, text="x", date="", score=8.0)
    at = {when: query.faded(replace(one, date=when), window).score
          for when in ("2023-05-22", "2023-06-04", "2023-05-15", "2023-06-11", "2023-05-08", "")}
    assert at == {"2023-05-22": 8.0, "2023-06-04": 8.0, "2023-05-15": 4.0, "2023-06-11": 4.0,
                  "2023-05-08": 2.0, "": 0.0}


def test_a_period_no_matching_fact_was_told_in_is_searched_as_words(memory: Memory, vault: Path) -> None:
    # Told in 2024 about a match in 2017: no fact of 2017 matches, so "2017" is a word the facts hold,
    # and no day of 2024 is nearer to 2017 than another (faded, the earliest line came first).
    day(vault, "2024-01-02", ["Kevin watched football with friends"])
    day(vault, "2024-01-06", ["Kevin watched the 2017 football final with his friends"])
    day(vault, "2024-01-20", ["Kevin watched football on TV with friends"])
    hits = memory.search("What football match did Kevin watch in 2017?", today="2024-02-01")
    assert hits[0].date == "2024-01-06"
    undated = memory.search("What football match did Kevin watch 2017?", today="2024-02-01")
    assert [(h.path, h.line) for h in hits] == [(h.path, h.line) for h in undated]
