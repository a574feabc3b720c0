"""The archive's latest record of a fact is the latest by when it was archived, wherever a merge put it.

A sync engine's conflict copy of an archive file is merged by appending the other machine's records, and two
machines' clocks may put one instant in different months' files: the order of lines and file names is no
order of events. Real vaults, real conflict copies, the real writer.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from conftest import Clock

from wolfmem import Config, Memory

PEOPLE = "knowledge/people.md"
FACT = "Tom lives in Berlin."
COPY = ".sync-conflict-20261203-101500-ABCDEF7.md"


def _record(reason: str, why: str, by: str, at: datetime, day: str = "2026-12-03") -> str:
    """An archive line as the other machine's wolfmem wrote it."""
    data = {"at": at.astimezone(UTC).isoformat(timespec="microseconds"), "by": by, "day": day,
            "file": PEOPLE, "reason": reason, "section": "Tom", "why": why}
    return f"- {FACT} <!-- wolfmem-archive {json.dumps(data, sort_keys=True)} -->\n"


def _memory(tmp_path: Path, clock: Clock) -> Memory:
    return Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state")), clock=clock)


def test_an_older_record_a_conflict_copy_appends_does_not_undo_a_later_forget(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 12, 3, 9, 0).astimezone())
    with _memory(tmp_path, clock) as memory:
        root = memory.vault.root
        memory.save(FACT, type="people", topic="Tom")
        with_fact = (root / PEOPLE).read_text()
        clock.now += timedelta(hours=1)  # 10:00 forgotten, 10:10 restored, 10:20 forgotten again, here
        gone = memory.forget(memory.search("Tom Berlin")[0].ref, "wrong").archived
        clock.now += timedelta(minutes=10)
        memory.restore_fact(gone)
        clock.now += timedelta(minutes=10)
        memory.forget(memory.search("Tom Berlin")[0].ref, "wrong after all")
        archive = next((root / "consolidated").glob("archive-*.md"))
        # The other machine, offline, saved the fact again at 10:15, after the restore reached it.
        other = archive.read_text() + _record("restored", "saved again", "save", clock.now - timedelta(minutes=5))
        archive.with_name(archive.name.replace(".md", COPY)).write_text(other)
        memory.sync()
        (root / PEOPLE.replace(".md", COPY)).write_text(with_fact)  # its people.md, the fact on it

        memory.sync()

        assert FACT not in (root / PEOPLE).read_text()  # the forget at 10:20 is the latest word


def test_a_record_in_an_earlier_months_file_from_a_later_instant_is_the_latest(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 12, 1, 0, 30, tzinfo=UTC))
    with _memory(tmp_path, clock) as memory:
        root = memory.vault.root
        memory.save(FACT, type="people", topic="Tom")
        gone = memory.forget(memory.search("Tom Berlin")[0].ref, "wrong").archived
        clock.now += timedelta(minutes=10)
        memory.restore_fact(gone)  # 00:40 UTC, archived in December's file
        # A machine a few hours west forgot it at 00:50 UTC: still November there, so November's file.
        west = clock.now + timedelta(minutes=10)
        (root / "consolidated/archive-2026-11.md").write_text(
            "# Archive 2026-11\n\n" + _record("forgotten", "moved", "forget", west, day="2026-11-30"))
        memory.sync()
        without = (root / PEOPLE).read_text().replace(f"- {FACT}\n", "")
        (root / PEOPLE.replace(".md", COPY)).write_text(without)  # its people.md, without the fact

        memory.sync()

        assert FACT not in (root / PEOPLE).read_text()  # the forget at 00:50 is the latest word


def test_a_restore_by_ref_finds_its_record_after_a_conflict_copy_moved_it(tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 12, 3, 9, 0).astimezone())
    with _memory(tmp_path, clock) as memory:
        root = memory.vault.root
        memory.save(FACT, type="people", topic="Tom")
        gone = memory.forget(memory.search("Tom Berlin")[0].ref, "wrong").archived
        archive = next((root / "consolidated").glob("archive-*.md"))
        mine = archive.read_text()
        # The other machine forgot another fact meanwhile; Syncthing kept its file and made this one the copy.
        archive.write_text(mine.replace(FACT, "Ana speaks Basque."))
        archive.with_name(archive.name.replace(".md", COPY)).write_text(mine)
        memory.sync()
        assert "Ana speaks Basque." in archive.read_text().splitlines()[int(gone.rsplit("L", 1)[1]) - 1]

        restored = memory.restore_fact(gone)  # the ref the forget handed out, now the other machine's line

        text = (root / PEOPLE).read_text()
        assert restored.status == "restored" and f"- {FACT}\n" in text and "Basque" not in text
