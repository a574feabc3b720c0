"""A commit deletes replaced facts by their document numbers when the searcher knows them, as Whoosh's query would."""

from __future__ import annotations

from pathlib import Path

import pytest
from whoosh.reading import SegmentReader
from whoosh.writing import SegmentWriter

from wolfmem.search import deleting
from wolfmem.search.index import FactIndex
from wolfmem.search.schema import FactDoc

A, B = "episodes/2024-01-01.md", "episodes/2024-01-02.md"


def facts(path: str, version: str, count: int = 6) -> list[FactDoc]:
    return [FactDoc(f"{path}#{version}{line}", path, "episodes", "S", line, f"{version} harbour fact {line}",
                    "2024-01-01") for line in range(1, count + 1)]


def live(index: FactIndex) -> list[str]:
    return sorted(fields["doc_id"] for _, fields in index._folder.current_searcher().iter_docs())


@pytest.fixture
def queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Whoosh's deletions by query, recorded (they open a reader of every segment)."""
    asked: list[str] = []
    delete = SegmentWriter.delete_by_query
    monkeypatch.setattr(SegmentWriter, "delete_by_query",
                        lambda self, q, searcher=None: asked.append(repr(q)) or delete(self, q, searcher))
    return asked


def test_replaced_facts_are_deleted_by_number_without_opening_the_segments(
        tmp_path: Path, queries: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    index = FactIndex(tmp_path / "index")
    paths = [f"episodes/2024-01-0{day}.md" for day in range(1, 5)]
    for path in paths:  # four commits of 30 facts: segments too big for Whoosh's policy to merge
        index.replace_files({path: facts(path, "a", 30)}, [])
    assert index.search({"harbour": 1.0}, limit=3)  # the searcher's ids are read, as a save's duplicate search does
    assert len(index._folder.current_searcher().reader().leaf_readers()) == 4
    opened: list[object] = []
    init = SegmentReader.__init__
    monkeypatch.setattr(SegmentReader, "__init__", lambda self, *a, **k: opened.append(self) or init(self, *a, **k))
    index.replace_files({A: [*facts(A, "a", 30)[:27], *facts(A, "c", 30)[27:]]}, [])  # facts 28-30 of A replaced
    assert queries == [] and opened == []  # before: a reader of each of the four segments, for the deletion alone
    expected = [*facts(A, "a", 30)[:27], *facts(A, "c", 30)[27:]]
    expected += [doc for path in paths[1:] for doc in facts(path, "a", 30)]
    assert live(index) == sorted(doc.doc_id for doc in expected)
    index.close()


def test_a_stale_searcher_or_unknown_ids_fall_back_to_whooshs_query_with_the_same_result(
        tmp_path: Path, queries: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    index, other = FactIndex(tmp_path / "index"), FactIndex(tmp_path / "index")
    index.replace_files({A: facts(A, "a"), B: facts(B, "b")}, [])
    index.search({"harbour": 1.0})
    with index.snapshot():  # a pinned searcher, then another process's commit: its segments are not the writer's
        other.replace_files({B: facts(B, "d")}, [])  # ids it never searched, but few: read, not asked
        index.replace_files({A: facts(A, "e")}, [])
    assert len(queries) == 1
    assert live(index) == live(other) == sorted(doc.doc_id for doc in [*facts(A, "e"), *facts(B, "d")])
    queries.clear()
    index.replace_files({A: facts(A, "f")}, [])  # outside the snapshot: its searcher is the writer's again
    assert queries == []
    monkeypatch.setattr(deleting, "UNREAD_IDS", 0)
    other.replace_files({B: facts(B, "g")}, [])  # the new segment's ids unknown to this handle, and too many
    assert len(queries) == 1
    assert live(index) == live(other) == sorted(doc.doc_id for doc in [*facts(A, "f"), *facts(B, "g")])
    index.close()
    other.close()


def test_a_whole_file_removed_is_deleted_by_query(tmp_path: Path, queries: list[str]) -> None:
    index = FactIndex(tmp_path / "index")
    index.replace_files({A: facts(A, "a"), B: facts(B, "b")}, [])
    index.search({"harbour": 1.0})
    index.replace_files({}, [A])
    assert len(queries) == 1 and live(index) == sorted(doc.doc_id for doc in facts(B, "b"))
    index.close()
