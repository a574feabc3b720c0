"""The Memory facade: save / get / search / memory_map / log_episode over one vault."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wolfmem import limits
from wolfmem.cancellation import checkpoint
from wolfmem.config import Config, load_config
from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.errors import (
    IndexUnavailable,
    OutsideVault,
    UsageError,
    WolfmemError,
)
from wolfmem.memory import memory_map
from wolfmem.memory.corrections import Correction, Corrections
from wolfmem.memory.episodes import LogReceipt, log_episode
from wolfmem.memory.receipts import Receipt
from wolfmem.memory.recovery import LinesBack, Recovery
from wolfmem.memory.refs import Excerpt, read_ref
from wolfmem.memory.saving import Saver
from wolfmem.memory.searching import Hit, parse_day, parse_limit, parse_sources, to_hit
from wolfmem.search import query, query_dates
from wolfmem.search.changes import InotifyChanges, Pending
from wolfmem.search.index import FactIndex
from wolfmem.search.schema import Filters, IndexHit
from wolfmem.search.sync import Syncer, SyncReport
from wolfmem.search.watcher import ChangeFeed
from wolfmem.storage.displaced import Displaced
from wolfmem.storage.reconcile import REWRITES, Reconciler
from wolfmem.storage.services import Clock, open_services
from wolfmem.storage.vault import CURATED, CURATED_PATHS, SOURCES, Vault

if TYPE_CHECKING:
    from wolfmem.semantic.hybrid import Hybrid

log = logging.getLogger(__name__)

RECENT_REPAIRS = 10


def local_now() -> datetime:
    """The current local time, timezone-aware."""
    return datetime.now().astimezone()


class Memory:
    """An agent's long-term memory in one vault; safe to use from several threads and processes."""

    def __init__(
        self,
        vault: str | Path | None = None,
        config: Config | None = None,
        *,
        create: bool = True,
        clock: Clock = local_now,
    ) -> None:
        # The vault's services, which curation, the audit and jobs are handed instead of this facade.
        self.services = open_services((config or load_config()).with_vault(vault), clock, create=create,
                                      reindex=self._reindex)
        # The facade's own shortcuts to them.
        self.config, self.clock, self.vault = self.services.config, clock, self.services.vault
        self.state, self.history, self.writer = self.services.state, self.services.history, self.services.writer
        self.archive, self.provenance = self.services.archive, self.services.provenance
        self.index = FactIndex(self.vault.index_dir, lock=self.vault.index_lock)
        self.syncer = Syncer(self.vault, self.index, self.config.index_max_file_bytes, self.state, clock)
        # None unless embeddings.model is set: then search is hybrid and dedup also checks near neighbours.
        self.hybrid = _open_hybrid(self.config, self.vault, self.index)
        self._saver = Saver(self.writer, self.syncer, self.state, clock, refresh=self._refresh_for_save,
                            similar=self.hybrid.similar if self.hybrid is not None else None,
                            archive=self.archive)
        # An outside write (an editor's stale buffer, a git checkout) that dropped lines wolfmem wrote is
        # merged back wherever it is first noticed: by a sync (the watcher, a search) or by the next write.
        self.reconciler = Reconciler(self.writer, self.archive, self.history, self.state, clock)
        self.syncer.on_changed = self._reconcile
        self.writer.on_foreign = self._reconciled
        # What programs wrote to a version a write swapped out (nano, `>>`) is merged back once they are done.
        self.displaced = Displaced(self.writer, clock)
        self._corrections = Corrections(self.writer, self.archive, self.state, clock)
        # Kept versions read whole (`history --show`, `diff --to`) and brought back in part.
        self.recovery = Recovery(self.vault, self.history, self.writer)
        self._lock = threading.RLock()
        self._changes: InotifyChanges | None = None
        self._feed: ChangeFeed | None = None  # only for on_change callbacks (watch)

    # -- lifecycle ------------------------------------------------------------
    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop watching, if watching, and release the index."""
        with self._lock:
            if self._feed is not None:
                self._feed.stop()
                self._feed = None
            if self.hybrid is not None:
                self.hybrid.close()
            if self._changes is not None:
                self._changes.close()
                self._changes = None
            self.index.close()
            self.services.close()

    def release_readers(self) -> None:
        """Let go of the index's searcher (memory), keeping the index open for writers in other threads."""
        with self._lock:
            self.index.release_readers()

    def watch(self, on_change: Callable[[], None] | None = None) -> bool:
        """Watch the vault from this process, so a search re-reads only the files changed since the last.

        For long-lived processes (the MCP server); a one-shot command is better off scanning once.
        On Linux this is an inotify queue drained before each search, as exact as a full scan (see
        search.changes); elsewhere it returns False and every search keeps stat-ing every file.
        `on_change`, if given, is called from a watcher thread after each relevant file event (the MCP
        server's resource notifications).
        """
        with self._lock:
            if on_change is not None and self._feed is None:
                self._feed = ChangeFeed(self.vault, on_change)
                self._feed.start()
            if self._changes is None:
                changes = InotifyChanges(self.vault)
                if not changes.start():
                    return False
                self._changes = changes
            return True

    def sync(self) -> SyncReport:
        """Bring the index up to date with every write to the vault that completed before this call."""
        with self._lock:
            changes = self._changes
            pending = None
            if changes is not None:
                try:
                    pending = changes.drain()
                except OSError as exc:  # e.g. the watch limit reached while watching a new folder
                    log.warning("stopped watching %s (%s); searches will stat every file", self.vault.root, exc)
                    changes.close()
                    self._changes = changes = None
            # Kept displaced versions are looked for by name whenever the whole vault is scanned anyway;
            # so are sync engines' conflict copies (merged into their files, then archived).
            full = pending is None or pending.rescan
            self.displaced.settle(strays=full)
            if full or (pending is not None and pending.conflicts):
                self.reconciler.conflicts.settle()
            try:
                report = self._sync_pending(pending)
            except BaseException:
                if changes is not None and pending is not None:
                    changes.failed(pending)
                raise
            if full and not report.indexed:
                self._reconcile([])  # files a sync left unchecked while their writer held them
            return report

    def _reindex(self, rel: str, data: bytes) -> None:
        """The writer's hook: index a file it just wrote (the syncer exists before any write can land)."""
        self.syncer.reindex_text(rel, data)

    def _reconcile(self, rels: list[str]) -> None:
        """Check changed files, and files left unchecked, for lines an outside write dropped (a sync's on_changed).

        Never fails the caller, nor waits for another writer's file (`Reconciler.check_changed`).
        """
        try:
            self.reconciler.check_changed(rels)
        except (OSError, WolfmemError) as exc:  # the state folder unreadable: each file is looked at again
            log.warning("could not check changed files for lines an editor dropped: %s", exc)

    def _reconciled(self, rel: str, data: bytes | None = None) -> bool:
        """Repair what an outside write to rel dropped; whether the file was rewritten. Never fails the caller."""
        try:
            return any(repair.kind in REWRITES for repair in self.reconciler.check(rel, data))
        except (OSError, WolfmemError) as exc:
            # A read-only state folder, a busy file: the file is checked again on its next change or write.
            log.warning("could not check %s for lines an editor dropped: %s", rel, exc)
            return False

    def _refresh_for_save(self) -> object:
        """What a save brings up to date first: everything changed, when watching; else the curated files."""
        if self._changes is not None:
            return self.sync()
        return self.syncer.sync(only=CURATED_PATHS)

    def _sync_pending(self, pending: Pending | None) -> SyncReport:
        """Scan every file (no queue, or it asked for a rescan), or re-read the files it named."""
        try:
            if pending is None or pending.rescan:
                return self.syncer.sync()
            if pending.paths:
                return self.syncer.sync(only=sorted(pending.paths), exact=True)
            return SyncReport()
        except WolfmemError:
            raise
        except OSError as exc:
            raise IndexUnavailable(f"the index could not be brought up to date: {exc}") from exc

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Rebuild the index from scratch."""
        with self._lock:
            return self.syncer.rebuild(progress)

    # -- reads ----------------------------------------------------------------
    def search(
        self,
        query_text: str,
        sources: str | Iterable[str] | None = None,
        limit: int = 10,
        after: str | None = None,
        before: str | None = None,
        today: str | date | None = None,
    ) -> list[Hit]:
        """Facts that answer a natural-language query, best first; the index is made fresh first.

        Dates in the query ("yesterday", "in June 2023") rank the facts of those days first;
        relative ones count from `today` (default: the clock's date).
        """
        filters = Filters(
            sources=parse_sources(sources), after=parse_day(after, "after"), before=parse_day(before, "before")
        )
        if filters.after and filters.before and filters.after > filters.before:
            raise UsageError(f"after ({filters.after}) is later than before ({filters.before})")
        limit = parse_limit(limit)
        if not isinstance(query_text, str) or not query_text.strip():
            raise UsageError("query is empty — ask in words, e.g. 'Who is my manager?'")
        limits.QUERY.check(query_text)
        reference = parse_day(today, "today")
        dates = query_dates.read(query_text, date.fromisoformat(reference) if reference else self.clock().date())
        with self._lock:
            checkpoint("bringing the index up to date")
            results = self.syncer.read_fresh(self.sync, lambda: self._query(dates, filters, limit))
        hits = [to_hit(result) for result in results]
        self._issue([(hit.path, hit.line, fact_key(hit.text)) for hit in hits if hit.source != "episodes"])
        return hits

    def _query(self, dates: query_dates.DatedQuery, filters: Filters, limit: int) -> list[IndexHit]:
        checkpoint("searching the index")
        with self.index.snapshot():
            if self.hybrid is None:
                return query.run(self.index, dates.text, filters, limit, dates)
            return self.hybrid.search(dates.text, filters, limit, dates=dates)

    def take_notices(self, paths: Iterable[str]) -> list[str]:
        """What wolfmem did to these files after an outside write that no call was told yet; each is told once.

        save, get, update and forget attach these to their result; a caller of search asks for the hits' files.
        """
        try:
            return [str(record["message"]) for record in self.state.take_notices(paths)]
        except WolfmemError as exc:  # a read never fails over its notices
            log.debug("could not read the notices: %s", exc)
            return []

    def get(self, ref: str) -> Excerpt:
        """The text a ref names: a whole file, a line range (#L10-L40) or a section (#Sarah)."""
        limits.REF.check(ref)
        checkpoint("reading the file")
        excerpt = read_ref(self.vault, ref)
        if excerpt.path.startswith("knowledge/"):
            facts = markdown.parse(excerpt.text).facts
            self._issue([(excerpt.path, excerpt.start_line + f.line - 1, fact_key(f.text)) for f in facts])
            if self._reconciled(excerpt.path):  # an editor's write the watcher has not seen yet
                excerpt = read_ref(self.vault, ref)
            excerpt = replace(excerpt, notices=self.take_notices([excerpt.path]))
        return excerpt

    def _issue(self, refs: list[tuple[str, int, str]]) -> None:
        """Remember what each handed-out line ref named (best effort: a read never fails over it)."""
        if not refs:
            return
        try:
            self.state.note_issued(refs)
        except (OSError, sqlite3.Error, WolfmemError) as exc:
            log.debug("could not record handed-out refs: %s", exc)

    def memory_map(self) -> str:
        """The `<memory_map>` block: the `##` headers of the five curated files and coarse counts."""
        with self._lock:
            counts = self.syncer.read_fresh(
                self.sync, lambda: {source: self.index.doc_frequency("source", source) for source in SOURCES[:2]})
            checkpoint("reading the headings")
            headings = []
            for name, rel in zip(CURATED, CURATED_PATHS, strict=True):
                headings.append((f"{name}.md", self._headings(rel)))
            return memory_map.render(headings, counts)

    def _headings(self, rel: str) -> list[str]:
        try:
            if limits.curated_file_problem(rel, self.vault.size(rel), self.config.index_max_file_bytes):
                return ["(too large to map: `wolfmem status` says how to split it)"]
            text = self.vault.read_bytes(rel).decode("utf-8", errors="replace")
        except (OSError, OutsideVault):
            return []
        return [section.heading for section in markdown.parse(text).sections]

    # -- writes ---------------------------------------------------------------
    def save(
        self,
        fact: str,
        type: str = "technical",
        topic: str | None = None,
        request_id: str | None = None,
    ) -> Receipt:
        """File one self-contained sentence in a curated file; a fact already on file is a no-op."""
        with self._lock:
            receipt = self._saver.save(fact, type, topic, request_id)
            if self.hybrid is not None and receipt.status in ("saved", "restored"):
                self.hybrid.embed_saved(receipt.path)
            return replace(receipt, notices=self.take_notices([receipt.path])) if receipt.path else receipt

    def update(self, ref: str, fact: str, expected: str | None = None) -> Correction:
        """Replace the fact at a line ref (from a search, get or receipt) with a corrected one.

        The old line is archived.
        """
        with self._lock:
            return self._told(self._corrections.update(ref, fact, expected))

    def forget(self, ref: str, reason: str, expected: str | None = None) -> Correction:
        """Remove the fact at a line ref from its knowledge file, archiving it with the reason."""
        with self._lock:
            return self._told(self._corrections.forget(ref, reason, expected))

    def _told(self, correction: Correction) -> Correction:
        return replace(correction, notices=self.take_notices([correction.path]))

    def restore_fact(self, ref: str) -> Correction:
        """Put an archived fact (a ref from search with sources=['archive']) back where it lived."""
        with self._lock:
            return self._corrections.restore(ref)

    def restore_lines(
        self, file: str, version: str, lines: tuple[int, int] | None = None, missing: bool = False
    ) -> LinesBack:
        """Bring back lines of a kept version (a range of its lines, or every fact the file lacks now)."""
        with self._lock:
            return self.recovery.bring_back(file, version, lines=lines, missing=missing)

    def log_episode(
        self, text: str | list[str], headline: str | None = None, when: datetime | None = None
    ) -> LogReceipt:
        """Append a `## HH:MM — headline` block to today's episode log and index it at once."""
        for number, line in enumerate(text if isinstance(text, list) else [text]):
            limits.LOG_LINE.check(line, f"text[{number}]" if isinstance(text, list) else "text")
        limits.HEADLINE.check(headline)
        with self._lock:
            return log_episode(self.writer, self.clock, text, headline, when, self.config.index_max_file_bytes)

    # -- health ---------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Index health and vault facts for `wolfmem status`."""
        with self._lock:
            pending = self.syncer.pending(racy=False)
            manifest = self.syncer.manifest()
            return {
                "vault": str(self.vault.root),
                "state_dir": str(self.vault.state_dir),
                "index": {
                    "facts": self.index.count(),
                    "files": len(manifest),
                    "last_sync": self.syncer.last_synced(),
                    "stale_files": sorted(pending.check + pending.remove),
                    "skipped_files": self.syncer.skipped(),
                },
                "conflict_copies": self.vault.conflict_copies(),
                # Sync conflicts wolfmem could not merge (a copy it cannot read, markers around prose).
                "needs_person": self.reconciler.conflicts.unresolved(),
                # Lines an editor dropped that wolfmem put back, and its lines a person removed (archived).
                "repairs": self.state.repairs(RECENT_REPAIRS),
            }


def _open_hybrid(config: Config, vault: Vault, index: FactIndex) -> Hybrid | None:
    """The Hybrid search service when embeddings are configured, else None (numpy and openai stay unloaded)."""
    if not config.embeddings_model:
        return None
    # Imported here: numpy and the openai client cost a lexical-only process memory it never uses.
    from wolfmem.llm.embeddings import EmbeddingSettings
    from wolfmem.semantic.hybrid import Hybrid

    return Hybrid(EmbeddingSettings.from_config(config), vault.state_dir, index)
