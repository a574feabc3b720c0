"""A person's stale buffer written after wolfmem took a fact out of the file (forget, update, curation merge).

The buffer's copy of that line predates the forget: the person never typed it, so the forget holds (the
line stays archived, the next call is told); a line the person types anew after the forget is theirs and
stays, and the archive says it is back. The writes are real files under the daemon's real watcher.
"""

from __future__ import annotations

import pytest
from bufferkit import write_in_place
from conftest import wait_until

from wolfmem import Memory
from wolfmem.core.facts import fact_key
from wolfmem.storage.archive import ArchivedFact, Reason
from wolfmem.storage.writer import Cause, Edit

PEOPLE = "knowledge/people.md"
FORGOTTEN = "- Tom lives in Berlin.\n"


def _kinds(memory: Memory) -> list[str]:
    return [repair["kind"] for repair in memory.status()["repairs"]]


def _write_and_wait(memory: Memory, data: bytes) -> str:
    """Write data over people.md and wait until the watcher has judged it (one more repair recorded)."""
    path, before = memory.vault.root / PEOPLE, len(_kinds(memory))
    write_in_place(path, data)
    wait_until(lambda: len(_kinds(memory)) > before)
    return path.read_text("utf-8")


def _loaded_then_forgotten(memory: Memory) -> bytes:
    """people.md as an editor loaded it, just before an agent forgot Tom's city."""
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    memory.save("Tom lives in Berlin.", type="people", topic="Tom")
    buffer = (memory.vault.root / PEOPLE).read_bytes()
    memory.forget(memory.search("Tom Berlin")[0].ref, "the user moved")
    return buffer


def _archived(memory: Memory, text: str) -> list[str]:
    return [hit.text for hit in memory.search(text, sources=["archive"])]


@pytest.mark.parametrize("typed", ["nothing", "a line of their own", "a line next to it"])
def test_a_stale_buffer_does_not_bring_a_forgotten_fact_back(watched: Memory, typed: str) -> None:
    buffer = _loaded_then_forgotten(watched)
    if typed == "a line of their own":
        buffer = buffer.replace(b"- Sarah is my manager.\n", b"- Sarah is my manager.\n- Sarah runs marathons.\n")
    elif typed == "a line next to it":
        buffer = buffer.replace(FORGOTTEN.encode(), FORGOTTEN.encode() + b"- Tom has a cat.\n")

    text = _write_and_wait(watched, buffer)

    assert "Berlin" not in text
    assert "- Sarah is my manager.\n" in text
    assert typed != "a line of their own" or "- Sarah runs marathons.\n" in text
    assert typed != "a line next to it" or "- Tom has a cat.\n" in text
    assert _kinds(watched) == ["kept out"]
    assert "stale" in watched.status()["repairs"][0]["message"]
    assert watched.search("Berlin") == [] and _archived(watched, "Tom Berlin") == ["Tom lives in Berlin."]


def test_the_same_stale_buffer_written_again_keeps_the_forget_and_gets_a_later_save(watched: Memory) -> None:
    buffer = _loaded_then_forgotten(watched) + b"- Ana works from Porto.\n"
    assert "Berlin" not in _write_and_wait(watched, buffer)
    watched.save("Sarah likes green tea.", type="people", topic="Sarah")

    text = _write_and_wait(watched, buffer)  # vim's :w again, byte for byte

    assert "Berlin" not in text
    assert "- Sarah likes green tea.\n" in text and "- Ana works from Porto.\n" in text


def test_a_stale_buffer_does_not_bring_back_a_line_curation_merged_away(watched: Memory) -> None:
    path = watched.vault.root / PEOPLE
    watched.save("Tom lives in Berlin.", type="people", topic="Tom")
    watched.save("Tom moved to Berlin in 2019.", type="people", topic="Tom")
    buffer = path.read_bytes()
    # curation merges the first line into the second as its landing does: archived, then taken out
    watched.services.archive.add([ArchivedFact("Tom lives in Berlin.", PEOPLE, "Tom", "2026-12-03", Reason.MERGED,
                                               into="Tom moved to Berlin in 2019.", by="curation")])
    watched.services.writer.edit(PEOPLE, lambda text: Edit(text.replace(FORGOTTEN, "")), cause=Cause.CURATION)

    text = _write_and_wait(watched, buffer)

    assert FORGOTTEN not in text and "- Tom moved to Berlin in 2019.\n" in text


def test_a_forgotten_fact_typed_anew_after_the_forget_stays_and_the_archive_says_it_is_back(memory: Memory) -> None:
    path = memory.vault.root / PEOPLE
    _loaded_then_forgotten(memory)
    memory.save("Tom lives in Munich.", type="people", topic="Tom")
    fresh = path.read_text("utf-8")  # the editor loaded the file after the forget (and the save after it)
    write_in_place(path, fresh.replace("- Tom lives in Munich.\n", "- Tom lives in Munich.\n" + FORGOTTEN).encode())

    memory.search("Tom")

    text = path.read_text("utf-8")
    assert text.count(FORGOTTEN) == 1 and "- Tom lives in Munich.\n" in text
    assert fact_key("Tom lives in Berlin.") not in memory.services.archive.left(PEOPLE)
    assert memory.status()["repairs"] == []


def test_a_fact_removed_by_hand_and_written_back_by_hand_is_the_persons(memory: Memory) -> None:
    path = memory.vault.root / PEOPLE
    memory.save("Tom lives in Berlin.", type="people", topic="Tom")
    loaded = path.read_bytes()
    write_in_place(path, loaded.replace(FORGOTTEN.encode(), b""))  # deleted on purpose, then undone in the editor
    memory.search("Tom")
    assert _kinds(memory) == ["removed by hand"]

    write_in_place(path, loaded)
    memory.search("Tom")

    assert path.read_bytes() == loaded and _kinds(memory) == ["removed by hand"]
