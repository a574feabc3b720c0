"""A search's reads kept between searches give the ranking a fresh look gives, through edits from any process."""

from __future__ import annotations

from pathlib import Path

import pytest

from wolfmem import Config, Memory
from wolfmem.search import ids as ids_module
from wolfmem.search.ids import IdCache
from wolfmem.search.index import FactIndex
from wolfmem.search.schema import FactDoc
from wolfmem.search.segments import stored_fields
from wolfmem.storage.catalog import Catalog

QUERIES = ["budget harbour", "puppy name", "What did Ann say about the harbour budget?", "Biscuit", "tea coffee"]


def fact(path: str, line: int, text: str) -> FactDoc:
    return FactDoc(f"{path}#{line}", path, path.split("/", 1)[0], "S", line, text, "2024-01-01")


def test_segment_reads_match_whooshs_own_over_segments_with_deletions(tmp_path: Path) -> None:
    index = FactIndex(tmp_path / "index")
    for n in range(3):  # three commits, three segments; each replaces some facts of the one before
        index.replace_files({f"episodes/2024-01-0{m}.md": [fact(f"episodes/2024-01-0{m}.md", line, f"v{n} f{line}")
                                                           for line in range(1, 4 + n)] for m in range(1, 2 + n)}, [])
    searcher = index._folder.current_searcher()
    assert len(searcher.reader().leaf_readers()) > 1 and searcher.reader().has_deletions()
    ids = IdCache().of(searcher)
    live = [(number, fields) for number, fields in searcher.iter_docs()]
    for number, fields in live:
        assert ids.doc_ids([number]) == [fields["doc_id"]]
        assert searcher.document_number(doc_id=fields["doc_id"]) == number
        assert ids.live_numbers([fields["doc_id"]]) == {fields["doc_id"]: number}
        assert stored_fields(searcher, [number]) == [searcher.stored_fields(number)]
    assert len(live) < searcher.doc_count_all()  # deleted documents' ids are there, never handed out
    assert ids.live_numbers(["episodes/2024-01-09.md#1"]) == {}
    index.close()


def test_ids_are_read_from_the_id_field_alone_and_its_pages_stay_readable(tmp_path: Path) -> None:
    index = FactIndex(tmp_path / "index")  # MappedStorage: the term file is a memory map
    index.replace_files({"episodes/2024-01-01.md": [fact("episodes/2024-01-01.md", line, f"word{line} text")
                                                    for line in range(1, 40)]}, [])
    reader = index._folder.current_searcher().reader().leaf_readers()[0][0]
    table = reader._terms._tindex
    prefix = reader._terms._keycoder(ids_module.FIELD, b"")
    whole = table.dbfile.get(0, table.endofdata)
    copies: list[tuple[int, bytes]] = []
    get = table.dbfile.get

    def recorded(position: int, length: int) -> bytes:
        copies.append((position, get(position, length)))
        return copies[-1][1]

    table.dbfile.get = recorded
    segment = ids_module.read(reader)
    table.dbfile.get = get
    _, data = max(copies, key=lambda copy: len(copy[1]))  # the key lookups read a few bytes each
    keys, at = [], 0
    while at < len(data):  # the copy holds whole entries of the id field and nothing else
        key_length, value_length = ids_module._LENGTHS.unpack_from(data, at)
        keys.append(data[at + 8:at + 8 + key_length])
        at += 8 + key_length + value_length
    assert at == len(data) < len(whole) and all(key.startswith(prefix) for key in keys)
    assert [segment.doc_id(n) for n in range(39)] == [f"episodes/2024-01-01.md#{n}" for n in range(1, 40)]
    assert table.dbfile.get(0, table.endofdata) == whole  # the released pages read back from the file
    index.close()


def day(vault: Path, when: str, lines: list[str]) -> None:
    text = "\n".join([f"# {when}", "", "## 10:00 — chat", *[f"- {line}" for line in lines]]) + "\n"
    (vault / "episodes" / f"{when}.md").write_text(text, "utf-8")


def seed(vault: Path) -> None:
    (vault / "episodes").mkdir(exist_ok=True)
    day(vault, "2024-01-01", ["Ann: What did you name the new puppy?", "Bo: We called him Biscuit.",
                              "Ann: the harbour budget is late", "Bo: tea or coffee at the harbour?"])
    day(vault, "2024-01-02", ["Ann: the budget for the harbour was approved", "Bo: Biscuit chewed the budget",
                              *[f"Ann: small talk {n}" for n in range(6)]])


