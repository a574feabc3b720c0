"""A whole-file commit is compared with the catalog's rows before the index lock, and again under it if needed.

Two handles on one index folder stand for two processes. Between one handle's comparison and its
commit, the other commits another version of the same file: the first must not trust its comparison
(it would leave that version's facts behind), and when nothing came in between it reads no rows under
the lock.
"""

from __future__ import annotations

from pathlib import Path

from wolfmem.search.documents import dated_facts
from wolfmem.search.index import FactIndex
from wolfmem.search.schema import FactDoc, Filters
from wolfmem.storage.catalog import DocRow, ManifestEntry

REL = "knowledge/people.md"
TODAY = "2026-12-02"


def _version(n: int, extra: str) -> tuple[list[FactDoc], ManifestEntry]:
    text = "# People\n\n## Tom\n" + "".join(f"- Tom keeps item {k}.\n" for k in range(100)) + f"- {extra}\n"
    docs, _new = dated_facts(REL, text, {}, TODAY)
    return docs, ManifestEntry(n, len(text), f"rev{n}", n)


def _state(index: FactIndex) -> tuple[set[str], set[str]]:
    assert index.catalog is not None
    return set(index.catalog.doc_rows(REL)), {hit.text for hit in index.iter_facts(Filters(paths=(REL,)))}


def test_a_commit_compared_before_another_commit_of_its_file_compares_again(tmp_path: Path) -> None:
    mine, other = FactIndex(tmp_path / "index"), FactIndex(tmp_path / "index")
    mine.replace_files({REL: _version(1, "Tom likes tea.")[0]}, [], {REL: _version(1, "Tom likes tea.")[1]})
    mine.open()
    assert mine.catalog is not None
    read = mine.catalog.entry_rows

    def then_the_other_commits(path: str) -> tuple[ManifestEntry | None, dict[str, DocRow]]:
        found = read(path)
        docs, entry = _version(2, "Tom likes coffee.")
        other.replace_files({REL: docs}, [], {REL: entry})
        return found

    mine.catalog.entry_rows = then_the_other_commits  # type: ignore[method-assign]
    docs, entry = _version(3, "Tom likes juice.")
    mine.replace_files({REL: docs}, [], {REL: entry})

    ids, texts = _state(mine)
    assert ids == {doc.doc_id for doc in docs}
    assert "Tom likes juice." in texts and "Tom likes coffee." not in texts and "Tom likes tea." not in texts
    assert _state(other) == (ids, texts)


def test_a_commit_nobody_raced_reads_no_rows_under_the_lock(tmp_path: Path) -> None:
    index = FactIndex(tmp_path / "index")
    first, entry = _version(1, "Tom likes tea.")
    index.replace_files({REL: first}, [], {REL: entry})
    assert index.catalog is not None
    reads: list[str] = []
    read = index.catalog.doc_rows

    def counted(path: str) -> dict[str, DocRow]:
        reads.append(path)
        return read(path)

    index.catalog.doc_rows = counted  # type: ignore[method-assign]
    docs, entry = _version(2, "Tom likes coffee.")
    index.replace_files({REL: docs}, [], {REL: entry})

    assert reads == []
    assert _state(index) == ({doc.doc_id for doc in docs}, {doc.text for doc in docs})
