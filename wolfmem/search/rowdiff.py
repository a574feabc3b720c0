"""A whole-file commit worked out before the index lock: which facts changed against the catalog's rows.

Comparing a big file's facts with its catalog rows (read, digested, matched by id) took most of a whole
commit's time under the index lock, which every writer of the vault waits for (issue 28: a save to an
untouched file waited behind other processes' commits of a file appended to every 20 ms). The rows are
read with the file's manifest entry in one snapshot (`Catalog.entry_rows`) and compared outside the lock;
under it the commit only checks that the entry is unchanged, since every commit that changes a file's
rows also writes a new entry for it. If it changed, the comparison is made again there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from wolfmem.search.schema import FactDoc
from wolfmem.storage.catalog import DocRow, ManifestEntry, RowWrites, row_writes


@dataclass(frozen=True)
class FileCommit:
    """One file's facts against its rows as the catalog held them at `entry`: what to write and delete."""

    entry: ManifestEntry | None  # the entry the rows were read with (None: not indexed, or unknown)
    rows: tuple[DocRow, ...]  # the file's rows after the commit
    added: tuple[FactDoc, ...]  # facts new, or changed in anything but their line
    stale: frozenset[str]  # ids of facts the file no longer holds
    writes: RowWrites  # the catalog's row writes from `old` to `rows`

    def current(self, entry: ManifestEntry | None) -> bool:
        """Whether this plan still holds when the catalog records `entry` for the file."""
        return self.entry is not None and self.entry == entry


def plan(docs: Sequence[FactDoc], entry: ManifestEntry | None, old: Mapping[str, DocRow]) -> FileCommit:
    """What committing `docs` as the whole of a file writes, against its rows `old` (read at `entry`)."""
    left = dict(old)
    kept: dict[str, DocRow] = {}
    added: list[FactDoc] = []
    for doc in docs:
        if doc.doc_id in kept:
            continue  # Whoosh would keep both copies of a key added twice in one writer.
        row = kept[doc.doc_id] = DocRow(doc.doc_id, doc.line, doc.digest)
        before = left.pop(doc.doc_id, None)
        if before is None or before.digest != row.digest:
            added.append(doc)
    return FileCommit(entry, tuple(kept.values()), tuple(added), frozenset(left), row_writes(old, kept))
