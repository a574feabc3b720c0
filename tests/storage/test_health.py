"""Health shows up: the indexer's last error reaches `wolfmem status`, from this process or the daemon's."""

from __future__ import annotations

from wolfmem import Memory
from wolfmem.errors import IndexUnavailable
from wolfmem.ops.daemon import INDEXER_RECORD
from wolfmem.ops.status import collect, render


def test_a_failed_reindex_after_a_landed_write_is_reported_and_cleared(memory: Memory) -> None:
    healthy = memory.writer.reindex

    def broken(rel: str, data: bytes) -> None:
        raise IndexUnavailable("the index folder is read-only")

    memory.writer.reindex = broken
    receipt = memory.save("Ann is the CTO.", type="people", topic="Ann")
    assert "- Ann is the CTO." in (memory.vault.root / receipt.path).read_text()  # the write landed
    status = collect(memory)
    assert "read-only" in status["index"]["last_error"]["error"]
    assert "last indexer error" in render(status)

    memory.writer.reindex = healthy
    memory.save("Bob is the CFO.", type="people", topic="Bob")
    assert collect(memory)["index"]["last_error"] is None
    assert [hit.text for hit in memory.search("Who is the CTO?")][:1] == ["Ann is the CTO."]  # caught up


def test_the_daemons_indexer_error_reaches_status_in_another_process(memory: Memory) -> None:
    memory.state.put_run_record(INDEXER_RECORD, {"error": "disk full", "at": "2026-11-30T10:00:00+00:00"})
    status = collect(memory)
    assert status["index"]["last_error"] == {"error": "disk full", "at": "2026-11-30T10:00:00+00:00"}
    memory.state.put_run_record(INDEXER_RECORD, {"error": "", "at": "2026-11-30T10:05:00+00:00"})
    assert collect(memory)["index"]["last_error"] is None
