"""A commit's deletions: by document number when the searcher knows the writer's segments, else by Whoosh's query.

Whoosh's deletion by query opens a reader of every segment and walks the terms' postings (about
7 ms a save at 100k facts, issue 28). When the current searcher holds the writer's very segments,
with the same deletions (so the same document numbers), and their ids are kept (`IdCache`: a save's
duplicate search read them a moment before), the live documents holding each id are known, and only
they are marked: the documents the query would have found. Deleting whole files still goes by query.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from whoosh import query as wq

from wolfmem.search.ids import IdCache

# A deletion reads the ids of at most this many documents it does not hold yet (a save's own last segments).
UNREAD_IDS = 5_000


def delete(writer: Any, paths: set[str], doc_ids: set[str], searcher: Callable[[], Any], ids: IdCache) -> None:
    """Delete the facts of these files and the facts with these ids from the writer's segments."""
    numbers = _holders(writer, doc_ids, searcher, ids) if not paths else None
    if numbers is not None:
        for number in numbers:
            writer.delete_document(number)
        return
    gone = [wq.Term("path", path) for path in paths] + [wq.Term("doc_id", doc_id) for doc_id in doc_ids]
    if gone:
        writer.delete_by_query(wq.Or(gone))  # one reader for every deletion, not one per term


def _holders(writer: Any, doc_ids: set[str], searcher: Callable[[], Any], ids: IdCache) -> list[int] | None:
    """The live document numbers of the writer's segments holding these ids, or None: ask Whoosh."""
    if not doc_ids:
        return []
    current = searcher()
    mine = [(segment.segment_id(), segment.deleted_count()) for reader, _ in current.reader().leaf_readers()
            if (segment := reader.segment()) is not None]
    if mine != [(segment.segment_id(), segment.deleted_count()) for segment in writer.segments]:
        return None  # another commit's segments (a pinned snapshot, a commit not seen yet)
    known = ids.kept(current, UNREAD_IDS)
    return None if known is None else known.live_holders(sorted(doc_ids))
