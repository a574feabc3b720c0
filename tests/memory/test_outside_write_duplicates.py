"""A save told "duplicate" counts on a line already on file: a buffer loaded before it and written without it.

The person's editor loaded people.md, the person deleted a line in the buffer, and an agent then saved
the same fact: the receipt says "duplicate", already on file at that line, and nothing is written. When
the buffer is written, the agent's acknowledged fact must not vanish silently: it is put back once and
the next call is told; the person deleting it again is obeyed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wolfmem import Memory

PEOPLE = "knowledge/people.md"
FACT = "Dana leads the storage team."


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:  # the buffer written in place
        handle.write(text)


@pytest.mark.parametrize("by", ["person", "wolfmem"])
def test_a_line_a_duplicate_save_counted_on_is_put_back_when_a_stale_buffer_drops_it(memory: Memory, by: str) -> None:
    path = memory.vault.root / PEOPLE
    if by == "person":  # the line the agent's save matches was typed by the person
        _write(path, path.read_text("utf-8") + f"\n## Dana\n- {FACT}\n- Dana keeps bees.\n")
        memory.sync()
    else:
        memory.save(FACT, type="people", topic="Dana")
        memory.save("Dana keeps bees.", type="people", topic="Dana")
    buffer = path.read_text("utf-8").replace(f"- {FACT}\n", "")  # deleted in the buffer, not yet written
    receipt = memory.save(FACT, type="people", topic="Dana")
    assert receipt.status == "duplicate"
    _write(path, buffer)

    hits = memory.search("storage team")

    assert path.read_text("utf-8").count(f"- {FACT}\n") == 1
    assert hits and hits[0].text == FACT
    assert [repair["kind"] for repair in memory.status()["repairs"]] == ["put back"]
    _write(path, path.read_text("utf-8").replace(f"- {FACT}\n", ""))  # the person insists
    memory.search("storage team")
    assert FACT not in path.read_text("utf-8")
    assert "- Dana keeps bees.\n" in path.read_text("utf-8")


def test_a_person_deleting_a_line_no_save_counted_on_is_obeyed_silently(memory: Memory) -> None:
    path = memory.vault.root / PEOPLE
    _write(path, path.read_text("utf-8") + f"\n## Dana\n- {FACT}\n")
    memory.sync()
    memory.save("Dana keeps bees.", type="people", topic="Dana")
    _write(path, path.read_text("utf-8").replace(f"- {FACT}\n", ""))
    memory.search("Dana")
    assert FACT not in path.read_text("utf-8") and memory.status()["repairs"] == []
