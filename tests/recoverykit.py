"""A people.md with two saves and their partial loss: what the recovery tests bring back."""

from __future__ import annotations

from pathlib import Path

from wolfmem import Memory

PEOPLE = "knowledge/people.md"


def saved_version(memory: Memory) -> tuple[Path, int]:
    """people.md with two saved facts under a hand-written task; the id of the version holding them."""
    path = memory.vault.root / PEOPLE
    path.write_text("# People\n\n## Sarah\n- [ ] Ask Sarah about the offsite\n")
    memory.save("Sarah likes green tea", type="people", topic="Sarah")
    memory.save("Tom runs the data team", type="people", topic="Tom")
    return path, memory.history.versions(PEOPLE)[0].id


def forget_and_edit(memory: Memory, path: Path) -> str:
    """Both saves forgotten too eagerly, then a line of the person's own: the losses a partial restore fits."""
    for query in ("green tea", "data team"):
        memory.forget(memory.search(query)[0].ref, reason="tidying up")
    task = "- [ ] Ask Sarah about the offsite\n"
    text = path.read_text().replace(task, task + "- Sarah moved to Lisbon\n")
    path.write_text(text)
    memory.sync()
    return path.read_text()
