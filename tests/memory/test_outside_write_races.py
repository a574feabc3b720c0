"""An editor writes at the worst instant: over a repair that just landed, or over a write not yet recorded.

Both are moments of a few milliseconds that real vim hits under load (tests/storage/test_editors_live.py);
here the instant is forced with hooks, so each test fails the same way every time without the rule it checks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from conftest import wait_until

from wolfmem import Config, Memory

PEOPLE = "knowledge/people.md"


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:  # a stale buffer written in place
        handle.write(text)


@pytest.fixture
def other(vault: Path, config: Config) -> Iterator[Memory]:
    """A second Memory over the same vault and state: another process's view (an MCP server beside the daemon)."""
    with Memory(vault, config) as mem:
        yield mem


def test_a_buffer_written_again_over_a_fresh_repair_is_repaired_before_a_save_builds_on_it(
    memory: Memory, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = memory.vault.root / PEOPLE
    opened = path.read_text()
    memory.save("Racer 0 keeps the window honest.", type="people", topic="Racers")
    refresh, repair = memory._saver.refresh, memory.writer.on_foreign
    assert repair is not None

    def person_saves_after_the_sync() -> object:
        done = refresh()
        _write(path, opened + "- Person line 1\n")  # between the pre-save sync and the save's read
        return done

    def person_saves_again_over_the_repair(rel: str, data: bytes) -> bool:
        fixed = repair(rel, data)
        if "Person line 2" not in path.read_text():
            _write(path, opened + "- Person line 1\n- Person line 2\n")  # the instant the put-back landed
        return fixed

    monkeypatch.setattr(memory._saver, "refresh", person_saves_after_the_sync)
    monkeypatch.setattr(memory.writer, "on_foreign", person_saves_again_over_the_repair)
    memory.save("Racer 1 keeps the window honest.", type="people", topic="Racers")

    text = path.read_text()
    for line in ("Racer 0 keeps", "Racer 1 keeps", "Person line 1", "Person line 2"):
        assert text.count(line) == 1, (line, text)


def test_an_outside_write_over_a_write_not_yet_recorded_is_judged_against_that_write(
    memory: Memory, other: Memory, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = memory.vault.root / PEOPLE
    opened = path.read_text()
    memory.save("Racer 0 keeps the window honest.", type="people", topic="Racers")
    asked, checked = threading.Event(), threading.Event()
    lock = other.vault.lock

    def signalling_lock(rel: str | None = None, timeout: float = 60.0) -> AbstractContextManager[None]:
        asked.set()
        return lock(rel, timeout)

    def other_checks() -> None:
        other.reconciler.check(PEOPLE)
        checked.set()

    record: Callable[..., None] = memory.history.record

    def person_writes_before_the_record(rel: str, before: bytes, after: bytes, cause: str, at: object) -> None:
        if rel == PEOPLE and b"Racer 1" in after:
            # The save landed on disk; its version is not recorded yet when the person's stale buffer
            # lands over it and another process looks at the file.
            _write(path, opened + "- Person line 1\n")
            thread = threading.Thread(target=other_checks)
            thread.start()
            wait_until(lambda: asked.is_set() or checked.is_set())
            threads.append(thread)
        record(rel, before, after, cause, at)

    threads: list[threading.Thread] = []
    monkeypatch.setattr(other.vault, "lock", signalling_lock)
    monkeypatch.setattr(memory.history, "record", person_writes_before_the_record)
    memory.save("Racer 1 keeps the window honest.", type="people", topic="Racers")
    for thread in threads:
        thread.join(10)

    text = path.read_text()
    for line in ("Racer 0 keeps", "Racer 1 keeps", "Person line 1"):
        assert text.count(line) == 1, (line, text)
