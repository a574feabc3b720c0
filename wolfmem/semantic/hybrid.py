"""Hybrid search for one Memory: lexical candidates fused with the nearest facts by embedding.

Embeddings are an addition, never a dependency: when the endpoint is down, slow, or a fact has no
vector yet, the answer is the lexical one, and the endpoint's state is recorded for `wolfmem status`.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from wolfmem.core.facts import fact_key
from wolfmem.llm.embeddings import (
    EmbeddingClient,
    EmbeddingSettings,
    EmbeddingsUnavailable,
    Kind,
)
from wolfmem.search import query
from wolfmem.search.index import FactIndex
from wolfmem.search.query_dates import DatedQuery
from wolfmem.search.schema import Filters, IndexHit
from wolfmem.semantic.dense import DenseHit, DenseView
from wolfmem.semantic.embedder import (
    BackgroundEmbedder,
    Embedder,
    EmbedReport,
    Progress,
)
from wolfmem.semantic.fusion import DEFAULT_WEIGHTS, FusionWeights, fuse
from wolfmem.semantic.store import VectorStore
from wolfmem.storage.vault import CURATED_PATHS, source_of

log = logging.getLogger(__name__)

# Candidates each side contributes to the fusion.
POOL = 40
# A search or a save waits this long for its one vector, then goes on without it.
QUERY_TIMEOUT = 2.0
SAVE_TIMEOUT = 2.0
# After a failed request, searches do not ask again for this long (no timeout paid per search).
BACKOFF_SECONDS = 30.0
# Curated facts nearest to a new one that dedup also checks with compare.relate.
SIMILAR = 5
_QUERY_CACHE = 256


class Hybrid:
    """The embedding side of one Memory: query vectors, dense candidates, fusion, save-time embedding."""

    def __init__(self, settings: EmbeddingSettings, state_dir: Path, index: FactIndex) -> None:
        self.settings = settings
        self.client = EmbeddingClient(settings)
        self.store = VectorStore(state_dir / "vectors" / settings.identity)
        self.view = DenseView(self.store)
        self.index = index
        self.weights = DEFAULT_WEIGHTS
        self._retry_at = 0.0
        self._vectors: OrderedDict[tuple[Kind, str], np.ndarray] = OrderedDict()
        # Vectors of sentences fetched by dedup, handed to the store when the save lands.
        self._unsaved: dict[str, np.ndarray] = {}

    def close(self) -> None:
        """Release the endpoint's connections and the store."""
        self.client.close()
        self.store.close()

    def embedder(self, index: FactIndex | None = None) -> Embedder:
        """An Embedder over this store (over another index handle for another thread)."""
        return Embedder(index or self.index, self.store, self.client, self.settings.batch)

    def background(self, index: FactIndex) -> BackgroundEmbedder:
        """The daemon's embedding thread, reading the index through its own handle."""
        return BackgroundEmbedder(self.embedder(index))

    # -- search -------------------------------------------------------------------
    def search(
        self,
        text: str,
        filters: Filters,
        limit: int,
        weights: FusionWeights | None = None,
        *,
        dates: DatedQuery | None = None,
    ) -> list[IndexHit]:
        """query.run's ranking fused with the dense ranking; the lexical one alone without a query vector.

        A query that names dates is ranked by its dates first (query.run), which a cosine knows nothing of.
        """
        if dates is not None and (dates.window is not None or dates.period is not None):
            return query.run(self.index, text, filters, limit, dates)
        weights = weights or self.weights
        lexical = query.run(self.index, text, filters, max(limit, POOL))
        vector = self._vector(text, "query")
        if vector is None:
            return lexical[:limit]
        self.view.refresh()
        scores = self.view.scores(vector, weights.neighbour)
        keep = (lambda path: source_of(path) in filters.sources) if filters.sources else None
        pool = self.view.top(scores, POOL, keep)
        candidates: dict[tuple[str, int], IndexHit] = {(hit.path, hit.line): hit for hit in lexical}
        dense_pool: dict[tuple[str, int], float] = {}
        for hit, score in self._placed(pool, filters):
            candidates.setdefault((hit.path, hit.line), hit)
            dense_pool[(hit.path, hit.line)] = score
        dense: dict[tuple[str, int], float] = {}
        for hit in lexical:
            at_line = self.view.score_at(scores, hit.path, hit.line, fact_key(hit.text))
            if at_line is not None:
                dense[(hit.path, hit.line)] = at_line
        lexical_scores = {(hit.path, hit.line): hit.score for hit in lexical}
        fused = fuse(lexical_scores, dense, dense_pool, weights.dense)
        return [dataclasses.replace(candidates[key], score=score) for key, score in fused[:limit]]

    def _placed(self, pool: list[DenseHit], filters: Filters) -> list[tuple[IndexHit, float]]:
        """The indexed facts the dense hits name (by content, so a moved fact is still found), filtered."""
        if not pool:
            return []
        best: dict[str, float] = {}
        at: dict[tuple[str, int, str], float] = {}
        for hit in pool:
            best[hit.key] = max(best.get(hit.key, -np.inf), hit.score)
            at[(hit.path, hit.line, hit.key)] = hit.score
        wanted = dataclasses.replace(filters, keys=tuple(best))
        placed: list[tuple[IndexHit, float]] = []
        for fact in self.index.iter_facts(wanted):
            key = fact_key(fact.text)
            placed.append((fact, at.get((fact.path, fact.line, key), best.get(key, -np.inf))))
        return [(fact, score) for fact, score in placed if np.isfinite(score)]

    # -- dedup and saves ----------------------------------------------------------
    def similar(self, sentence: str) -> list[IndexHit]:
        """The curated facts nearest to a sentence, for dedup to check with compare.relate; [] without a vector."""
        vector = self._vector(sentence, "document")
        if vector is None:
            return []
        self._unsaved[fact_key(sentence)] = vector
        self.view.refresh()
        scores = self.view.scores(vector, 0.0)
        pool = self.view.top(scores, SIMILAR, lambda path: path in CURATED_PATHS)
        return [hit for hit, _ in self._placed(pool, Filters(paths=tuple(CURATED_PATHS)))]

    def embed_saved(self, path: str) -> None:
        """Give a just-saved fact its vector within SAVE_TIMEOUT; if that fails the daemon catches up."""
        try:
            self.embedder().run(only={path}, timeout=SAVE_TIMEOUT, known=self._unsaved,
                                max_missing=self.settings.batch)
        except EmbeddingsUnavailable as exc:
            self._backoff(exc)
        finally:
            self._unsaved.clear()

    def embed_all(self, progress: Progress | None = None) -> EmbedReport:
        """Embed every fact that has no vector (`wolfmem reindex`); raises EmbeddingsUnavailable."""
        try:
            report = self.embedder().run(progress)
        except EmbeddingsUnavailable as exc:
            self.store.note_endpoint("down", str(exc))
            raise
        self.store.note_endpoint("ok")
        return report

    # -- health -------------------------------------------------------------------
    def status(self, facts: int) -> dict[str, Any]:
        """Progress and endpoint state for `wolfmem status`."""
        endpoint = self.store.endpoint()
        return {
            "mode": "hybrid",
            "model": self.settings.model,
            "base_url": self.settings.endpoint,
            "embedded": min(self.store.fact_count(), facts),
            "total": facts,
            "endpoint": endpoint.state,
            "error": endpoint.error,
            "since": endpoint.since,
            "store": str(self.store.folder),
        }

    # -- internals ----------------------------------------------------------------
    def _vector(self, text: str, kind: Kind) -> np.ndarray | None:
        """One vector for a query or sentence, from the cache or the endpoint; None when it is unavailable."""
        cached = self._vectors.get((kind, text))
        if cached is not None:
            self._vectors.move_to_end((kind, text))
            return cached
        if time.monotonic() < self._retry_at:
            return None
        try:
            vector = self.client.embed([text], kind, timeout=QUERY_TIMEOUT)[0]
        except EmbeddingsUnavailable as exc:
            self._backoff(exc)
            return None
        self.store.note_endpoint("ok")
        self._vectors[(kind, text)] = vector
        if len(self._vectors) > _QUERY_CACHE:
            self._vectors.popitem(last=False)
        return vector

    def _backoff(self, exc: EmbeddingsUnavailable) -> None:
        log.warning("embeddings unavailable, answering lexically: %s", exc)
        self._retry_at = time.monotonic() + BACKOFF_SECONDS
        self.store.note_endpoint("down", str(exc))
