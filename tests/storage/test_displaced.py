"""The displaced inode and the identity rule, on a real filesystem with real descriptors and a real watcher.

A program that opened a note before a save's exchange (nano, `cmd >> file`, vim without a backup)
writes into the version the exchange swapped out; what it writes there must come back into the file.
And every write gives the file an inode number it has not had lately, so an editor comparing inode
numbers always sees the change.
"""

from __future__ import annotations

import os
from pathlib import Path

from conftest import wait_until

from wolfmem import Memory
from wolfmem.search.watcher import Watcher
from wolfmem.storage.exchange import DISPLACED_MARK, displaced_name, displaced_parts
from wolfmem.storage.keeping import MAX_KEPT
from wolfmem.storage.vault import content_hash

PEOPLE = "knowledge/people.md"


def kept_versions(vault: Path, name: str = "people.md") -> list[Path]:
    """The displaced versions of a note kept next to it."""
    return sorted((vault / "knowledge").glob(f".{name}{DISPLACED_MARK}*"))


def settle_now(memory: Memory) -> None:
    """Settle as a sync does once the grace period is over (the period itself is tested with the watcher)."""
    memory.displaced.grace = 0.0
    memory.displaced.settle(strays=True)


def test_fifty_saves_in_a_row_never_repeat_an_inode_number(memory: Memory, vault: Path) -> None:
    path = vault / PEOPLE
    seen = [path.stat().st_ino]
    for n in range(50):
        memory.save(f"Person number {n} works on the inode project", type="people", topic=f"P{n}")
        seen.append(path.stat().st_ino)
    assert len(set(seen)) == len(seen), f"inode numbers repeated: {len(seen) - len(set(seen))} of {len(seen)}"
    # The bound: at most MAX_KEPT kept versions per file, whatever the number of saves.
    assert len(kept_versions(vault)) <= MAX_KEPT


def test_a_write_through_a_descriptor_opened_before_a_save_is_merged_back(memory: Memory, vault: Path) -> None:
    path = vault / PEOPLE
    with open(path, "a", encoding="utf-8") as late:  # `cmd >> people.md`: opened, not yet written
        memory.save("Dana leads the storage team", type="people", topic="Dana")
        late.write("- Ezra joined in March\n")
    assert "Ezra" not in path.read_text("utf-8"), "the late write went to the live file: nothing was displaced"
    [displaced] = kept_versions(vault)
    settle_now(memory)
    text = path.read_text("utf-8")
    assert "Dana leads the storage team" in text and "- Ezra joined in March" in text
    # The merge is a write too: it keeps the version it replaced, untouched, until the next settle.
    assert displaced not in kept_versions(vault)
    settle_now(memory)
    assert kept_versions(vault) == []
    repair = memory.state.repairs()[0]
    assert repair["kind"] == "displaced write" and repair["path"] == PEOPLE and repair["count"] == 1
    assert "Ezra joined in March" in path.read_text("utf-8").splitlines()[repair["first"] - 1]
    assert memory.search("Ezra March")[0].path == PEOPLE


def test_a_slow_writer_keeps_its_version_through_a_burst_of_saves(memory: Memory, vault: Path) -> None:
    # Opened before the first save, written after the fifth: the later saves must not delete its version.
    path = vault / PEOPLE
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        for n in range(5):
            memory.save(f"Person number {n} joined the burst", type="people", topic="Burst")
        os.write(fd, b"- Ezra joined in March\n")
    finally:
        os.close(fd)
    settle_now(memory)
    text = path.read_text("utf-8")
    assert "- Ezra joined in March" in text
    assert all(f"Person number {n} joined the burst" in text for n in range(5))


def test_a_truncating_writer_slower_than_the_saves_wait_loses_nothing(memory: Memory, vault: Path) -> None:
    # nano on a slow disk: its buffer predates the first save; it truncates the file, and the second save,
    # having waited out the empty file, builds on it. The merge must keep the first save as well.
    path = vault / PEOPLE
    buffer = path.read_text("utf-8") + "- Ezra joined in March\n"
    memory.save("Dana leads the storage team", type="people", topic="Dana")
    memory.writer.pause = lambda seconds: None  # the wait for the empty file, without the seconds
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        memory.save("Omar runs the Friday demo", type="people", topic="Omar")
        os.write(fd, buffer.encode("utf-8"))
    finally:
        os.close(fd)
    settle_now(memory)
    text = path.read_text("utf-8")
    for line in ("- Ezra joined in March", "Dana leads the storage team", "Omar runs the Friday demo"):
        assert line in text, text
    assert text.count("# People") == 1


def test_an_untouched_displaced_version_is_deleted_and_nothing_reported(memory: Memory, vault: Path) -> None:
    before = (vault / PEOPLE).read_text("utf-8")
    memory.save("Dana leads the storage team", type="people", topic="Dana")
    assert len(kept_versions(vault)) == 1
    assert kept_versions(vault)[0].read_text("utf-8") == before
    memory.displaced.settle()  # within the grace period: still kept
    assert len(kept_versions(vault)) == 1
    settle_now(memory)
    assert kept_versions(vault) == [] and memory.state.displaced() == {}
    assert memory.state.repairs() == []


def test_a_kept_version_without_a_record_is_found_by_name(memory: Memory, vault: Path) -> None:
    # Another process kept it and its state folder lost the record (or a crash came between).
    path = vault / PEOPLE
    base = path.read_bytes()
    memory.save("Dana leads the storage team", type="people", topic="Dana")
    memory.state.drop_displaced(next(iter(memory.state.displaced())))
    stray = kept_versions(vault)[0]
    assert displaced_parts(stray.name) == ("people.md", content_hash(base))
    with open(stray, "a", encoding="utf-8") as late:
        late.write("- Ezra joined in March\n")
    settle_now(memory)
    text = path.read_text("utf-8")
    assert "Dana leads the storage team" in text and "- Ezra joined in March" in text
    assert text.count("# People") == 1
    assert stray not in kept_versions(vault)


def test_the_daemons_watcher_merges_a_late_write_by_itself(memory: Memory, vault: Path) -> None:
    path = vault / PEOPLE
    watcher = Watcher(memory.vault, memory.sync, debounce_seconds=0.05, due=memory.displaced.due)
    watcher.start()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            memory.save("Dana leads the storage team", type="people", topic="Dana")
            os.write(fd, b"- Ezra joined in March\n")
        finally:
            os.close(fd)
        # No event names the kept version (it is hidden); the watcher wakes when it is due.
        wait_until(lambda: "Ezra joined in March" in path.read_text("utf-8"), timeout=15)
        wait_until(lambda: kept_versions(vault) == [], timeout=5)
    finally:
        watcher.stop()
    assert "Dana leads the storage team" in path.read_text("utf-8")


def test_displaced_names_are_hidden_and_parse_back() -> None:
    name = displaced_name("people.md", "0123456789abcdef")
    assert name.startswith(".people.md" + DISPLACED_MARK)
    assert displaced_parts(name) == ("people.md", "0123456789abcdef")
    assert displaced_parts("people.md") is None and displaced_parts(".people.md.1234.tmp") is None
