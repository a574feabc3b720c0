"""Issue 24: a hand-grown people.md of 250,000 lines made the map take 35 s and a save 114 s.

A curated file past `index.max_file_bytes` is refused with a message that says how to split it,
and the map, saves and curation never read or parse it; counted in bytes read and characters parsed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import date

import pytest

from wolfmem import Config, Memory
from wolfmem.core import markdown
from wolfmem.curation.offline import OfflineCurator
from wolfmem.curation.run import run
from wolfmem.errors import FileTooLarge
from wolfmem.ops import status
from wolfmem.storage.vault import Vault

PEOPLE = "knowledge/people.md"
LINES = 250_000


@pytest.fixture
def memory(tmp_path) -> Iterator[Memory]:
    """A vault whose index reads 50 kB of a file, so indexing the huge file's start stays quick."""
    config = Config(state_dir=str(tmp_path / "state"), index_max_file_bytes=50_000)
    with Memory(tmp_path / "vault", config) as memory:
        yield memory


@pytest.fixture
def counted(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """people.md at 250,000 lines, indexed; then counts of the bytes read and characters parsed."""
    body = "".join(f"- Person {n} works on project {n % 97}.\n" for n in range(LINES))
    path = memory.vault.root / PEOPLE
    path.write_text(f"# People\n\n## Everyone\n{body}", "utf-8")
    # Older than the index's racy window, so the sync before each call trusts its stat, not a re-read.
    stamp = path.stat().st_mtime - 60
    os.utime(path, (stamp, stamp))
    memory.sync()
    counts = {"read": 0, "parsed": 0}
    real_read, real_scan = Vault.read_file, markdown.scan

    def read_file(self: Vault, rel: str):  # type: ignore[no-untyped-def]
        data, stat = real_read(self, rel)
        counts["read"] += len(data) if rel == PEOPLE else 0
        return data, stat

    def scan(text: str):  # type: ignore[no-untyped-def]
        counts["parsed"] += len(text)
        return real_scan(text)

    monkeypatch.setattr(Vault, "read_file", read_file)
    monkeypatch.setattr(markdown, "scan", scan)
    return counts


@pytest.mark.slow
def test_saves_map_and_curation_refuse_a_huge_curated_file_without_reading_it(memory: Memory, counted) -> None:
    before = (memory.vault.root / PEOPLE).read_bytes()
    with pytest.raises(FileTooLarge) as refused:
        memory.save("Sarah prefers tea.", "people", "Sarah")
    assert "split it" in str(refused.value) and "index.max_file_bytes" in str(refused.value)
    assert "too large to map" in memory.memory_map()
    result = run(memory.services, OfflineCurator(), date.today())
    assert "split it" in " ".join(result.files[PEOPLE].reasons)
    assert counted["read"] == 0 and counted["parsed"] < 10_000
    assert (memory.vault.root / PEOPLE).read_bytes() == before
    assert f"too large: {PEOPLE} is" in status.render(status.collect(memory))
    # Other files are untouched by the refusal.
    assert memory.save("We deploy Atlas with Helm.", "projects", "Atlas").status == "saved"
