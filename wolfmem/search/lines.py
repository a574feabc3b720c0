"""Where each fact of a searched file stands, read from the catalog once per version of the file's entry.

A search places its ~35 pooled hits at their current lines and looks up their neighbours, in
about 20 files (a read per file was 15 % of a keyword search at 10k facts). Every commit that
changes the rows of a file the manifest knows, from any process and line shifts included, writes
its entry too, with a new check time (`Catalog.entry_rows` rests on the same rule), so a file's rows
read after its entry stay right for as long as the entry is the same: a watching process answers
both questions from memory, the manifest (re-read only when the catalog's generation moved)
keeps it honest, and a commit makes only the files it changed read again. Before, any commit
made every file be read again: a save at 100k facts re-read the ~30 files its duplicate search
met (about 30 ms; issue 28). The files not kept (past the budget) are read in one query.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from wolfmem.storage.catalog import Catalog, ManifestEntry

# Rows kept across searches (two small dict entries each, about 200 bytes): the files of the last
# few hundred searches at 10k facts; at 100k, the big curated file and the day files searched last.
MAX_CACHED_ROWS = 40_000


@dataclass(frozen=True)
class FileLines:
    """One file's indexed facts: each id's current line, and the id on each line that holds a fact."""

    line_of: dict[str, int]
    fact_at: dict[int, str]


class LineMaps:
    """The line maps of recently searched files of one catalog, each with the entry it was read at; thread-safe."""

    def __init__(self, budget: int = MAX_CACHED_ROWS) -> None:
        self.budget = budget
        self._of: Catalog | None = None
        self._files: OrderedDict[str, tuple[ManifestEntry, FileLines]] = OrderedDict()
        self._rows = 0
        self._guard = threading.Lock()

    def of(self, catalog: Catalog, paths: Iterable[str]) -> dict[str, FileLines]:
        """Each path's line map as the catalog holds it now (a file it does not know maps nothing)."""
        # The entries first: rows read after them are at least as new, so a map is never older than its entry.
        entries = catalog.manifest()
        wanted = list(dict.fromkeys(paths))
        found: dict[str, FileLines] = {}
        with self._guard:
            if self._of is not catalog:  # a catalog rebuilt or reopened: nothing kept applies
                self._of, self._rows = catalog, 0
                self._files.clear()
            for path in wanted:
                kept = self._files.get(path)
                # The manifest hands out the same entries until a commit: most checks are the identity one.
                if kept is not None and (kept[0] is (entry := entries.get(path)) or kept[0] == entry):
                    found[path] = kept[1]
                    self._files.move_to_end(path)
        missing = [path for path in wanted if path not in found]
        if missing:  # one catalog read for every file not kept
            read = {path: FileLines(dict(rows), {line: doc_id for doc_id, line in rows})
                    for path, rows in catalog.file_lines(missing).items()}
            found.update(read)
            with self._guard:
                if self._of is catalog:
                    # A file without an entry (the doctor's probe, a test's bare commit) may change rows alone.
                    self._keep({path: (entry, lines) for path, lines in read.items()
                                if (entry := entries.get(path)) is not None})
        return found

    def _keep(self, new: dict[str, tuple[ManifestEntry, FileLines]]) -> None:
        for path, (entry, lines) in new.items():
            old = self._files.pop(path, None)
            if old is not None:
                self._rows -= len(old[1].line_of)
            self._files[path] = (entry, lines)
            self._rows += len(lines.line_of)
        while self._rows > self.budget and len(self._files) > 1:
            _, (_, dropped) = self._files.popitem(last=False)
            self._rows -= len(dropped.line_of)
