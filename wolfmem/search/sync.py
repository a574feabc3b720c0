"""Keep the index equal to the files: plan(disk, manifest) is pure; the Syncer does the I/O."""

from __future__ import annotations

import functools
import hashlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.search import parallel
from wolfmem.search.index import FactDoc, FactIndex
from wolfmem.storage.catalog import ManifestEntry
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import DiskFile, Vault, content_hash, episode_date, source_of

log = logging.getLogger(__name__)

# A file modified this close to when it was hashed may change again within the same mtime tick
# without its stat changing ("racily clean", as git calls it), so it is re-hashed until it is older.
RACY_WINDOW_NS = 2_000_000_000


@dataclass(frozen=True)
class SyncPlan:
    """Files whose stat changed (to read and hash) and files gone from disk (to drop)."""

    check: tuple[str, ...]
    remove: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.check or self.remove)


@dataclass
class SyncReport:
    """What one sync did."""

    indexed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    facts: int = 0


def plan(
    disk: Mapping[str, DiskFile], manifest: Mapping[str, ManifestEntry], *, racy: bool = True
) -> SyncPlan:
    """Decide which files need a look: new, stat changed, or (with racy) racily clean; and which are gone."""
    check = []
    for rel, seen in disk.items():
        entry = manifest.get(rel)
        if (
            entry is None
            or entry.mtime_ns != seen.mtime_ns
            or entry.size != seen.size
            or racy and entry.checked_ns - entry.mtime_ns < RACY_WINDOW_NS
        ):
            check.append(rel)
    remove = [rel for rel in manifest if rel not in disk]
    return SyncPlan(tuple(sorted(check)), tuple(sorted(remove)))


def plan_changed(disk: Mapping[str, DiskFile], manifest: Mapping[str, ManifestEntry], rels: Sequence[str]) -> SyncPlan:
    """The plan for files known to have changed: look at each one still on disk, drop the others."""
    return SyncPlan(
        tuple(sorted(rel for rel in rels if rel in disk)),
        tuple(sorted(rel for rel in rels if rel not in disk and rel in manifest)),
    )


def facts_of(rel: str, text: str, first_seen: Mapping[str, str] | None = None) -> list[FactDoc]:
    """The index documents of one file's text: one per fact, with its neighbours as context.

    A fact's date is its episode's day, or for knowledge the day wolfmem first saw the line.
    """
    parsed = markdown.parse(text)
    source = source_of(rel)
    day = episode_date(rel) or ""
    first_seen = first_seen or {}
    facts = parsed.facts
    docs: list[FactDoc] = []
    occurrences: dict[str, int] = {}
    for position, fact in enumerate(facts):
        digest = _text_digest(fact.text)
        occurrences[digest] = occurrences.get(digest, 0) + 1
        key = fact_key(fact.text)
        neighbours = [
            other.text
            for other in facts[max(0, position - 1): position + 2]
            if other is not fact and other.section == fact.section
        ]
        docs.append(
            FactDoc(
                doc_id=f"{rel}#{digest}.{occurrences[digest]}",
                path=rel,
                source=source,
                section=fact.section,
                line=fact.line,
                text=fact.text,
                date=day or first_seen.get(key, ""),
                context=" ".join(neighbours),
                key=key,
            )
        )
    return docs


@functools.lru_cache(maxsize=16384)
def _text_digest(text: str) -> str:
    """A fact's id within its file (remembered like fact_key: a save re-ids only the lines it changed)."""
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def decode_note(data: bytes, max_bytes: int) -> tuple[str | None, str]:
    """The text to index from a file's bytes, or None and why it cannot be indexed; a note on truncation."""
    if b"\x00" in data[:8192]:
        return None, "binary content"
    note = ""
    if len(data) > max_bytes:
        cut = data.rfind(b"\n", 0, max_bytes)
        data = data[: cut + 1 if cut > 0 else max_bytes]
        note = f"only the first {len(data):,} bytes are indexed"
    try:
        return data.decode("utf-8-sig"), note
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 ({exc.reason} at byte {exc.start})"


def _stat_of(manifest: Mapping[str, ManifestEntry], rel: str) -> tuple[int, int] | None:
    entry = manifest.get(rel)
    return None if entry is None else (entry.mtime_ns, entry.size)


@dataclass(frozen=True)
class Looked:
    """What reading one file found: its manifest entry (None: gone), its facts when they must be
    (re)indexed, whether it counts as indexed, and why it was skipped or cut short."""

    entry: ManifestEntry | None
    docs: list[FactDoc] | None = None
    indexed: bool = False
    skipped: str = ""


