"""A searcher opened on a commit that another process merged away meanwhile is retried, not called damage.

Found under contention (issue 28): one process read the table of contents, another committed a merge
and deleted the merged segments' files, and the first then opened a segment without its stored
fields. Whoosh's TypeError was taken for damage, and the whole index was moved aside and rebuilt.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from whoosh.codec.whoosh3 import W3Codec
from whoosh.index import FileIndex
from whoosh.reading import SegmentReader

from wolfmem.search import segments
from wolfmem.search.documents import dated_facts
from wolfmem.search.index import FactIndex
from wolfmem.search.schema import FIELD_WEIGHTS
from wolfmem.storage.catalog import ManifestEntry


def _last_segment_opened(tmp_path: Path, notes: int) -> tuple[FileIndex, SegmentReader]:
    """An index of `notes` one-note commits, and a reader this process opened of its newest segment."""
    index = FactIndex(tmp_path / "index")
    for n in range(notes):
        rel = f"knowledge/note{n}.md"
        text = f"# Note {n}\n\n" + "".join(f"- Note {n} holds fact {k}.\n" for k in range(5))
        docs, _new = dated_facts(rel, text, {}, "2026-12-02")
        index.replace_files({rel: docs}, [], {rel: ManifestEntry(n, len(text), f"r{n}", n)})
    ix = index._folder.ix
    assert isinstance(ix, FileIndex)
    toc = ix._read_toc()
    return ix, SegmentReader(ix.storage, toc.schema, toc.segments[-1], generation=toc.generation)


def test_a_segment_merged_away_after_its_commit_was_read_is_gone_not_damaged(tmp_path: Path) -> None:
    ix, reader = _last_segment_opened(tmp_path, 3)  # this process opens a segment of the commit it read...
    ix.writer().commit(optimize=True)  # ...another merges every segment away and deletes their files

    with pytest.raises(FileNotFoundError, match="merged away"):  # retried on the newer commit
        segments.prime(ix, reader, FIELD_WEIGHTS)
    assert ix.searcher().doc_count() == 15


def test_a_segment_of_the_newest_commit_without_its_stored_fields_is_damage(tmp_path: Path) -> None:
    ix, reader = _last_segment_opened(tmp_path, 2)
    ix.storage.delete_file(W3Codec.column_filename(reader.segment(), "_stored"))

    with pytest.raises(TypeError):  # what folder.reading takes for damage, as before
        segments.prime(ix, reader, FIELD_WEIGHTS)
