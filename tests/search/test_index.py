"""The Whoosh fact index: writes, OR search, filters, and rebuilding when missing or corrupt."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wolfmem import Config, Memory
from wolfmem.core.tokens import stem
from wolfmem.search.folder import SCHEMA_VERSION
from wolfmem.search.index import FactIndex
from wolfmem.search.schema import FactDoc, Filters, fact_analyzer


def doc(path: str, line: int, text: str, section: str = "", date: str = "", doc_id: str | None = None) -> FactDoc:
    source = path.split("/", 1)[0]
    return FactDoc(doc_id or f"{path}#{line}", path, source, section, line, text, date)


def terms(index: FactIndex, text: str) -> dict[str, float]:
    return {term: 1.0 for term in index.analyse(text)}


@pytest.fixture
def index(tmp_path: Path):
    ix = FactIndex(tmp_path / "index")
    ix.replace_files(
        {
            "knowledge/people.md": [
                doc("knowledge/people.md", 5, "Sarah is my manager at Acme.", "Sarah (Manager)"),
                doc("knowledge/people.md", 6, "She prefers tea to coffee.", "Sarah (Manager)"),
            ],
            "episodes/2026-03-04.md": [
                doc("episodes/2026-03-04.md", 5, "Met Sarah about the budget.", "09:00 — sync", "2026-03-04"),
            ],
            "episodes/2026-05-01.md": [
                doc("episodes/2026-05-01.md", 5, "Sarah approved the budget.", "10:00 — review", "2026-05-01"),
            ],
        },
        [],
    )
    yield ix
    ix.close()


def test_analyse_stems_and_drops_stop_words(index: FactIndex) -> None:
    assert index.analyse("Who are the managers of all the projects?") == ["manag", "project"]


def test_analyse_stems_as_the_shared_stem(index: FactIndex) -> None:
    # Query words and fact words meet only if both go through the one stemmer.
    words = "jogging planned organized deploys preferences"
    assert index.analyse(words) == [stem(word) for word in words.split()]


def test_search_is_or_and_ranks_the_best_match_first(index: FactIndex) -> None:
    hits = index.search(terms(index, "coffee zeppelin quokka"))
    assert [(h.path, h.line) for h in hits] == [("knowledge/people.md", 6)]
    assert len(index.search(terms(index, "Sarah tea"))) == 4


def test_section_heading_counts_as_evidence(index: FactIndex) -> None:
    hits = index.search(terms(index, "tea Sarah"))
    assert hits[0].text == "She prefers tea to coffee."
    hits = index.search(terms(index, "manager"))
    assert {h.text for h in hits} >= {"Sarah is my manager at Acme.", "She prefers tea to coffee."}


def test_filters(index: FactIndex) -> None:
    sarah = terms(index, "Sarah")
    assert {h.source for h in index.search(sarah, Filters(sources=("episodes",)))} == {"episodes"}
    assert [h.date for h in index.search(sarah, Filters(after="2026-04-01"))] == ["2026-05-01"]
    assert [h.date for h in index.search(sarah, Filters(before="2026-04-01", sources=("episodes",)))] == [
        "2026-03-04"
    ]
    assert index.search(sarah, Filters(paths=("knowledge/people.md",)))[0].path == "knowledge/people.md"


def test_replace_files_drops_old_facts_and_removed_paths(index: FactIndex) -> None:
    index.replace_files(
        {"knowledge/people.md": [doc("knowledge/people.md", 5, "Susan is my manager.", "Susan")]},
        ["episodes/2026-03-04.md"],
    )
    assert index.count() == 2
    assert index.search(terms(index, "tea")) == []
    assert {h.path for h in index.search(terms(index, "Sarah"))} == {"episodes/2026-05-01.md"}


def test_duplicate_ids_in_one_batch_are_kept_once(tmp_path: Path) -> None:
    ix = FactIndex(tmp_path / "index")
    same = doc("knowledge/a.md", 1, "Twice written fact.", doc_id="knowledge/a.md#x.1")
    ix.replace_files({"knowledge/a.md": [same, same]}, [])
    ix.replace_files({"knowledge/a.md": [same, same]}, [])
    assert ix.count() == 1
    ix.close()


def test_a_second_reader_sees_commits(index: FactIndex) -> None:
    reader = FactIndex(index.directory)
    assert reader.count() == 4
    index.replace_files({"knowledge/b.md": [doc("knowledge/b.md", 1, "Brand new fact.")]}, [])
    assert reader.count() == 5
    reader.close()


# -- the index is a disposable cache ----------------------------------------------------
def seed(memory: Memory) -> None:
    (memory.vault.root / "knowledge/people.md").write_text("# People\n\n## Sarah\n\n- Sarah is my manager.\n")
    (memory.vault.root / "episodes/2026-03-04.md").write_text(
        "# 2026-03-04\n\n## 09:00 — call\n\n- Called the bank about the mortgage.\n"
    )


def found(memory: Memory) -> set[str]:
    return {h.path for h in memory.search("manager mortgage")}


BOTH = {"knowledge/people.md", "episodes/2026-03-04.md"}


def test_deleted_index_is_rebuilt_by_the_next_search(vault: Path, config: Config) -> None:
    with Memory(vault, config) as memory:
        seed(memory)
        assert found(memory) == BOTH
        index_dir = memory.vault.index_dir
    shutil.rmtree(index_dir)
    with Memory(vault, config) as memory:
        assert found(memory) == BOTH


def test_index_deleted_under_a_live_memory_is_rebuilt(memory: Memory) -> None:
    seed(memory)
    assert found(memory) == BOTH
    memory.close()
    shutil.rmtree(memory.vault.index_dir)
    assert found(memory) == BOTH


@pytest.mark.parametrize("damage", ["garbage", "truncate", "segments", "schema", "no-marker", "empty-dir"])
def test_corrupt_index_is_rebuilt(vault: Path, config: Config, damage: str) -> None:
    with Memory(vault, config) as memory:
        seed(memory)
        assert found(memory) == BOTH
        index_dir = memory.vault.index_dir
    files = [p for p in index_dir.iterdir() if p.is_file()]
    if damage == "garbage":
        for path in files:
            if path.name != "wolfmem-schema.json":
                path.write_bytes(b"\x00garbage\xff" * 100)
    elif damage == "truncate":
        for path in files:
            if path.suffix in (".toc", ".seg"):
                path.write_bytes(b"")
    elif damage == "segments":
        for path in files:
            if path.suffix not in (".toc", ".json"):
                path.write_bytes(b"\x00garbage\xff" * 100)
    elif damage == "schema":
        (index_dir / "wolfmem-schema.json").write_text(json.dumps({"schema": SCHEMA_VERSION - 1}))
    elif damage == "no-marker":
        (index_dir / "wolfmem-schema.json").unlink()
    else:
        shutil.rmtree(index_dir)
        index_dir.mkdir()
    with Memory(vault, config) as memory:
        assert found(memory) == BOTH
        assert memory.index.count() == 2


def cut_in_half(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("victim", ["largest", ".pst", "_text_len.col"])
@pytest.mark.parametrize("how", ["search", "edit-then-search", "save"])
def test_a_segment_file_cut_short_is_found_when_read_moved_aside_and_rebuilt(
    vault: Path, config: Config, caplog: pytest.LogCaptureFixture, victim: str, how: str
) -> None:
    """Opening a searcher reads no postings or field lengths: the damage shows only when a read meets it."""
    from wolfmem.storage.faults import replaced_files

    people = vault / "knowledge/people.md"
    people.write_text("# People\n\n## Sarah\n\n- Sarah is my manager.\n" + "".join(
        f"- Colleague number {n} works on the billing service.\n" for n in range(200)))
    with Memory(vault, config) as memory:
        assert {h.path for h in memory.search("manager")} == {"knowledge/people.md"}
        index_dir = memory.vault.index_dir
    segments = sorted((p for p in index_dir.iterdir() if p.is_file() and p.name.startswith("MAIN_")),
                      key=lambda p: p.stat().st_size)
    cut_in_half(segments[-1] if victim == "largest" else next(p for p in segments if p.name.endswith(victim)))

    with Memory(vault, config) as memory:
        if how == "edit-then-search":  # the sync deletes the file's old facts, reading the damaged postings
            people.write_text(people.read_text().replace("Sarah is my manager", "Sarah is my mentor"))
            assert [h.text for h in memory.search("mentor")][:1] == ["Sarah is my mentor."]
        elif how == "save":  # the duplicate check reads the index
            assert memory.save("Sarah is my manager.", "people", "Sarah").status == "duplicate"
        else:
            assert [h.text for h in memory.search("manager")][:1] == ["Sarah is my manager."]
        assert memory.index.count() == 201
        assert [h.text for h in memory.search("colleague 117 billing")][:1] == [
            "Colleague number 117 works on the billing service."]
    assert any("moved it aside" in r.getMessage() and "rebuilt" in r.getMessage() for r in caplog.records)
    (fault,) = replaced_files(index_dir.parent)
    assert fault.message.startswith("index was found damaged") and "rebuilt from the files" in fault.message


@pytest.mark.parametrize("text", [
    "What did Sarah say about the harbour budget?", "config.yaml and os.path.join(x)", "cafe\u0301 na\u0308ive",
    "e-mail\u2028re:work\u00a0tabs\tand  spaces", "a \u0301b", "The THE the", "", "2024-01-09 at 10:00",
])
def test_a_text_analysed_word_by_word_gives_the_analyzers_own_terms(tmp_path: Path, text: str) -> None:
    assert FactIndex(tmp_path / "index").analyse(text) == [token.text for token in fact_analyzer()(text)]
