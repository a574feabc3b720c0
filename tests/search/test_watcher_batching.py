"""A file that changes every 20 ms costs the watcher a sync per second or so, never one per change."""

from __future__ import annotations

import time

import pytest
from conftest import wait_until

from wolfmem import Memory
from wolfmem.search.sync import SyncReport
from wolfmem.search.watcher import MAX_DEBOUNCE_SECONDS, Watcher

PEOPLE = "knowledge/people.md"
CHANGES = 100
EVERY = 0.02


@pytest.mark.slow
def test_a_file_appended_to_every_20_ms_is_synced_in_batches(memory: Memory) -> None:
    reports: list[SyncReport] = []

    def sync() -> SyncReport:
        reports.append(memory.sync())
        return reports[-1]

    watcher = Watcher(memory.vault, sync, debounce_seconds=memory.config.watcher_debounce_ms / 1000,
                      reconcile_seconds=300)
    watcher.start()
    try:
        wait_until(lambda: reports)  # the first reconcile
        path = memory.vault.root / PEOPLE
        started = time.monotonic()
        for n in range(CHANGES):
            with path.open("a") as handle:
                handle.write(f"- Script line {n} about the night shift.\n")
            time.sleep(EVERY)  # the writer being simulated writes on a clock
        took = time.monotonic() - started
        wait_until(lambda: memory.index.manifest()[PEOPLE].size == path.stat().st_size)
    finally:
        watcher.stop()
    reads = sum(report.indexed.count(PEOPLE) for report in reports)
    # One read of the file per MAX_DEBOUNCE_SECONDS of changes (plus the last), not one per change.
    assert 1 <= reads <= took / MAX_DEBOUNCE_SECONDS + 3 < CHANGES / 10
