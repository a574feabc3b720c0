"""Cooperative cancellation in the library: what a cancelled save, log, search or get leaves behind."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from wolfmem import Memory
from wolfmem.cancellation import Cancelled, cancellable, checkpoint
from wolfmem.tools import execute

FACT = "Quentin Blake maintains the zeppelin hangar."


def after(checks: int) -> Callable[[], bool]:
    """An is_cancelled that answers no for the first `checks` checkpoints, then yes: a cancel arriving mid-call."""
    seen = []

    def is_cancelled() -> bool:
        seen.append(1)
        return len(seen) > checks

    return is_cancelled


def files(vault: Path) -> dict[str, bytes]:
    return {str(p.relative_to(vault)): p.read_bytes() for p in sorted(vault.rglob("*.md"))}


def test_checkpoints_do_nothing_outside_a_cancellable_block() -> None:
    checkpoint("anything")
    with cancellable(lambda: False):
        checkpoint("anything")
    with cancellable(lambda: True), pytest.raises(Cancelled, match="cancelled before saving; nothing was changed"):
        checkpoint("saving")


def test_the_question_belongs_to_one_context_not_to_other_threads() -> None:
    raised: list[Cancelled] = []
    with cancellable(lambda: True):
        # A thread does not inherit the caller's context: another caller's cancel is not its own.
        def outside() -> None:
            try:
                checkpoint("saving")
            except Cancelled as exc:
                raised.append(exc)

        worker = threading.Thread(target=outside)
        worker.start()
        worker.join()
        with pytest.raises(Cancelled):
            checkpoint("saving")
    assert not raised


def test_a_save_cancelled_before_it_holds_the_lock_writes_nothing_and_stores_no_receipt(
    memory: Memory, vault: Path
) -> None:
    before = files(vault)
    with cancellable(lambda: True), pytest.raises(Cancelled, match="before saving"):
        memory.save(FACT, "people", request_id="r-1")
    assert files(vault) == before
    retry = memory.save(FACT, "people", request_id="r-1")
    assert retry.status == "saved" and not retry.replayed


def test_a_save_cancelled_once_it_holds_the_lock_completes_and_its_retry_gets_the_receipt(memory: Memory) -> None:
    # The only checkpoint of a save is where it takes the lock; a cancel after that does not stop it.
    with cancellable(after(1)):
        first = memory.save(FACT, "people", request_id="r-2")
    retry = memory.save(FACT, "people", request_id="r-2")
    assert retry.replayed and (retry.ref, retry.status) == (first.ref, "saved")
    assert memory.get(first.ref).text == f"- {FACT}\n"


def test_a_cancelled_log_writes_no_episode(memory: Memory, vault: Path) -> None:
    with cancellable(lambda: True), pytest.raises(Cancelled, match="before logging"):
        memory.log_episode("Inspected the zeppelin hangar")
    assert not list((vault / "episodes").glob("*.md"))


@pytest.mark.parametrize(("checks", "stage"), [(0, "bringing the index up to date"), (1, "searching the index")])
def test_a_search_stops_between_its_stages(memory: Memory, checks: int, stage: str) -> None:
    memory.save(FACT, "people")
    with cancellable(after(checks)), pytest.raises(Cancelled, match=f"before {stage}"):
        memory.search("zeppelin hangar")
    with cancellable(after(2)):
        assert memory.search("zeppelin hangar")[0].text == FACT


def test_a_cancelled_get_and_map_stop(memory: Memory) -> None:
    with cancellable(lambda: True):
        with pytest.raises(Cancelled, match="before reading the file"):
            memory.get("file:knowledge/people.md")
        with pytest.raises(Cancelled, match="before reading the headings"):
            memory.memory_map()


def test_a_cancelled_tool_call_raises_instead_of_answering_the_model(memory: Memory, vault: Path) -> None:
    before = files(vault)
    with cancellable(lambda: True), pytest.raises(Cancelled):
        execute(memory, "memory_save", {"fact": FACT, "type": "people"})
    assert files(vault) == before
