"""Keep the index equal to the files: `syncplan` decides what to look at; the Syncer does the I/O."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from wolfmem.errors import IndexDamaged, OutsideVault, StorageError
from wolfmem.search import increment, parallel
from wolfmem.search.documents import (
    dated_facts,
    decode_note,
    look,
    unreadable,
)
from wolfmem.search.index import FactIndex
from wolfmem.search.lastindexed import LastIndexed
from wolfmem.search.schema import FactDoc
from wolfmem.search.syncplan import SyncPlan, plan, plan_changed
from wolfmem.storage.catalog import ManifestEntry
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import Vault, content_hash, source_of

log = logging.getLogger(__name__)

T = TypeVar("T")


# Makes a (done, total) progress callback for as long as a big job runs (a terminal's bar).
BulkProgress = Callable[[], AbstractContextManager[Callable[[int, int], None]]]

# How many times a sync looks again at files other writers committed while it read them.
SYNC_ROUNDS = 3


@dataclass
class SyncReport:
    """What one sync did."""

    indexed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    facts: int = 0


@dataclass
class _Round(SyncReport):
    """One round of a sync, with the files it left to another writer's newer commit."""

    superseded: set[str] = field(default_factory=set)


class Syncer:
    """Brings one vault's index up to date with its files; its commits take the index lock, never a file's."""

    def __init__(
        self,
        vault: Vault,
        index: FactIndex,
        max_file_bytes: int,
        state: StateStore,
        clock: Callable[[], datetime],
    ) -> None:
        self.vault = vault
        self.index = index
        self.max_file_bytes = max_file_bytes
        self.state = state
        self.clock = clock
        self.last_sync: float | None = None
        # Called, outside the vault lock, with the files whose content a sync found changed (not by this
        # Syncer's own writes, which are indexed as they land); Memory wires the reconcile of outside writes.
        self.on_changed: Callable[[list[str]], None] | None = None
        # The text and documents this process last indexed of a few big files, for a line-diff update.
        self.last = LastIndexed()
        # Shows the progress of a sync that fills an empty index with a big job (a terminal's bar: the CLI
        # sets it when stderr is one); a rebuild's caller passes its own.
        self.bulk_progress: BulkProgress | None = None

    @property
    def manifest_path(self) -> Path:
        """Kept inside the index folder, so deleting the index also forgets what it held."""
        self.index.open()
        assert self.index.catalog is not None
        return self.index.catalog.path

    def manifest(self) -> dict[str, ManifestEntry]:
        """What the index holds of each file, as any process left it."""
        return self.index.manifest()

    # -- syncing --------------------------------------------------------------
    def pending(self, *, racy: bool = True) -> SyncPlan:
        """What differs between disk and the index right now (no lock, no writes).

        racy=False leaves out files that are only re-checked because they were written moments ago or
        could not be read last time.
        """
        return plan(self.vault.scan(), self.manifest(), racy=racy)

    def last_synced(self) -> float | None:
        """When any process last changed the index, or this one last found it up to date."""
        self.index.open()
        assert self.index.catalog is not None
        stamps = [stamp for stamp in (self.index.catalog.synced_at(), self.last_sync) if stamp is not None]
        return max(stamps) if stamps else None

    def sync(
        self,
        progress: Callable[[int, int], None] | None = None,
        only: Sequence[str] | None = None,
        exact: bool = False,
    ) -> SyncReport:
        """Make the index reflect the files on disk (or just `only` of them); cheap when nothing changed.

        exact=True says `only` are known to have changed (an inotify event named them): each is re-read
        and hashed whatever its stat says, since a rewrite within one mtime tick can keep the stat.
        """
        manifest = self.manifest()
        known = manifest if only is None else {rel: manifest[rel] for rel in only if rel in manifest}
        # `exact`: the caller knows which files changed (an inotify queue), so nothing is stat-ed first.
        todo = None if exact else plan(self.vault.scan(only), known)
        if todo is not None and not todo:
            self.last_sync = time.time()
            return SyncReport()
        try:
            # No file's lock: each file is read as it is, and committed only if no writer of it committed
            # meanwhile (see sync_locked), so a sync never waits for a save, nor a save for a sync.
            report = self.sync_locked(progress, only, exact)
        except StorageError:
            # A read-only or full state folder: if every planned file turns out to hold what the index
            # has (a racy re-check, a file still unreadable), the index is current and reads go on.
            if todo is None or todo.remove or not all(self._unchanged(rel, known.get(rel)) for rel in todo.check):
                raise
            return SyncReport()
        if report.indexed and self.on_changed is not None:
            self.on_changed(list(report.indexed))
        return report

    def sync_locked(
        self,
        progress: Callable[[int, int], None] | None = None,
        only: Sequence[str] | None = None,
        exact: bool = False,
    ) -> SyncReport:
        """The work of sync(): read what changed, then commit it under the index lock; `only` limits it to some files.

        A file that a writer re-indexed while this sync read it is left to that writer's commit and
        looked at again (a few rounds at most: a file rewritten faster than that is caught up by the next sync).
        """
        manifest = self.manifest()
        known = manifest if only is None else {rel: manifest[rel] for rel in only if rel in manifest}
        disk = self.vault.scan(only)
        todo = plan_changed(disk, known, only) if exact and only is not None else plan(disk, known)
        # Only files new to the index make a big job (a first sync, a rebuild): a changed one changed in a few
        # lines, as a rule, indexed here from the line diff long before workers would have started.
        changed = [disk[rel].size for rel in todo.check if rel not in known]
        if progress is None and not manifest and self.bulk_progress is not None and sum(changed) >= parallel.MIN_BYTES:
            with self.bulk_progress() as bar:
                return self.sync_locked(bar, only, exact)
        if parallel.workers_for(changed) > 1:
            try:
                return self._sync_in_workers(todo, {rel: disk[rel].size for rel in todo.check}, manifest, progress)
            except (parallel.WorkerFailed, OSError) as exc:
                # Nothing was committed; the same work is done here instead, only slower.
                log.warning("indexing in worker processes failed (%s); indexing in this process", exc)
        report = SyncReport()
        started = time.time_ns()
        for _round in range(SYNC_ROUNDS):
            done = self._sync_round(todo, manifest, progress)
            report.indexed += done.indexed
            report.removed += done.removed
            report.skipped.update(done.skipped)
            report.facts += done.facts
            if not done.superseded:
                break
            manifest = self.manifest()
            # A file whose overtaking commit read it after this sync began holds everything written before
            # the sync began, which is all a sync promises: looking again would only chase later writes
            # (under four agents and a script appending every 20 ms, every sync ran all its rounds).
            again = sorted(rel for rel in done.superseded if not _read_since(manifest.get(rel), started))
            if not again:
                break
            todo = plan_changed(self.vault.scan(again), manifest, again)
        self.last_sync = time.time()
        return report

    def _sync_round(
        self, todo: SyncPlan, manifest: Mapping[str, ManifestEntry], progress: Callable[[int, int], None] | None
    ) -> _Round:
        """Read the planned files and commit what changed, except files another writer committed meanwhile."""
        report = _Round()
        docs_by_path: dict[str, list[FactDoc]] = {}
        entries: dict[str, ManifestEntry] = {}
        texts: dict[str, str] = {}
        bases: dict[str, increment.Indexed] = {}
        for number, rel in enumerate(todo.check, 1):
            entry = self._look(rel, manifest.get(rel), docs_by_path, texts, bases, report)
            if entry is None:
                report.removed.append(rel)
            elif rel in docs_by_path or entry != manifest.get(rel):
                entries[rel] = entry
            if progress:
                progress(number, len(todo.check))
        report.removed.extend(todo.remove)
        if docs_by_path or report.removed or entries:
            read_against = {rel: manifest[rel] for rel in (*todo.check, *todo.remove) if rel in manifest}
            report.superseded = self.index.replace_files(docs_by_path, report.removed, entries, read_against)
            report.indexed = [rel for rel in report.indexed if rel not in report.superseded]
            report.removed = [rel for rel in report.removed if rel not in report.superseded]
            for rel, text in texts.items():
                if rel in report.superseded and rel in bases:
                    self.last.keep(rel, bases[rel])  # nothing committed: still the base of the next round's diff
                elif rel not in report.superseded and len(docs_by_path[rel]) >= increment.MIN_FACTS:
                    self.last.keep(rel, increment.Indexed(entries[rel].revision, text, tuple(docs_by_path[rel])))
        return report

    def _sync_in_workers(
        self,
        todo: SyncPlan,
        sizes: dict[str, int],
        manifest: Mapping[str, ManifestEntry],
        progress: Callable[[int, int], None] | None,
    ) -> SyncReport:
        """sync_locked for a big job: the files are indexed whole, on every core (see parallel)."""
        today = self.clock().date().isoformat()
        first_seen = {rel: self.state.first_seen(rel) for rel in sizes if source_of(rel) == "knowledge"}
        results = parallel.index_files(
            self.index, self.vault.root, sizes, manifest, self.max_file_bytes, first_seen, today, progress
        )
        report = SyncReport()
        for result in results:
            for rel, keys in result.new_keys.items():
                self.state.note_first_seen(rel, keys, today)
            report.indexed.extend(result.indexed)
            report.removed.extend(rel for rel, entry in result.entries.items() if entry is None)
            report.skipped.update(result.skipped)
            report.facts += result.facts
        if todo.remove:
            self.index.replace_files({}, todo.remove)
            report.removed.extend(todo.remove)
        report.indexed.sort()
        self.last_sync = time.time()
        return report

    def _look(
        self,
        rel: str,
        old: ManifestEntry | None,
        docs_by_path: dict[str, list[FactDoc]],
        texts: dict[str, str],
        bases: dict[str, increment.Indexed],
        report: SyncReport,
    ) -> ManifestEntry | None:
        """Read one file; index just its changed lines, or queue its facts, text and the base they came from.

        None when it vanished.
        """
        before = self.last.take(rel)
        read: list[str] = []

        def facts(rel: str, text: str) -> list[FactDoc]:
            read.append(text)
            return []

        looked = look(self.vault.read_file, rel, old, self.max_file_bytes, facts)
        if looked.skipped:
            report.skipped[rel] = looked.skipped
        if looked.docs is None or looked.entry is None:
            if before is not None and looked.entry is not None and looked.entry.revision == before.revision:
                self.last.keep(rel, before)  # the same bytes: still the base of the next update
            return looked.entry
        # A text cut short at the size cap diffs as well as a whole one.
        docs, committed = self._documents(rel, before, looked.entry, read[0]) if read else ([], False)
        if looked.indexed:
            report.indexed.append(rel)
            report.facts += len(docs)
        if committed:
            return old  # the manifest entry went with the commit
        docs_by_path[rel] = docs
        if read:
            texts[rel] = read[0]
        if before is not None:
            bases[rel] = before
        return looked.entry

    def _unchanged(self, rel: str, old: ManifestEntry | None) -> bool:
        """Whether a file still holds what the index recorded of it (same stat and bytes, or unreadable as before)."""
        if old is None:
            return False
        path = self.vault.root / rel
        try:
            stat = path.stat()
            data = self.vault.read_bytes(rel)
        except OutsideVault:
            return False  # swapped for a link out of the vault since the scan: the index must drop it
        except OSError as exc:
            return old.skipped == unreadable(exc)
        return (stat.st_mtime_ns, stat.st_size) == (old.mtime_ns, old.size) and content_hash(data) == old.revision

    def reindex_text(self, rel: str, data: bytes) -> None:
        """Index bytes wolfmem itself just wrote, under the caller's lock of that file, with no re-read.

        When this process indexed the file's previous text, only the lines that changed are indexed
        (`search.increment`); otherwise, or when that cannot be exact, the file is built whole.
        """
        stat = (self.vault.root / rel).stat()
        text, note = decode_note(data, self.max_file_bytes)
        # Stamped no later than the bytes landed (their mtime), as a read's entry is stamped before the read.
        checked = min(time.time_ns(), stat.st_mtime_ns)
        entry = ManifestEntry(stat.st_mtime_ns, stat.st_size, content_hash(data), checked, note)
        docs, committed = self._documents(rel, self.last.take(rel), entry, text) if text is not None else ([], False)
        if committed:
            return
        self.index.replace_files({rel: docs}, [], {rel: entry})
        if text is not None and len(docs) >= increment.MIN_FACTS:
            self.last.keep(rel, increment.Indexed(entry.revision, text, tuple(docs)))

    def _documents(
        self, rel: str, before: increment.Indexed | None, entry: ManifestEntry, text: str
    ) -> tuple[list[FactDoc], bool]:
        """rel's documents for `text`, and whether they are committed already (then they are only counted:
        a kept document may carry the line it was built at, `increment.Indexed`).

        With `before` (what this process last indexed of rel), only the changed lines' documents are
        built (`search.increment`); when the index still holds `before`'s version, only they are
        committed, here. Otherwise, or when the line diff cannot be exact, the caller commits them whole.
        """
        if before is None:
            return self._facts(rel, text), False
        seen = self.state.first_seen(rel) if source_of(rel) == "knowledge" else {}
        today = self.clock().date().isoformat()
        found = increment.change(before, entry.revision, text, seen, today, rel)
        if found is None:
            return self._facts(rel, text), False
        change, new = found
        if new:
            self.state.note_first_seen(rel, new, today)
        if not self.index.apply_change(rel, change, entry, before.revision):
            return list(change.indexed.docs), False  # another process indexed another version meanwhile
        self.last.keep(rel, change.indexed)
        return list(change.indexed.built), True

    def _facts(self, rel: str, text: str) -> list[FactDoc]:
        """facts_of, with knowledge lines dated by first sight (recording today for new lines)."""
        seen = self.state.first_seen(rel) if source_of(rel) == "knowledge" else {}
        today = self.clock().date().isoformat()
        docs, new = dated_facts(rel, text, seen, today)
        if new:
            self.state.note_first_seen(rel, new, today)
        return docs

    def read_fresh(self, refresh: Callable[[], object], read: Callable[[], T]) -> T:
        """`refresh` the index, then `read` it; an index either finds damaged is refilled and read again, once.

        The damaged index has been moved aside and replaced by an empty one by then: a full sync
        indexes every file into it.
        """
        try:
            refresh()
            return read()
        except IndexDamaged as exc:
            log.info("re-indexing every file after %s", exc)
            self.sync()
            return read()

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Throw the index away and index every file again (writers' commits wait for it, under the index lock)."""
        with self.vault.lock(), self.index.writing():
            self.index.reset()
            return self.sync_locked(progress)

    def skipped(self) -> dict[str, str]:
        """Files the index holds no facts of, with the reason."""
        return {rel: entry.skipped for rel, entry in self.manifest().items() if entry.skipped}


def _read_since(entry: ManifestEntry | None, started_ns: int) -> bool:
    """Whether an index entry holds its file as read (or written) no earlier than `started_ns`."""
    return entry is not None and entry.checked_ns >= started_ns
