"""Issue 24: a NUL byte in a curated file hid the whole file from search, and a save made a second copy."""

from __future__ import annotations

from wolfmem import Memory
from wolfmem.ops import status

PEOPLE = "knowledge/people.md"


def test_a_nul_byte_makes_only_its_line_unsearchable(memory: Memory) -> None:
    text = "# People\n\n## Sarah\n- Sarah prefers green tea.\n- Sarah\x00 likes chess.\n- Sarah lives in Lisbon.\n"
    (memory.vault.root / PEOPLE).write_text(text, "utf-8")
    memory.sync()
    found = {hit.text for hit in memory.search("Sarah", limit=10)}
    assert {"Sarah prefers green tea.", "Sarah lives in Lisbon."} <= found
    assert not any("chess" in text for text in found)
    # The duplicate check still sees the file: the same fact again is not saved twice.
    receipt = memory.save("Sarah prefers green tea.", "people", "Sarah")
    assert receipt.status == "duplicate" and receipt.line == 4
    assert (memory.vault.root / PEOPLE).read_text("utf-8").count("green tea") == 1
    # The save that does land keeps the stray line as it was, and status names that line.
    assert memory.save("Sarah plays the cello.", "people", "Sarah").status == "saved"
    assert "Sarah\x00 likes chess." in (memory.vault.root / PEOPLE).read_text("utf-8")
    shown = status.render(status.collect(memory))
    assert f"{PEOPLE}: line 5 holds a NUL byte" in shown
