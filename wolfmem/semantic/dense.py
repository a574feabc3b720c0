"""The searching side of the vector store: every embedded line's score against a query, in one pass.

A brute-force scan of the memory-mapped matrix is exact, needs no index to keep in step across
processes, and gives the cosine of every line at once, which the neighbour score and the filters
need. At 100k facts of 384 dimensions it is one 150 MB float32 matrix-vector product (BENCHMARKS.md).
The layout arrays are refreshed per file, only when another process changed the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np

from wolfmem.semantic.fusion import neighbour_scores
from wolfmem.semantic.store import FileLayout, VectorStore

# Two facts of one file are neighbours when at most one line (a blank in a loose list) lies between
# them; a heading between them always makes a gap of two or more.
NEIGHBOUR_GAP = 2


@dataclass(frozen=True)
class DenseHit:
    """One embedded line and its dense score."""

    path: str
    line: int
    key: str
    score: float


class DenseView:
    """Layout arrays of every embedded line plus the mapped matrix; refreshed when the store changes."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._generation = -1
        self._files: dict[str, tuple[int, FileLayout]] = {}
        self._matrix = np.zeros((0, 1), dtype=np.float32)
        self._paths: list[str] = []
        self._path_of = np.zeros(0, dtype=np.int32)
        self._lines = np.zeros(0, dtype=np.int32)
        self._rows = np.zeros(0, dtype=np.int64)
        self._prev = np.zeros(0, dtype=np.int64)
        self._next = np.zeros(0, dtype=np.int64)
        self._keys: list[str] = []
        self._spans: dict[str, tuple[int, int]] = {}

    def refresh(self) -> None:
        """Re-read the files whose layout changed since the last look (one cheap query when none did)."""
        with self._lock:
            generation = self.store.generation()
            if generation == self._generation:
                return
            current = self.store.file_generations()
            files = {path: entry for path, entry in self._files.items() if current.get(path) == entry[0]}
            for path, gen in current.items():
                if path not in files:
                    files[path] = (gen, self.store.layout(path))
            self._files = files
            self._matrix = self.store.matrix()
            self._rebuild()
            self._generation = generation

    def _rebuild(self) -> None:
        paths = sorted(self._files)
        layouts = [self._files[path][1] for path in paths]
        sizes = [len(layout.lines) for layout in layouts]
        self._paths = paths
        self._path_of = np.repeat(np.arange(len(paths), dtype=np.int32), sizes)
        self._lines = np.concatenate([layout.lines for layout in layouts]) if layouts else np.zeros(0, np.int32)
        rows = np.concatenate([layout.rows for layout in layouts]) if layouts else np.zeros(0, np.int64)
        # A row committed after the matrix was mapped (a racing writer) is left out until next time.
        self._rows = np.where(rows < len(self._matrix), rows, -1)
        self._keys = [key for layout in layouts for key in layout.keys]
        self._spans = {}
        start = 0
        for path, size in zip(paths, sizes, strict=True):
            self._spans[path] = (start, start + size)
            start += size
        index = np.arange(len(self._lines), dtype=np.int64)
        same_file = np.zeros(len(self._lines), dtype=bool)
        same_file[1:] = self._path_of[1:] == self._path_of[:-1]
        close = np.zeros(len(self._lines), dtype=bool)
        close[1:] = (self._lines[1:] - self._lines[:-1]) <= NEIGHBOUR_GAP
        linked = same_file & close
        self._prev = np.where(linked, index - 1, -1)
        self._next = np.full(len(self._lines), -1, dtype=np.int64)
        self._next[:-1] = np.where(linked[1:], index[1:], -1)

    @property
    def size(self) -> int:
        """How many lines can be ranked by similarity."""
        return len(self._lines)

    def scores(self, query: np.ndarray, neighbour: float) -> np.ndarray:
        """The dense score of every line (cosine plus part of its best neighbour's); -inf without a vector."""
        if not len(self._lines) or query.shape[0] != self._matrix.shape[1]:
            return np.full(len(self._lines), -np.inf, dtype=np.float32)
        cosines_by_row = self._matrix @ query.astype(np.float32)
        cosines = np.where(self._rows >= 0, cosines_by_row[np.maximum(self._rows, 0)], -np.inf)
        return neighbour_scores(cosines, self._prev, self._next, neighbour)

    def top(
        self, scores: np.ndarray, k: int, keep_path: Callable[[str], bool] | None = None
    ) -> list[DenseHit]:
        """The k best-scoring lines, optionally only in paths `keep_path` accepts."""
        if keep_path is not None:
            allowed = np.fromiter((keep_path(p) for p in self._paths), dtype=bool, count=len(self._paths))
            scores = np.where(allowed[self._path_of], scores, -np.inf) if len(scores) else scores
        finite = int(np.isfinite(scores).sum())
        k = min(k, finite)
        if k <= 0:
            return []
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [DenseHit(self._paths[self._path_of[i]], int(self._lines[i]), self._keys[i], float(scores[i]))
                for i in best]

    def score_at(self, scores: np.ndarray, path: str, line: int, key: str) -> float | None:
        """The dense score of the fact at path:line, or None unless the layout has that very fact there.

        The key check matters right after an edit: lines have shifted before the embedder caught up.
        """
        span = self._spans.get(path)
        if span is None:
            return None
        start, end = span
        position = start + int(np.searchsorted(self._lines[start:end], line))
        if position < end and self._lines[position] == line and self._keys[position] == key:
            value = float(scores[position])
            return value if np.isfinite(value) else None
        return None

    def paths(self) -> Collection[str]:
        """The files whose lines are in the view."""
        return self._spans.keys()
