"""History keeps every recent version (a merge's possible bases) and thins the older ones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from wolfmem.storage.history import HAND_EDIT, History

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


def test_older_saves_coalesce_by_day_and_the_older_versions_are_bounded(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite", generations=3)
    last = _saves(history, 5, START)
    history.record(REL, last, last + b"- curated\n", "curation", START + timedelta(hours=1))
    # A day later the first day's five saves are one version (the last), then the curation.
    history.record(REL, last + b"- curated\n", last + b"- next\n", "save", START + timedelta(days=2))
    kept = history.versions(REL)
    assert [v.cause for v in kept] == ["save", "curation", "save", "original"]
    assert history.data(kept[2].id) == last
    history.generations = 1
    history.record(REL, last + b"- next\n", last + b"- more\n", "save", START + timedelta(days=2, minutes=1))
    assert [v.cause for v in history.versions(REL)] == ["save", "save", "curation"]


def test_recent_versions_are_bounded_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("wolfmem.storage.history.MAX_RECENT", 10)
    history = History(tmp_path / "h.sqlite")
    _saves(history, 25, START, step=timedelta(seconds=1))
    assert len(history.versions(REL)) == 10


def test_note_records_a_seen_version_once(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    _saves(history, 1, START)
    assert history.note(REL, b"# Technical\n- by hand\n", HAND_EDIT, START + timedelta(minutes=5))
    assert not history.note(REL, b"# Technical\n- by hand\n", HAND_EDIT, START + timedelta(minutes=6))
    assert [v.cause for v in history.versions(REL)] == [HAND_EDIT, "save", "original"]
    assert [data for _, data in history.texts(REL, 1)] == [b"# Technical\n- by hand\n"]
