"""Where each fact of a searched file stands, read from the catalog once per catalog generation.

A search places its ~35 pooled hits at their current lines and looks up their neighbours, in
about 20 files (a read per file was 15 % of a keyword search at 10k facts). Every change to the
catalog, from any process and line shifts included, bumps its generation, so a file's rows read
at one generation stay right until the number moves: a watching process then answers both
questions from memory, one cheap read of the generation per search keeps it honest, and the files
not kept (about 15 a search at 100k facts, past the budget) are read in one query.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from wolfmem.storage.catalog import Catalog

# Rows kept across searches (two small dict entries each, about 200 bytes): the files of the last
# few hundred searches at 10k facts; at 100k, the big curated file and the day files searched last.
MAX_CACHED_ROWS = 40_000


@dataclass(frozen=True)
class FileLines:
    """One file's indexed facts: each id's current line, and the id on each line that holds a fact."""

    line_of: dict[str, int]
    fact_at: dict[int, str]


class LineMaps:
    """The line maps of recently searched files, valid for one catalog at one generation; thread-safe."""

    def __init__(self, budget: int = MAX_CACHED_ROWS) -> None:
        self.budget = budget
        self._of: tuple[Catalog, int] | None = None
        self._files: OrderedDict[str, FileLines] = OrderedDict()
        self._rows = 0
        self._guard = threading.Lock()

    def of(self, catalog: Catalog, paths: Iterable[str]) -> dict[str, FileLines]:
        """Each path's line map as the catalog holds it now (a file it does not know maps nothing)."""
        generation = catalog.generation()
        wanted = list(dict.fromkeys(paths))
        with self._guard:
            if not self._current(catalog, generation):
                self._of, self._rows = (catalog, generation), 0
                self._files.clear()
            found = {path: self._files[path] for path in wanted if path in self._files}
            for path in found:
                self._files.move_to_end(path)
        missing = [path for path in wanted if path not in found]
        if missing:  # one catalog read for every file not kept (a search at 100k facts meets ~15)
            for path, rows in catalog.file_lines(missing).items():
                found[path] = FileLines(dict(rows), {line: doc_id for doc_id, line in rows})
        with self._guard:
            if self._current(catalog, generation):
                self._keep({path: lines for path, lines in found.items() if path not in self._files})
        return found

    def _current(self, catalog: Catalog, generation: int) -> bool:
        return self._of is not None and self._of[0] is catalog and self._of[1] == generation

    def _keep(self, new: dict[str, FileLines]) -> None:
        for path, lines in new.items():
            self._files[path] = lines
            self._rows += len(lines.line_of)
        while self._rows > self.budget and len(self._files) > 1:
            _, dropped = self._files.popitem(last=False)
            self._rows -= len(dropped.line_of)
