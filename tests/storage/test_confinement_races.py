"""Swap races: a file or folder is swapped for a symlink out of the vault in a loop while wolfmem reads and writes.

Each test also counts what the reader saw, to prove the swap really interleaved with the reads
(a test that never met the link would pass without showing anything).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from wolfmem import Memory
from wolfmem.errors import OutsideVault, WolfmemError
from wolfmem.storage.confine import Spot
from wolfmem.storage.exchange import _exchange, _renameat2

SECRET = "exfiltrated"
INSIDE = "- The zebra inside note is harmless.\n"
OUTSIDE = f"- The zebra outside note was {SECRET}.\n"


@contextmanager
def swapping(swap: Callable[[int], None]) -> Iterator[Counter[str]]:
    """Run swap(n) in a loop on another thread for as long as the block runs."""
    stop = threading.Event()
    errors: list[BaseException] = []

    def loop() -> None:
        n = 0
        while not stop.is_set():
            try:
                swap(n)
            except BaseException as exc:  # reported by the test, not lost in the thread
                errors.append(exc)
                return
            n += 1

    seen: Counter[str] = Counter()
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not errors, errors


def file_swapper(target: Path, outside: Path) -> Callable[[int], None]:
    """Replace target, alternately, by a symlink out and by a real inside file (each by an atomic rename)."""
    link, fresh = target.with_name(".swap-link"), target.with_name(".swap-file")

    def swap(n: int) -> None:
        if n % 2:
            link.unlink(missing_ok=True)
            os.symlink(outside, link)
            os.replace(link, target)
        else:
            fresh.write_text(INSIDE, "utf-8")
            os.replace(fresh, target)

    return swap


@pytest.fixture
def outside_file(tmp_path: Path) -> Path:
    path = tmp_path / "outside.md"
    path.write_text(OUTSIDE, "utf-8")
    return path


def get_repeatedly(memory: Memory, ref: str, seen: Counter[str], times: int = 5000) -> None:
    """get(ref) again and again, counting refusals and inside reads; outside text fails the test.

    Any other error fails it too: the file is swapped by atomic renames, so it always exists.
    """
    for _ in range(times):
        try:
            text = memory.get(ref).text
        except OutsideVault:
            seen["refused"] += 1
            continue
        assert SECRET not in text
        seen["inside"] += 1


def test_get_never_returns_outside_content_while_a_file_is_swapped(memory: Memory, outside_file: Path) -> None:
    target = memory.vault.root / "knowledge" / "swap.md"
    target.write_text(INSIDE, "utf-8")
    with swapping(file_swapper(target, outside_file)) as seen:
        get_repeatedly(memory, "knowledge/swap.md", seen)
    assert seen["refused"] > 0 and seen["inside"] > 0, seen


@pytest.mark.slow
def test_search_never_indexes_outside_content_while_a_file_is_swapped(memory: Memory, outside_file: Path) -> None:
    target = memory.vault.root / "knowledge" / "swap.md"
    target.write_text(INSIDE, "utf-8")
    with swapping(file_swapper(target, outside_file)) as seen:
        for _ in range(300):
            hits = memory.search(f"zebra note {SECRET}", limit=50)
            assert not any(SECRET in hit.text for hit in hits), hits
            seen["inside" if any(hit.path == "knowledge/swap.md" for hit in hits) else "dropped"] += 1
    assert seen["inside"] > 0 and seen["dropped"] > 0, seen


@contextmanager
def exchanging(folder: Path, a: str, b: str) -> Iterator[Counter[str]]:
    """Swap two names of a folder in one step (RENAME_EXCHANGE), in a loop, while the block runs."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)

    def swap(n: int) -> None:
        assert _exchange(Spot(fd, a), Spot(fd, b)), "this filesystem cannot exchange two names"

    try:
        with swapping(swap) as seen:
            yield seen
    finally:
        os.close(fd)


needs_exchange = pytest.mark.skipif(_renameat2() is None, reason="needs renameat2(RENAME_EXCHANGE) (Linux)")


@needs_exchange
def test_get_never_reads_through_a_folder_swapped_for_a_link(memory: Memory, tmp_path: Path) -> None:
    outside = tmp_path / "outside-dir"
    outside.mkdir()
    (outside / "note.md").write_text(OUTSIDE, "utf-8")
    knowledge = memory.vault.root / "knowledge"
    (knowledge / "team").mkdir()
    (knowledge / "team" / "note.md").write_text(INSIDE, "utf-8")
    os.symlink(outside, knowledge / ".team-link")
    # The folder and the link trade places in one step, so `knowledge/team` always exists.
    with exchanging(knowledge, "team", ".team-link") as seen:
        get_repeatedly(memory, "knowledge/team/note.md", seen)
    assert seen["refused"] > 0 and seen["inside"] > 0, seen


@needs_exchange
def test_writes_never_land_in_a_folder_swapped_for_a_link(memory: Memory, tmp_path: Path) -> None:
    outside = tmp_path / "outside-episodes"
    outside.mkdir()
    os.symlink(outside, memory.vault.root / ".episodes-link")
    memory.log_episode("Started the swap test")
    with exchanging(memory.vault.root, "episodes", ".episodes-link") as seen:
        for n in range(400):
            try:
                memory.log_episode(f"Swap test entry {n}")
                seen["logged"] += 1
            except OutsideVault:
                seen["refused"] += 1
            except WolfmemError as exc:  # the file moved away mid-write: a clean refusal
                seen[type(exc).__name__] += 1
    assert list(outside.iterdir()) == [], "nothing is ever created outside the vault"
    assert seen["logged"] > 0 and seen["refused"] > 0, seen
