"""What a save into a big curated file reads and writes, counted (issue 28: work proportional to the change)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from wolfmem import Config, Memory
from wolfmem.storage.catalog import Catalog
from wolfmem.storage.state import StateStore

PEOPLE = "knowledge/people.md"


def big_vault(vault: Path) -> None:
    """A people.md of a few hundred facts and a few day files that share its words."""
    lines = ["# People", ""]
    for section in range(10):
        lines += ["", f"## Person{section}"] + [f"- Person{section} walked harbour path {n} on a rainy morning."
                                               for n in range(40)]
    (vault / PEOPLE).write_text("\n".join(lines) + "\n", "utf-8")
    for day in range(1, 6):
        text = "\n".join([f"# 2024-01-0{day}", "", "## 10:00 — chat"]
                         + [f"- Ann walked the harbour path with Bo {n}." for n in range(30)])
        (vault / "episodes" / f"2024-01-0{day}.md").write_text(text + "\n", "utf-8")


@pytest.fixture
def watching(vault: Path, config: Config) -> Iterator[Memory]:
    big_vault(vault)
    with Memory(vault, config) as memory:
        memory.watch()
        memory.sync()
        assert memory.save("Person3 walked harbour path home after the rain.", type="people").status == "saved"
        yield memory


def test_a_saves_duplicate_search_reads_no_files_line_maps(watching: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    rows = Catalog.file_lines
    monkeypatch.setattr(Catalog, "file_lines", lambda self, paths: reads.extend(paths) or rows(self, paths))
    receipt = watching.save("Person4 walked harbour path twice on a rainy morning.", type="people")
    assert receipt.status == "saved"
    assert reads == []  # its candidates come from people.md and the day files alike; none is read whole
    again = watching.save("Person4 walked harbour path twice on a rainy morning.", type="people")
    assert again.status == "duplicate" and again.duplicate_of == receipt.ref


def test_a_save_reads_the_bytes_of_no_displaced_version_still_in_its_grace_period(
        watching: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    watching.displaced.grace = 3600.0  # every version kept by the saves below stays in its grace period
    assert watching.save("Ann keeps the harbour keys for projects.", type="projects").status == "saved"
    reads: list[tuple[dict[str, object], list[str]]] = []
    records = StateStore.displaced

    def spied(self: StateStore, **where: object) -> dict[str, tuple[str, bytes, bytes]]:
        found = records(self, **where)  # type: ignore[arg-type]
        reads.append((where, sorted(target for target, _, _ in found.values())))
        return found

    monkeypatch.setattr(StateStore, "displaced", spied)
    for n in range(3):
        assert watching.save(f"Person{n} walked harbour path at dawn {n}.", type="people").status == "saved"
    kept = watching.state.displaced_names()
    assert sorted(set(kept.values())) == ["knowledge/people.md", "knowledge/projects.md"] and len(kept) >= 4
    # Only the saved file's own versions are read (to drop its older untouched ones), never projects.md's.
    assert reads and all(where == {"path": PEOPLE} and set(targets) <= {PEOPLE} for where, targets in reads)
    reads.clear()
    watching.displaced.grace = 0.0  # all quiet now: each is read once, found untouched, and deleted
    watching.sync()
    assert [sorted(where["rels"]) for where, _ in reads] == [sorted(kept)]  # type: ignore[call-overload]
    assert watching.state.displaced_names() == {}
