"""History keeps every recent version (a merge's possible bases) and thins the older ones by age, never by count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from wolfmem.storage.history import HAND_EDIT, History, kept

REL = "knowledge/technical.md"
START = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def _saves(history: History, count: int, at: datetime, step: timedelta = timedelta(minutes=1)) -> bytes:
    data = b"# Technical\n"
    for number in range(count):
        before, data = data, data + f"- fact {number}\n".encode()
        history.record(REL, before, data, "save", at + step * number)
    return data


def test_saves_within_a_day_are_each_kept(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    _saves(history, 40, START)
    assert [v.cause for v in history.versions(REL)] == ["save"] * 40 + ["original"]


def test_older_saves_coalesce_by_day(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    last = _saves(history, 5, START)
    history.record(REL, last, last + b"- curated\n", "curation", START + timedelta(hours=1))
    # Two days later the first day is one version (its last, the curation), and the original stays.
    history.record(REL, last + b"- curated\n", last + b"- next\n", "save", START + timedelta(days=2))
    kept = history.versions(REL)
    assert [v.cause for v in kept] == ["save", "curation", "original"]
    assert history.data(kept[1].id) == last + b"- curated\n"


def test_many_rounds_in_one_run_never_push_the_original_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("wolfmem.storage.history.MAX_RECENT", 10)
    history = History(tmp_path / "h.sqlite")
    data = _saves(history, 3, START - timedelta(hours=3))
    # One night's run of 40 rounds within a minute, past the cap: the saves of the evening before stay.
    for number in range(40):
        before, data = data, data + f"- round {number}\n".encode()
        history.record(REL, before, data, "curation", START + timedelta(seconds=number))
    kept = history.versions(REL)
    assert [v.cause for v in kept[:10]] == ["curation"] * 10
    assert kept[-1].cause == "original"
    before_the_run = [v for v in kept if v.cause == "save"]
    assert len(before_the_run) == 1  # the evening's last save, one for its hour
    assert history.data(before_the_run[0].id) == b"# Technical\n- fact 0\n- fact 1\n- fact 2\n"
    assert len(kept) == 10 + 1 + 1 + 1  # the cap, one for the minute past it, the evening's save and the original


def test_versions_thin_to_one_a_day_for_a_month_and_one_a_week_for_a_year(tmp_path: Path) -> None:
    # A year and a half of nights, each a curation run of 20 rounds and a few saves.
    rows = []
    number = 0
    for day in range(540):
        for minute in range(23):
            number += 1
            rows.append((number, (START + timedelta(days=day, minutes=minute)).isoformat()))
    now = START + timedelta(days=539, minutes=30)
    keep = kept(rows[::-1], now)
    days = sorted({stamp[:10] for number, stamp in rows if number in keep})
    month_ago = (now - timedelta(days=30)).date().isoformat()
    assert sum(day >= month_ago for day in days) == 31  # every day of the last month
    weekly = [day for day in days if day < month_ago and day > rows[0][1][:10]]
    assert 48 <= len(weekly) <= 50  # one a week for the rest of the year, none older
    assert rows[0][0] in keep  # the original
    assert len(keep) < 23 + 31 + 50 + 2


def test_a_clock_moved_back_keeps_the_versions_it_calls_future(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    last = _saves(history, 2, START)
    history.record(REL, last, last + b"- later\n", "curation", START + timedelta(days=5))
    # The clock is put back three weeks: the version "from the future" is kept, as if recent.
    history.record(REL, last + b"- later\n", last + b"- back\n", "curation", START - timedelta(days=21))
    assert [v.cause for v in history.versions(REL)] == ["curation", "curation", "save", "original"]


def test_note_records_a_seen_version_once(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    _saves(history, 1, START)
    assert history.note(REL, b"# Technical\n- by hand\n", HAND_EDIT, START + timedelta(minutes=5))
    assert not history.note(REL, b"# Technical\n- by hand\n", HAND_EDIT, START + timedelta(minutes=6))
    assert [v.cause for v in history.versions(REL)] == [HAND_EDIT, "save", "original"]
    assert [data for _, data in history.texts(REL, 1)] == [b"# Technical\n- by hand\n"]
