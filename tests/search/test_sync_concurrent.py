"""A sync takes no file's lock: what a writer commits while a sync reads a file is never undone by older facts.

A file another writer committed meanwhile is looked at again only when that commit read the file before
the sync began: otherwise it holds everything the sync must show, and looking again would chase later writes.
"""

from __future__ import annotations

from collections.abc import Callable

from wolfmem.memory.facade import Memory
from wolfmem.search.sync import SyncReport
from wolfmem.storage.catalog import ManifestEntry
from wolfmem.storage.vault import content_hash
from wolfmem.storage.writer import Cause, Edit

PEOPLE = "knowledge/people.md"
ZORA = "- Zora Quill keeps the lighthouse logs.\n"


def sync_with(memory: Memory, meanwhile: Callable[[], object]) -> tuple[list[str], SyncReport]:
    """Sync people.md by hand-edit event, running `meanwhile` between its first read and its commit;
    the files it looked at, in order, and its report."""
    looked: list[str] = []
    look = memory.syncer._look

    def look_then(rel, *rest):  # type: ignore[no-untyped-def]
        entry = look(rel, *rest)
        looked.append(rel)
        if rel == PEOPLE and len(looked) == 1:
            meanwhile()
        return entry

    memory.syncer._look = look_then  # type: ignore[method-assign]
    try:
        report = memory.syncer.sync(only=[PEOPLE], exact=True)
    finally:
        memory.syncer._look = look  # type: ignore[method-assign]
    return looked, report


def test_a_file_a_writer_reindexed_while_a_sync_read_it_is_not_overwritten_nor_read_again(memory: Memory) -> None:
    with (memory.vault.root / PEOPLE).open("a") as handle:
        handle.write(ZORA)  # by hand: the sync has to read it
    # A save lands and is re-indexed between this sync's read and its commit.
    looked, report = sync_with(memory, lambda: memory.writer.edit(
        PEOPLE, lambda text: Edit(text + "- Omar Vance repairs the foghorn.\n"), cause=Cause.SAVE))

    # Not looked at again: the writer's commit holds the file as written after this sync began (the hand
    # line too: the write was made on top of it), which is all the sync promises.
    assert looked == [PEOPLE] and report.indexed == []
    for words in ("Omar Vance foghorn", "Zora Quill lighthouse"):
        assert [hit.path for hit in memory.search(words, limit=1)] == [PEOPLE], words
    assert memory.syncer.pending(racy=False).check == ()


def test_a_file_committed_from_a_read_older_than_the_sync_is_looked_at_again(memory: Memory) -> None:
    memory.sync()
    path = memory.vault.root / PEOPLE
    before = path.read_bytes()
    stale_stamp = memory.syncer.manifest()[PEOPLE].checked_ns  # the index's last look, before this sync began
    with path.open("a") as handle:
        handle.write(ZORA)

    def commit_old_read() -> None:
        # Another process read the file before this sync began and commits that read only now.
        old = ManifestEntry(1, len(before), content_hash(before), stale_stamp, "")
        memory.index.replace_files({PEOPLE: memory.syncer._facts(PEOPLE, before.decode("utf-8"))}, [], {PEOPLE: old})

    looked, _report = sync_with(memory, commit_old_read)
    assert looked == [PEOPLE, PEOPLE]
    assert [hit.path for hit in memory.search("Zora Quill lighthouse", limit=1)] == [PEOPLE]
