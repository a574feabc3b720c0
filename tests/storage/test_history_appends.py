"""A version the next one only appended to is kept as its size: a day of log entries stores the log about once.

A day of memory_log entries into an episode file of 1.8 MB stored the whole file again per entry
(history bytes grew with entries × size). Counted here in the bytes the history database holds, at two
sizes; and every kept version still reads back as the bytes it had, through thinning and restores.
"""

from __future__ import annotations

import sqlite3
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from wolfmem import Config, Memory
from wolfmem.storage.history import History
from wolfmem.storage.vault import content_hash

DAY = "episodes/2026-11-29.md"
START = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def _stored(path: Path, rel: str) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT sum(length(data)) FROM versions WHERE path = ?", (rel,)).fetchone()[0]


def _every_version_reads_back(history: History, rel: str) -> int:
    versions = history.versions(rel)
    for version in versions:
        data = history.data(version.id)
        assert data is not None and content_hash(data) == version.revision and len(data) == version.size
    assert [content_hash(data) for _, data in history.texts(rel, len(versions))] == [v.revision for v in versions]
    return len(versions)


@pytest.mark.parametrize("entries", [40, 160])
def test_log_entries_store_the_day_about_once(tmp_path: Path, entries: int) -> None:
    config = Config(state_dir=str(tmp_path / "state"))
    with Memory(tmp_path / "vault", config, clock=lambda: datetime(2026, 11, 29, 12, tzinfo=UTC)) as memory:
        for number in range(entries):
            memory.log_episode(f"Deployed build {number} of the Atlas service to the staging cluster")
        final = (memory.vault.root / DAY).read_bytes()
        history = memory.services.history
        assert _every_version_reads_back(history, DAY) == entries
        stored = _stored(history.path, DAY)
    # Every entry's version is kept (a day's versions all are), yet the bytes are one copy and the sizes:
    # the old code stored entries × the file (a 40th of this for 40 entries, a 160th for 160).
    assert stored <= 2 * len(zlib.compress(final, 1))


def test_thinned_appends_still_read_back_and_a_rewrite_keeps_its_own_bytes(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    data = b"# Log\n"
    for number in range(120):  # appends over 60 days, two a day: thinning keeps one a day, then one a week
        before, data = data, data + f"- entry {number}\n".encode()
        if number % 37 == 36:  # now and then a rewrite, not an append: it holds its own bytes
            data = data.replace(b"entry", b"item", 1)
        history.record(DAY, before, data, "episode", START + timedelta(hours=12 * number))
    kept = _every_version_reads_back(history, DAY)
    assert 30 < kept < 120
    assert history.data(history.versions(DAY)[0].id) == data


def test_a_hand_edit_between_appends_is_its_own_holder(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    one, two = b"# Log\n- a\n", b"# Log\n- a\n- b\n"
    history.record(DAY, b"# Log\n", one, "episode", START)
    history.record(DAY, two, two + b"- c\n", "episode", START)  # `two` was written by hand in between
    assert [v.cause for v in history.versions(DAY)] == ["episode", "hand edit", "episode", "original"]
    assert _every_version_reads_back(history, DAY) == 4
