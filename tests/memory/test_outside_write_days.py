"""An editor buffer older than the history's 24 hours of every version is written back: no save it never saw is lost.

Past 24 hours history keeps one version a day (storage/history.py), so the version a buffer opened days
ago was loaded from may be gone, and the closest kept version is that day's last one, which holds saves
made after the buffer was loaded. Those saves must come back (the person is told), not be archived as
"removed by hand": nobody removed them.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from conftest import Clock

from wolfmem import Config, Memory

PEOPLE = "knowledge/people.md"
LATER = ("Xavier likes tea.", "Yara likes jazz.")


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:  # the stale buffer written in place
        handle.write(text)


def _weekend(tmp_path: Path, delete: str = "") -> tuple[str, list[dict[str, object]]]:
    """Saves, a buffer opened (less `delete`), two more saves, three days, one more save, the buffer written."""
    clock = Clock(datetime(2026, 11, 20, 9, 0).astimezone())
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state")), clock=clock) as memory:
        path = memory.vault.root / PEOPLE
        for n in range(5):
            clock.now += timedelta(minutes=1)
            memory.save(f"Early person {n} plays chess.", type="people", topic=f"Early{n}")
        buffer = path.read_text("utf-8").replace(f"- {delete}\n", "") if delete else path.read_text("utf-8")
        for fact in LATER:
            clock.now += timedelta(minutes=1)
            memory.save(fact, type="people", topic=fact.split()[0])
        clock.now += timedelta(days=3)  # the buffer stays open over a long weekend
        memory.save("Zed likes rain.", type="people", topic="Zed")
        clock.now += timedelta(minutes=1)
        _write(path, buffer + "- Typed in the buffer opened on Friday\n")
        memory.search("tea")
        return path.read_text("utf-8"), memory.status()["repairs"]


def test_a_buffer_open_for_days_gets_the_saves_made_after_it_was_loaded_put_back(tmp_path: Path) -> None:
    text, repairs = _weekend(tmp_path)
    for line in (*LATER, "Zed likes rain.", "Typed in the buffer opened on Friday"):
        assert text.count(f"- {line}\n") == 1, line
    assert all(f"Early person {n} plays chess." in text for n in range(5))
    assert [repair["kind"] for repair in repairs] == ["put back"]


def test_a_line_deleted_in_a_days_old_buffer_comes_back_once_and_is_told(tmp_path: Path) -> None:
    # The day's versions are gone: whether the buffer ever held "Early person 2" cannot be known, so it is
    # put back (and the person told) rather than archived; deleting it again is obeyed (rule 4).
    text, repairs = _weekend(tmp_path, delete="Early person 2 plays chess.")
    assert "- Early person 2 plays chess.\n" in text and all(line in text for line in LATER)
    assert [repair["kind"] for repair in repairs] == ["put back"]
