"""A sync takes no file's lock: what a writer commits while a sync reads a file is never undone by older facts."""

from __future__ import annotations

from wolfmem.memory.facade import Memory
from wolfmem.storage.writer import Cause, Edit

PEOPLE = "knowledge/people.md"


def test_a_file_a_writer_reindexed_while_a_sync_read_it_is_looked_at_again_not_overwritten(memory: Memory) -> None:
    path = memory.vault.root / PEOPLE
    with path.open("a") as handle:
        handle.write("- Zora Quill keeps the lighthouse logs.\n")  # by hand: the sync has to read it
    looked: list[str] = []
    look = memory.syncer._look

    def look_then_write(rel, *rest):  # type: ignore[no-untyped-def]
        entry = look(rel, *rest)
        looked.append(rel)
        if rel == PEOPLE and len(looked) == 1:
            # A save lands and is re-indexed between this sync's read and its commit.
            memory.writer.edit(PEOPLE, lambda text: Edit(text + "- Omar Vance repairs the foghorn.\n"),
                               cause=Cause.SAVE)
        return entry

    memory.syncer._look = look_then_write  # type: ignore[method-assign]
    report = memory.syncer.sync(only=[PEOPLE], exact=True)
    memory.syncer._look = look  # type: ignore[method-assign]

    # Looked at again, it holds what the writer indexed (the hand line too: the write was made on top of it).
    assert looked == [PEOPLE, PEOPLE] and report.indexed == []
    for words in ("Omar Vance foghorn", "Zora Quill lighthouse"):
        assert [hit.path for hit in memory.search(words, limit=1)] == [PEOPLE], words
    assert memory.syncer.pending(racy=False).check == ()
