"""FactAdder writes the segment Whoosh's own add_document writes, byte for byte, and a rebuild (in this
process or in workers) holds exactly the documents, terms, weights and lengths of one built that way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from whoosh.writing import SegmentWriter

from wolfmem import Config, Memory
from wolfmem.search import parallel
from wolfmem.search.adding import FactAdder
from wolfmem.search.documents import facts_of
from wolfmem.search.index import FactIndex
from wolfmem.search.schema import FactDoc, fields
from wolfmem.search.segments import MappedStorage

# Texts that test what analysing word by word could change: decomposed accents (NFC), CJK runs,
# dotted names, stop words only, repeats, stars, tabs and odd whitespace, an empty section.
TRICKY = [
    ("People", "Sarah prefers cafe\u0301 au lait; the cafe\u0301 is near bastion.example.com v1.2.3"),
    ("", "the the the and of"),
    ("会议 (meeting)", "我们讨论了预算和时间表 then we went home home home"),
    ("Ops § deploy", "run `make *.py` then\tcheck\u00a0logs\x1cand  e.g. x.y"),
    ("Ops § deploy", "Deploy DEPLOY deploying deployed deploys — naïve résumé Ünïcödé"),
    ("x", "a\u0301 \u0301b trailing combining \u0301"),
]


def docs_of(texts: list[tuple[str, str]]) -> list[FactDoc]:
    return [FactDoc(f"knowledge/a.md#{n}", "knowledge/a.md", "knowledge", section, n + 3, text,
                    "2026-01-0" + str(n % 9 + 1) if n % 2 else "", f"key{n}")
            for n, (section, text) in enumerate(texts)]


def segment_files(directory: Path, docs: list[FactDoc], fast: bool) -> dict[str, bytes]:
    """The files of a segment written with FactAdder or with add_document, keyed by their extension."""
    FactIndex(directory).open()
    ix = MappedStorage(str(directory)).open_index()
    writer = SegmentWriter(ix, _lk=False, compound=False)
    adder = FactAdder(writer)
    for doc in docs:
        adder.add(doc) if fast else writer.add_document(**fields(doc))
    segment = writer._finalize_segment()
    name = segment.segment_id()
    return {path.name.removeprefix(name): path.read_bytes() for path in directory.iterdir() if name in path.name}


def test_fact_adder_writes_the_segment_add_document_writes(tmp_path: Path) -> None:
    docs = docs_of(TRICKY * 3)
    text = (Path(__file__).parent.parent.parent / "README.md").read_text("utf-8")
    docs += facts_of("episodes/2026-01-02.md", text)  # real prose and code lines
    fast = segment_files(tmp_path / "fast", docs, fast=True)
    slow = segment_files(tmp_path / "slow", docs, fast=False)
    assert len(fast) >= 4 and fast == slow


def dump(index: FactIndex) -> dict[str, Any]:
    """Everything a search can read, keyed by doc_id rather than by document number."""
    searcher = index._folder.current_searcher()
    reader = searcher.reader()
    ids = {number: stored["doc_id"] for number, stored in reader.iter_docs()}
    postings = {}
    for field, term in reader.all_terms():
        matcher = reader.postings(field, term)
        postings[(field, term)] = sorted((ids[number], weight) for number, weight in matcher.items_as("weight"))
    lengths = {(ids[number], field): reader.doc_field_length(number, field) for number in ids
               for field in ("section", "text")}
    stored = sorted(sorted(stored.items()) for _, stored in reader.iter_docs())
    assert index.catalog is not None
    rows = {path: sorted(map(tuple, index.catalog.doc_rows(path).values())) for path in index.manifest()}
    return {"postings": postings, "lengths": lengths, "stored": stored, "rows": rows}


def write_vault(root: Path) -> None:
    (root / "knowledge").mkdir(parents=True)
    (root / "episodes").mkdir()
    people = ["# People"] + [f"\n## {section or 'Misc'}\n- {text}" for section, text in TRICKY]
    (root / "knowledge" / "people.md").write_text("\n".join(people) + "\n", "utf-8")
    for day in range(1, 8):
        lines = [f"# 2026-01-0{day}", "", "## 09:00 — chat"]
        lines += [f"- {TRICKY[(day + k) % len(TRICKY)][1]} round {k}" for k in range(15)]
        (root / "episodes" / f"2026-01-0{day}.md").write_text("\n".join(lines) + "\n", "utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("workers", [False, True])
def test_a_rebuild_holds_what_add_document_would_have_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: bool
) -> None:
    write_vault(tmp_path / "vault")
    if workers:
        monkeypatch.setattr(parallel, "MIN_BYTES", 0)
        monkeypatch.setattr(parallel, "SHARE_BYTES", 1_000)
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "built"))) as memory:
        memory.reindex()
        built = dump(memory.index)
    # The reference: the same rebuild with Whoosh's own add_document in place of FactAdder.
    monkeypatch.setattr(parallel, "MIN_BYTES", 10**12)

    class Plain:
        def __init__(self, writer: Any) -> None:
            self.writer = writer

        def add_all(self, docs: list[FactDoc]) -> None:
            for doc in docs:
                self.writer.add_document(**fields(doc))

    monkeypatch.setattr("wolfmem.search.index.FactAdder", Plain)
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "plain"))) as memory:
        memory.reindex()
        plain = dump(memory.index)
    assert len(built["stored"]) > 100 and built == plain
