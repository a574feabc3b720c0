"""Keep the vector store in step with the index: embed new and changed facts in batches.

The plan mirrors `syncplan.plan`: a file needs a look when the index holds another revision of it than
the store's layout records, and its layout goes when the index drops it. Only facts whose content
key has no vector are sent to the endpoint, so moved and unchanged facts cost nothing. A file's
layout is written only once all its facts have vectors, so an interrupted pass is simply resumed.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Collection, MutableMapping
from dataclasses import dataclass

import numpy as np

from wolfmem.core.facts import fact_key
from wolfmem.errors import WolfmemError
from wolfmem.llm.embeddings import EmbeddingClient, EmbeddingsUnavailable
from wolfmem.search.index import FactIndex
from wolfmem.search.schema import Filters
from wolfmem.semantic.store import VectorStore
from wolfmem.storage.vault import CURATED_PATHS

log = logging.getLogger(__name__)

# The daemon's retry delays while the endpoint is down: 5 s, doubling, at most 5 minutes.
RETRY_FIRST, RETRY_MAX = 5.0, 300.0
# A safety net like the watcher's reconcile: look for unembedded facts this often even unwoken.
IDLE_RECHECK = 300.0

Progress = Callable[[int, int], None]


@dataclass
class EmbedReport:
    """What one pass did: files laid out, vectors fetched from the endpoint, facts now rankable."""

    files: int = 0
    embedded: int = 0
    pending_files: int = 0


def needed_first(paths: Collection[str]) -> list[str]:
    """Files in the order a search most likely needs their facts: the curated ones, other knowledge, newest day first.

    A vault found with years of episodes takes hours to embed with a small local model; this way the facts
    an agent asks about most are rankable first, and a day's episodes before the days behind it.
    """
    curated = [path for path in CURATED_PATHS if path in paths]
    knowledge = sorted(path for path in paths if path.startswith("knowledge/") and path not in curated)
    dated = sorted((path for path in paths if not path.startswith("knowledge/")), reverse=True)
    return curated + knowledge + dated


class Embedder:
    """One pass at a time over the files whose facts the store does not know yet."""

    def __init__(self, index: FactIndex, store: VectorStore, client: EmbeddingClient, batch: int) -> None:
        self.index = index
        self.store = store
        self.client = client
        self.batch = max(1, batch)

    def plan(self) -> tuple[list[str], list[str]]:
        """Files to (re)lay out, and files whose layout is to be dropped."""
        manifest = self.index.manifest()
        known = self.store.files()
        todo = [path for path, entry in manifest.items() if known.get(path) != entry.revision]
        return needed_first(todo), sorted(path for path in known if path not in manifest)

    def run(
        self,
        progress: Progress | None = None,
        stop: threading.Event | None = None,
        only: Collection[str] | None = None,
        timeout: float | None = None,
        known: MutableMapping[str, np.ndarray] | None = None,
        max_missing: int | None = None,
    ) -> EmbedReport:
        """Embed what the plan names (only some files with `only`); raise EmbeddingsUnavailable if the endpoint fails.

        `known` holds vectors already fetched (a save's own sentence), used instead of asking again.
        With `max_missing`, a pass that would send more texts than that stops early (a save's short wait).
        """
        todo, gone = self.plan()
        if only is not None:
            todo, gone = [p for p in todo if p in only], [p for p in gone if p in only]
        self.store.drop(gone)
        revisions = {path: entry.revision for path, entry in self.index.manifest().items()}
        report = EmbedReport(pending_files=len(todo))
        layouts: dict[str, tuple[str, list[tuple[int, str]]]] = {}
        texts: dict[str, str] = {}
        for number, path in enumerate(todo, 1):
            if stop is not None and stop.is_set():
                break
            facts = [(hit.line, fact_key(hit.text), hit.text)
                     for hit in self.index.iter_facts(Filters(paths=(path,)))]
            missing = self.store.missing(key for _, key, _ in facts) - texts.keys()
            new = {key: text for _, key, text in facts if key in missing}
            if max_missing is not None and len(texts) + len(new) > max_missing:
                break
            texts.update(new)
            layouts[path] = (revisions.get(path, ""), [(line, key) for line, key, _ in facts])
            if len(texts) >= self.batch:
                self._flush(layouts, texts, report, timeout, known)
            if progress:
                progress(number, len(todo))
        self._flush(layouts, texts, report, timeout, known)
        report.pending_files -= report.files
        return report

    def _flush(
        self,
        layouts: dict[str, tuple[str, list[tuple[int, str]]]],
        texts: dict[str, str],
        report: EmbedReport,
        timeout: float | None,
        known: MutableMapping[str, np.ndarray] | None,
    ) -> None:
        """Embed the collected texts in batches, then record the layouts of the files they came from."""
        if known:
            ready = [key for key in texts if key in known]
            if ready:
                self.store.add(ready, np.stack([known.pop(key) for key in ready]))
                for key in ready:
                    del texts[key]
        pending = list(texts.items())
        for start in range(0, len(pending), self.batch):
            chunk = pending[start:start + self.batch]
            vectors = self.client.embed([text for _, text in chunk], "document", timeout)
            report.embedded += self.store.add([key for key, _ in chunk], vectors)
        texts.clear()
        self.store.set_layouts(layouts)
        report.files += len(layouts)
        layouts.clear()


class BackgroundEmbedder:
    """The daemon's embedding thread: a pass whenever woken, backing off while the endpoint is down."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread; it makes a first pass at once."""
        if self._thread is None:
            self._wake.set()
            self._thread = threading.Thread(target=self._loop, name="wolfmem-embedder", daemon=True)
            self._thread.start()

    def wake(self) -> None:
        """Ask for a pass (the index changed)."""
        self._wake.set()

    def stop(self) -> None:
        """Finish the current batch, then stop."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
            self._thread = None

    def _loop(self) -> None:
        delay: float | None = None
        while not self._stop.is_set():
            self._wake.wait(timeout=delay or IDLE_RECHECK)
            if self._stop.is_set():
                return
            self._wake.clear()
            delay = self._pass(delay)

    def _pass(self, delay: float | None) -> float | None:
        """One pass; the delay before the next unwoken try (None: only when woken or idle-rechecking)."""
        store = self.embedder.store
        try:
            report = self.embedder.run(stop=self._stop)
        except EmbeddingsUnavailable as exc:
            store.note_endpoint("down", str(exc))
            retry = RETRY_FIRST if delay is None else min(delay * 2, RETRY_MAX)
            log.warning("embeddings: %s; searches answer lexically; retrying in %.0f s", exc, retry)
            return retry
        except (WolfmemError, OSError, sqlite3.Error) as exc:
            store.note_endpoint("down", f"{type(exc).__name__}: {exc}")
            log.error("embeddings: the pass failed: %s", exc)
            return RETRY_MAX
        finally:
            # The daemon never searches: let go of the searcher the pass opened.
            self.embedder.index.close()
        if report.files or report.embedded:
            store.note_endpoint("ok")
            log.info("embeddings: %d new vectors, %d files laid out", report.embedded, report.files)
        return None
