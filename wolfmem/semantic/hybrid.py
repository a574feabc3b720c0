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
from wolfmem.core.tokens import content_stems
from wolfmem.llm.embeddings import (
    EmbeddingClient,
    EmbeddingSettings,
    EmbeddingsTimeout,
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
from wolfmem.semantic.fallbacks import Fallbacks
from wolfmem.semantic.fusion import DEFAULT_RULE, FusionRule, rank_fuse
from wolfmem.semantic.store import VectorStore
from wolfmem.storage.vault import CURATED_PATHS, source_of

log = logging.getLogger(__name__)

# A search or a save waits this long for its one vector, then goes on without it.
QUERY_TIMEOUT = 2.0
SAVE_TIMEOUT = 2.0
# A search embeds at most this much text of its candidates that have no vector yet (about 500 tokens).
MISSING_CHARS = 2000
# Less time than this left of a search's QUERY_TIMEOUT: its candidates are not sent at all.
MIN_WAIT = 0.05
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
        self.rule = DEFAULT_RULE
        self.fallbacks = Fallbacks(self.store)
        self._retry_at = 0.0
        self._vectors: OrderedDict[tuple[Kind, str], np.ndarray] = OrderedDict()
        # Vectors of sentences fetched by dedup, handed to the store when the save lands.
        self._unsaved: dict[str, np.ndarray] = {}

    def close(self) -> None:
        """Record the fallbacks not written yet; release the endpoint's connections and the store."""
        self.fallbacks.flush()
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
        rule: FusionRule | None = None,
        *,
        dates: DatedQuery | None = None,
    ) -> list[IndexHit]:
        """query.run's ranking with its first `rule.pool` candidates re-ranked by fusion with their cosines.

        A query that names dates has its pool ranked by its dates first (query.run); the nearest facts by
        embedding, which know nothing of dates, fill a short pool only for a query that names none. A
        query of dates alone ("what did I do yesterday?") keeps query.run's listing of the period.
        Without a query vector the answer is the lexical one, and status says a search fell back.
        """
        if dates is not None and dates.period is not None and not content_stems(text):
            return query.run(self.index, text, filters, limit, dates)  # dates alone: the period's facts, listed
        rule = rule or self.rule
        lexical = query.run(self.index, text, filters, max(limit, rule.pool), dates)
        deadline = time.monotonic() + QUERY_TIMEOUT  # the query's vector and its candidates' share it
        vector = self._vector(text, "query")
        if vector is None:
            self.fallbacks.note("the query got no vector (embeddings endpoint down or slow)")
            return lexical[:limit]
        pool, rest = lexical[:rule.pool], lexical[rule.pool:]
        dated = dates is not None and (dates.window is not None or dates.period is not None)
        room = 0 if dated else rule.pool - len(pool)
        candidates = pool + self._nearest(vector, filters, pool, room)
        similarity = self._similarity(candidates, vector, deadline)
        unranked = int(np.isnan(similarity).sum())
        if unranked:
            self.fallbacks.note(f"{unranked} of {len(candidates)} candidates had no vector yet (ranked lexically)")
        order = rank_fuse(len(pool), similarity.tolist(), rule.dense, rule.constant)
        fused = [dataclasses.replace(candidates[i], score=score) for i, score in order]
        # Past the pool, lexical order, scored as if dense agreed: each below every fused candidate.
        after = [dataclasses.replace(hit, score=1.0 / (rule.constant + len(candidates) + n))
                 for n, hit in enumerate(rest, 1)]
        return (fused + after)[:limit]

    def _nearest(self, vector: np.ndarray, filters: Filters, pool: list[IndexHit], room: int) -> list[IndexHit]:
        """Up to `room` facts nearest to the query by embedding that are not in the pool (filters hold)."""
        if room <= 0:
            return []
        self.view.refresh()
        scores = self.view.scores(vector, 0.0)
        keep = (lambda path: source_of(path) in filters.sources) if filters.sources else None
        taken = {(hit.path, hit.line) for hit in pool}
        near = [hit for hit, _ in self._placed(self.view.top(scores, room + len(pool), keep), filters)
                if (hit.path, hit.line) not in taken]
        return near[:room]

    def _similarity(self, candidates: list[IndexHit], vector: np.ndarray, deadline: float) -> np.ndarray:
        """Each candidate's cosine to the query, NaN without a vector; embeds a few missing ones first.

        Facts without a vector, best-ranked first, up to `settings.batch` of them and MISSING_CHARS of
        text, are embedded in one request before `deadline` and kept in the store, so a fact found
        again is never re-embedded; the background embedder does the rest. A timeout there (the
        endpoint may be busy with a background batch) leaves them unranked without backing off.
        """
        keys = [fact_key(hit.text) for hit in candidates]
        rows = self.store.rows_of(keys)
        texts = {key: hit.text for key, hit in zip(keys, candidates, strict=True) if key not in rows}
        missing: list[str] = []
        chars = 0
        for key, fact in texts.items():
            if len(missing) >= self.settings.batch or (missing and chars + len(fact) > MISSING_CHARS):
                break
            missing.append(key)
            chars += len(fact)
        left = deadline - time.monotonic()
        if missing and time.monotonic() >= self._retry_at and left > MIN_WAIT:
            try:
                self.store.add(missing, self.client.embed([texts[k] for k in missing], "document", timeout=left))
                rows = self.store.rows_of(keys)
            except EmbeddingsTimeout:
                log.info("embeddings: the search's %d facts were not embedded in time", len(missing))
            except EmbeddingsUnavailable as exc:
                self._backoff(exc)
        matrix = self.store.matrix()
        similarity = np.full(len(candidates), np.nan)
        if matrix.shape[1] != vector.shape[0]:
            return similarity
        at = np.array([rows.get(key, -1) for key in keys], dtype=np.int64)
        ready = (at >= 0) & (at < len(matrix))
        similarity[ready] = matrix[at[ready]] @ vector.astype(np.float32)
        return similarity

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
        """Progress, endpoint state and the searches that fell back to lexical, for `wolfmem status`."""
        endpoint = self.store.endpoint()
        self.fallbacks.flush()
        fallback = self.store.fallback()
        return {
            "mode": "hybrid",
            "model": self.settings.model,
            "base_url": self.settings.endpoint,
            "embedded": min(self.store.fact_count(), facts),
            "total": facts,
            "endpoint": endpoint.state,
            "error": endpoint.error,
            "since": endpoint.since,
            "fell_back": fallback.count,
            "fell_back_last": fallback.reason,
            "fell_back_at": fallback.at,
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