def look(
    root: Path, rel: str, old: ManifestEntry | None, max_bytes: int, facts: Callable[[str, str], list[FactDoc]]
) -> Looked:
    """Read one file and decide what the index needs of it (shared by the syncer and the bulk workers)."""
    path = root / rel
    stat = None
    try:
        stat = path.stat()
        data = path.read_bytes()
    except FileNotFoundError:
        return Looked(None)
    except OSError as exc:
        log.warning("skipped %s: cannot read it (%s)", rel, exc)
        why = f"cannot read: {exc.strerror or exc}"
        mtime_ns, size = (stat.st_mtime_ns, stat.st_size) if stat is not None else (0, -1)
        return Looked(ManifestEntry(mtime_ns, size, "", time.time_ns(), why), [], skipped=why)
    revision = content_hash(data)
    now = time.time_ns()
    if old is not None and old.revision == revision:
        still_racy = now - stat.st_mtime_ns < RACY_WINDOW_NS
        if still_racy and (old.mtime_ns, old.size) == (stat.st_mtime_ns, stat.st_size):
            return Looked(old)  # nothing learned yet; keep the manifest untouched
        return Looked(ManifestEntry(stat.st_mtime_ns, stat.st_size, revision, now, old.skipped))
    text, note = decode_note(data, max_bytes)
    if text is None:
        log.warning("skipped %s: %s", rel, note)
        return Looked(ManifestEntry(stat.st_mtime_ns, stat.st_size, revision, now, note), [], skipped=note)
    if note:
        # Named like a skipped file, so `reindex` and status say which file was cut short.
        log.warning("%s: %s", rel, note)
    entry = ManifestEntry(stat.st_mtime_ns, stat.st_size, revision, now, note)
    return Looked(entry, facts(rel, text), indexed=True, skipped=note)


def dated_facts(rel: str, text: str, seen: Mapping[str, str], today: str) -> tuple[list[FactDoc], set[str]]:
    """facts_of, knowledge lines dated by first sight: (the docs, the keys seen today for the first time)."""
    if source_of(rel) != "knowledge":
        return facts_of(rel, text), set()
    new = {fact_key(fact.text) for fact in markdown.parse(text).facts} - set(seen)
    if new:
        seen = {**seen, **dict.fromkeys(new, today)}
    return facts_of(rel, text, seen), new


class Syncer:
    """Brings one vault's index up to date with its files, under the vault lock."""

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

        racy=False leaves out files that are only re-checked because they were written moments ago.
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
        if not exact and not plan(self.vault.scan(only), known):
            self.last_sync = time.time()
            return SyncReport()
        with self.vault.lock():
            return self.sync_locked(progress, only, exact)

    def sync_locked(
        self,
        progress: Callable[[int, int], None] | None = None,
        only: Sequence[str] | None = None,
        exact: bool = False,
    ) -> SyncReport:
        """sync() for a caller that already holds the vault lock; `only` limits it to some files."""
        manifest = self.manifest()
        known = manifest if only is None else {rel: manifest[rel] for rel in only if rel in manifest}
        disk = self.vault.scan(only)
        todo = plan_changed(disk, known, only) if exact and only is not None else plan(disk, known)
        # Only new or changed files count towards a big job: racily clean ones are usually unchanged.
        changed = [disk[rel].size for rel in todo.check if (disk[rel].mtime_ns, disk[rel].size) != _stat_of(known, rel)]
        if parallel.workers_for(changed) > 1:
            try:
                return self._sync_in_workers(todo, {rel: disk[rel].size for rel in todo.check}, manifest, progress)
            except (parallel.WorkerFailed, OSError) as exc:
                # Nothing was committed; the same work is done here instead, only slower.
                log.warning("indexing in worker processes failed (%s); indexing in this process", exc)
        report = SyncReport()
        docs_by_path: dict[str, list[FactDoc]] = {}
        entries: dict[str, ManifestEntry] = {}
        for number, rel in enumerate(todo.check, 1):
            entry = self._look(rel, manifest.get(rel), docs_by_path, report)
            if entry is None:
                report.removed.append(rel)
            elif entry != manifest.get(rel):
                entries[rel] = entry
            if progress:
                progress(number, len(todo.check))
        report.removed.extend(todo.remove)
        if docs_by_path or report.removed or entries:
            self.index.replace_files(docs_by_path, report.removed, entries)
        self.last_sync = time.time()
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
        report: SyncReport,
    ) -> ManifestEntry | None:
        """Read one file; queue its facts if its content changed. None when it vanished."""
        looked = look(self.vault.root, rel, old, self.max_file_bytes, self._facts)
        if looked.skipped:
            report.skipped[rel] = looked.skipped
        if looked.docs is not None:
            docs_by_path[rel] = looked.docs
        if looked.indexed:
            report.indexed.append(rel)
            report.facts += len(looked.docs or ())
        return looked.entry

    def reindex_text(self, rel: str, data: bytes) -> None:
        """Index bytes wolfmem itself just wrote, under the caller's vault lock, with no re-read."""
        stat = (self.vault.root / rel).stat()
        text, note = decode_note(data, self.max_file_bytes)
        entry = ManifestEntry(stat.st_mtime_ns, stat.st_size, content_hash(data), time.time_ns(), note)
        self.index.replace_files({rel: self._facts(rel, text or "")}, [], {rel: entry})

    def _facts(self, rel: str, text: str) -> list[FactDoc]:
        """facts_of, with knowledge lines dated by first sight (recording today for new lines)."""
        seen = self.state.first_seen(rel) if source_of(rel) == "knowledge" else {}
        today = self.clock().date().isoformat()
        docs, new = dated_facts(rel, text, seen, today)
        if new:
            self.state.note_first_seen(rel, new, today)
        return docs

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Throw the index away and index every file again."""
        with self.vault.lock():
            self.index.reset()
            return self.sync_locked(progress)

    def skipped(self) -> dict[str, str]:
        """Files the index holds no facts of, with the reason."""
        return {rel: entry.skipped for rel, entry in self.manifest().items() if entry.skipped}