def ranked(memory: Memory) -> list[list[tuple[str, int, str, float]]]:
    return [[(h.path, h.line, h.text, h.score) for h in memory.search(q)] for q in QUERIES]


def fresh(vault: Path, config: Config) -> list[list[tuple[str, int, str, float]]]:
    """What a process that kept nothing between searches ranks (its own index handle, empty caches)."""
    with Memory(vault, config) as other:
        return ranked(other)


def test_a_watching_process_ranks_as_a_fresh_one_through_line_shifts_and_edits(vault: Path, config: Config) -> None:
    seed(vault)
    with Memory(vault, config) as memory:
        memory.watch()
        assert ranked(memory) == fresh(vault, config)
        # Lines inserted above every fact: only the catalog's lines move, the Whoosh segments do not.
        text = (vault / "episodes" / "2024-01-01.md").read_text("utf-8")
        (vault / "episodes" / "2024-01-01.md").write_text(text.replace("## 10:00", "intro\n\nmore\n\n## 10:00"))
        shifted = ranked(memory)
        assert shifted == fresh(vault, config)
        assert any(line > 6 for hits in shifted for path, line, _, _ in hits if path.endswith("01-01.md"))
        day(vault, "2024-01-02", ["Bo: Biscuit chewed the budget", "Ann: harbour harbour budget"])
        assert ranked(memory) == fresh(vault, config)


def test_another_process_moving_lines_is_seen_by_the_next_search(vault: Path, config: Config) -> None:
    seed(vault)
    with Memory(vault, config) as memory:
        before = {h.text: h.line for h in memory.search("Biscuit")}
        text = (vault / "episodes" / "2024-01-02.md").read_text("utf-8")
        (vault / "episodes" / "2024-01-02.md").write_text(text.replace("## 10:00", "x\n\ny\n\n## 10:00"))
        with Memory(vault, config) as other:
            other.sync()  # the other process re-indexes; this one's next search finds nothing to re-read
        after = {h.text: h.line for h in memory.search("Biscuit")}
    assert after["Bo: Biscuit chewed the budget"] == before["Bo: Biscuit chewed the budget"] + 4


