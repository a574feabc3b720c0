"""Saves under contention: a busy file slows only its own writers, and an appended file does not starve a save."""

from __future__ import annotations

from contextlib import AbstractContextManager

from tests.storage.test_locks import holding
from wolfmem.memory.facade import Memory
from wolfmem.storage.writer import Stage

PEOPLE = "knowledge/people.md"


def test_a_save_to_another_file_never_waits_for_a_file_held_by_another_process(memory: Memory) -> None:
    with (memory.vault.root / PEOPLE).open("a") as handle:  # an outside line the save's sync must read
        handle.write("- Zora Quill keeps the lighthouse logs.\n")
    holder = holding(memory.vault.root, memory.config.state_root(), PEOPLE)
    try:
        receipt = memory.save("The build server runs Debian 12.", type="technical", topic="Servers")
        assert receipt.status == "saved"
        # The sync before the save indexed the held file too: reading a file takes no lock, only commits do.
        assert [hit.path for hit in memory.search("Zora Quill lighthouse", limit=1)] == [PEOPLE]
    finally:
        holder.kill()
        holder.wait()


def test_a_save_does_not_wait_to_check_another_file_and_the_check_is_made_once_it_is_free(memory: Memory) -> None:
    memory.save("Ada Byron rows on Sundays.", type="people", topic="Ada Byron")
    path = memory.vault.root / PEOPLE
    buffer = path.read_text()  # an editor opens the file...
    saved = memory.save("Zora Quill keeps the lighthouse logs.", type="people", topic="Zora Quill")
    # ...and writes its stale buffer back while another process holds the file: the acknowledged save is dropped.
    path.write_text(buffer + "- Ada rows.\n")
    holder = holding(memory.vault.root, memory.config.state_root(), PEOPLE)
    waits: list[float] = []
    lock = memory.vault.lock

    def timed(rel: str | None = None, timeout: float = 60.0) -> AbstractContextManager[None]:
        if rel == PEOPLE:
            waits.append(timeout)
        return lock(rel, timeout)

    memory.vault.lock = timed  # type: ignore[method-assign]
    try:
        receipt = memory.save("The build server runs Debian 12.", type="technical", topic="Servers")
        assert receipt.status == "saved"
        assert waits == [0.0]  # one try at the held file's lock, no wait
        assert memory.state.unchecked() == {PEOPLE}
        assert "Zora Quill keeps" not in path.read_text()
    finally:
        holder.kill()
        holder.wait()
    memory.search("lighthouse")  # the next sync checks the marked file now that it is free
    assert "- Zora Quill keeps the lighthouse logs." in path.read_text().splitlines()
    assert "- Ada rows." in path.read_text().splitlines()
    assert memory.state.unchecked() == set()
    assert saved.status == "saved"


def test_a_save_to_a_file_appended_to_meanwhile_is_redone_at_once_without_letting_go_of_its_lock(
    memory: Memory,
) -> None:
    path = memory.vault.root / PEOPLE
    appended: list[str] = []
    taken: list[str | None] = []
    lock = memory.vault.lock

    def counting(rel: str | None = None, timeout: float = 60.0) -> AbstractContextManager[None]:
        taken.append(rel)
        return lock(rel, timeout)

    def appender(stage: Stage, rel: str) -> None:
        # A script appending faster than a write can read, edit and exchange: three lines land in between.
        if stage is Stage.READ and rel == PEOPLE and len(appended) < 3:
            appended.append(f"- Script line {len(appended)} about the night shift.")
            with path.open("a") as handle:
                handle.write(appended[-1] + "\n")

    memory.vault.lock = counting  # type: ignore[method-assign]
    memory.writer.on_stage = appender
    receipt = memory.save("Sarah Chen leads the night shift.", type="people", topic="Sarah Chen")
    memory.writer.on_stage = None

    assert receipt.status == "saved" and len(appended) == 3
    assert taken.count(PEOPLE) == 1  # redone under the lock, not by backing off and racing the script again
    text = path.read_text()
    assert all(line in text for line in appended) and "Sarah Chen leads the night shift." in text
    assert text.splitlines()[receipt.line - 1] == "- Sarah Chen leads the night shift."
