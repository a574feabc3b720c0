"""A person's stale buffer written again after wolfmem put a save back, and files with mixed line endings.

The writes here are real files under a real watcher (the daemon's): a buffer written in place, as vim's
`:w` after the "file changed" warning, nano's ^O and emacs after its first save do. The real editors
write theirs in `tests/storage/test_editors_again_live.py`.
"""

from __future__ import annotations

import pytest
from bufferkit import write_in_place
from conftest import wait_until

from wolfmem import Memory

PEOPLE = "knowledge/people.md"
SAVED = "- Sarah likes green tea.\n"


def _repairs(memory: Memory) -> int:
    return len(memory.status()["repairs"])


def _write_and_wait(memory: Memory, data: bytes) -> bytes:
    """Write data over people.md and wait until the watcher has judged it (one more repair recorded)."""
    path, before = memory.vault.root / PEOPLE, _repairs(memory)
    write_in_place(path, data)
    wait_until(lambda: _repairs(memory) > before)
    return path.read_bytes()


@pytest.mark.parametrize("again", ["byte for byte", "with a new line", "without a line the person typed"])
def test_a_stale_buffer_written_again_gets_the_save_back_again(watched: Memory, again: str) -> None:
    path = watched.vault.root / PEOPLE
    watched.save("Sarah is my manager.", type="people", topic="Sarah")
    buffer = path.read_text("utf-8") + "- Ana works from Porto.\n- Ana speaks Basque.\n"  # typed, not written
    watched.save("Sarah likes green tea.", type="people", topic="Sarah")
    assert SAVED in _write_and_wait(watched, buffer.encode()).decode()

    for round_ in range(3):
        if again == "with a new line":
            buffer += f"- Ana note {round_}.\n"
        elif again == "without a line the person typed" and round_ == 0:
            buffer = buffer.replace("- Ana speaks Basque.\n", "")
        watched.save(f"Tom plays chess {round_}.", type="people", topic="Tom")
        text = _write_and_wait(watched, buffer.encode()).decode()
        wanted = [SAVED, *buffer.splitlines(keepends=True), *(f"- Tom plays chess {k}.\n" for k in range(round_ + 1))]
        assert all(text.count(line) == 1 for line in wanted if line.startswith("- ")), text
    kinds = {repair["kind"] for repair in watched.status()["repairs"]}
    assert kinds == {"put back"}
    assert watched.search("green tea", sources=["archive"]) == []


def test_deleting_exactly_a_put_back_save_twice_is_obeyed_and_its_heading_goes_too(watched: Memory) -> None:
    path = watched.vault.root / PEOPLE
    watched.save("Sarah is my manager.", type="people", topic="Sarah")
    before = path.read_bytes()
    watched.save("Dana leads the storage team.", type="people", topic="Dana")  # a new section of its own
    assert b"Dana leads" in _write_and_wait(watched, before)  # reads as a buffer loaded before the save

    assert _write_and_wait(watched, before) == before  # the person insists: no line, no empty "## Dana" left
    assert [hit.text for hit in watched.search("storage team", sources=["archive"])] == ["Dana leads the storage team."]


# -- some lines CRLF, some LF ----------------------------------------------------------------------------------
def _mixed(memory: Memory) -> bytes:
    """people.md as a person left it after editing part of it on Windows: its title block CRLF, the rest LF."""
    path = memory.vault.root / PEOPLE
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    head, sep, rest = path.read_bytes().partition(b"\n## ")
    write_in_place(path, head.replace(b"\n", b"\r\n") + sep + rest + b"- Ana works from Porto.\r\n")
    return path.read_bytes()


def test_a_put_back_into_a_mixed_file_leaves_every_line_of_the_person_byte_for_byte(watched: Memory) -> None:
    buffer = _mixed(watched) + b"- Ana speaks Basque.\n"  # typed, not yet written
    watched.save("Sarah likes green tea.", type="people", topic="Sarah")

    text = _write_and_wait(watched, buffer)

    lines = text.splitlines(keepends=True)
    assert [line for line in lines if b"green tea" not in line] == buffer.splitlines(keepends=True)
    assert text.count(b"- Sarah likes green tea.") == 1


def test_a_conflict_copy_merged_into_a_mixed_file_leaves_its_lines_byte_for_byte(watched: Memory) -> None:
    current = _mixed(watched)
    other = current.replace(b"\r\n", b"\n") + b"- Ana owns a kayak.\n"  # the other machine writes LF only
    copy = watched.vault.root / "knowledge/people.sync-conflict-20261201-140509-ABCDEF7.md"
    before = _repairs(watched)
    copy.write_bytes(other)

    wait_until(lambda: _repairs(watched) > before and not copy.exists())

    text = (watched.vault.root / PEOPLE).read_bytes()
    assert [line for line in text.splitlines(keepends=True) if b"kayak" not in line] == current.splitlines(True)
    assert text.count(b"- Ana owns a kayak.") == 1


# -- wolfmem took a fact out while the buffer was open -----------------------------------------------------------
def test_an_update_next_to_a_line_the_stale_buffer_typed_keeps_only_the_new_wording(watched: Memory) -> None:
    path = watched.vault.root / PEOPLE
    watched.save("Tom lives in Berlin.", type="people", topic="Tom")
    buffer = path.read_bytes().replace(b"- Tom lives in Berlin.\n", b"- Tom lives in Berlin.\n- Tom has a cat.\n")
    watched.update(watched.search("Tom Berlin")[0].ref, "Tom lives in Munich.")

    text = _write_and_wait(watched, buffer).decode()

    assert "- Tom lives in Munich.\n" in text and "- Tom has a cat.\n" in text
    assert "Berlin" not in text