def test_a_search_reads_the_rows_of_changed_files_only(memory: Memory, vault: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    seed(vault)
    memory.watch()
    memory.search("budget harbour")
    reads: list[str] = []
    rows = Catalog.file_lines
    monkeypatch.setattr(Catalog, "file_lines", lambda self, paths: reads.extend(paths) or rows(self, paths))
    memory.search("budget harbour")
    assert reads == []
    day(vault, "2024-01-03", ["Ann: the harbour budget again"])
    hits = memory.search("budget harbour")
    # A commit of one file makes only that file's rows be read again, though other files' hits are placed.
    assert reads == ["episodes/2024-01-03.md"]
    assert {"episodes/2024-01-01.md", "episodes/2024-01-03.md"} <= {hit.path for hit in hits}
    day(vault, "2024-01-01", ["Ann: the harbour budget is late", "Ann: the harbour budget was moved"])
    reads.clear()
    memory.search("budget harbour")
    assert reads == ["episodes/2024-01-01.md"]


def test_lines_a_save_moves_in_a_big_file_are_placed_where_they_are_now(vault: Path, config: Config) -> None:
    people = vault / "knowledge" / "people.md"
    lines = ["# People", "", "## Ann", "- Ann likes the harbour.", "", "## Bo"]
    lines += [f"- Bo walked the harbour path {n} times." for n in range(80)]  # a base for the line diff
    people.write_text("\n".join(lines) + "\n", "utf-8")
    with Memory(vault, config) as memory:
        memory.watch()
        before = {h.text: h.line for h in memory.search("harbour path", limit=5)}
        for n in range(3):  # each lands under Ann, above every Bo fact
            assert memory.save(f"Ann moved to harbour flat {n}.", type="people", topic="Ann").status == "saved"
        after = ranked(memory)
        assert after == fresh(vault, config)
        moved = {h.text: h.line for h in memory.search("harbour path", limit=5)}
    assert moved == {text: line + 3 for text, line in before.items()}


def test_hits_placed_by_id_are_the_hits_placed_by_line_maps_and_read_no_file_rows(
        vault: Path, config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(vault)
    with Memory(vault, config) as memory:
        memory.sync()
        index = memory.index
        # A crashed writer's leftover: a fact Whoosh holds that the catalog does not know is never placed.
        index._write(set(), set(), [fact("episodes/2024-01-02.md", 99, "Bo: Biscuit budget harbour leftover")])
        terms = {"biscuit": 1.0, "budget": 1.0, "harbour": 1.0}
        by_maps = index.search(terms, limit=6)
        reads: list[str] = []
        rows = Catalog.file_lines
        monkeypatch.setattr(Catalog, "file_lines", lambda self, paths: reads.extend(paths) or rows(self, paths))
        index.release_readers()
        index._lines = type(index._lines)()  # nothing kept: placing by maps would read every hit's file
        by_id = index.search(terms, limit=6, by_id=True)
    assert reads == []
    assert [(h.path, h.line, h.text, h.score) for h in by_id] == [(h.path, h.line, h.text, h.score) for h in by_maps]
    assert len(by_id) == 5 and "Bo: Biscuit budget harbour leftover" not in {h.text for h in by_id}


def test_an_id_two_documents_of_one_segment_hold_is_found_at_its_live_copy(tmp_path: Path) -> None:
    index = FactIndex(tmp_path / "index")
    index.open()
    writer = index._folder.ix.writer()  # one writer keeps both copies of a key added twice
    for text in ("old", "new"):
        writer.add_document(doc_id="knowledge/a.md#1", path="knowledge/a.md", source="knowledge", text=text)
    writer.add_document(doc_id="knowledge/a.md#2", path="knowledge/a.md", source="knowledge", text="other")
    writer.commit()
    searcher = index._folder.current_searcher()
    assert IdCache().of(searcher).live_numbers(["knowledge/a.md#1"]) == {"knowledge/a.md#1": 0}
    writer = index._folder.ix.writer()
    writer.delete_document(0)
    writer.commit(optimize=False)
    searcher = index._folder.current_searcher()
    ids = IdCache().of(searcher)
    assert ids.live_numbers(["knowledge/a.md#1"]) == {"knowledge/a.md#1": 1}
    assert searcher.document_number(doc_id="knowledge/a.md#1") == 1
    assert ids.doc_ids([0, 1, 2]) == ["knowledge/a.md#1", "knowledge/a.md#1", "knowledge/a.md#2"]
    index.close()


def test_a_watching_process_drops_the_facts_another_process_deleted(vault: Path, config: Config) -> None:
    seed(vault)
    with Memory(vault, config) as memory:
        memory.watch()
        assert ranked(memory) == fresh(vault, config)
        (vault / "episodes" / "2024-01-01.md").unlink()
        day(vault, "2024-01-03", ["Ann: harbour budget news", "Bo: Biscuit again"])
        with Memory(vault, config) as other:
            other.sync()  # another process's commits: a deletion and a new segment
        after = ranked(memory)
        assert after == fresh(vault, config)
        assert not any(path.endswith("01-01.md") for hits in after for path, _, _, _ in hits)
        assert any(path.endswith("01-03.md") for hits in after for path, _, _, _ in hits)


def test_neighbours_outside_a_snapshot_are_placed_by_the_catalog_as_it_is_now(vault: Path, config: Config) -> None:
    seed(vault)
    with Memory(vault, config) as memory:
        index = memory.index
        memory.sync()
        pool = index.ranked({"biscuit": 1.0}, limit=5)
        before = index.near_all(pool, 2)
        text = (vault / "episodes" / "2024-01-02.md").read_text("utf-8")
        (vault / "episodes" / "2024-01-02.md").write_text(text.replace("## 10:00", "x\n\ny\n\n## 10:00"))
        with Memory(vault, config) as other:
            other.sync()  # only the catalog's lines move: the Whoosh searcher stays the same
        after = index.near_all(pool, 2)
        moved = [doc_id for doc_id in before if doc_id.startswith("episodes/2024-01-02.md")]
        assert moved and all(after[doc_id] != before[doc_id] for doc_id in moved if before[doc_id])
        with index.snapshot():
            again = index.ranked({"biscuit": 1.0}, limit=5)
            assert index.near_all(again, 2) == index.near_all(again, 2)
