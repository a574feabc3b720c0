"""Keep the index equal to the files: plan(disk, manifest) is pure; Syncer.apply does the I/O."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import markdown
from .facts import normalise
from .index import FactDoc, FactIndex
from .vault import DiskFile, Vault, atomic_write, content_hash, episode_date, source_of

log = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
# A file modified this close to when it was hashed may change again within the same mtime tick
# without its stat changing ("racily clean", as git calls it), so it is re-hashed until it is older.
RACY_WINDOW_NS = 2_000_000_000


@dataclass(frozen=True)
class ManifestEntry:
    """What the index last saw of one file."""

    mtime_ns: int
    size: int
    revision: str
    checked_ns: int
    skipped: str = ""


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


def facts_of(rel: str, text: str, revision: str) -> list[FactDoc]:
    """The index documents of one file's text: one per fact, with its neighbours as context."""
    parsed = markdown.parse(text)
    source = source_of(rel)
    day = episode_date(rel) or ""
    facts = parsed.facts
    docs: list[FactDoc] = []
    occurrences: dict[str, int] = {}
    for position, fact in enumerate(facts):
        digest = hashlib.sha1(fact.text.encode()).hexdigest()[:12]
        occurrences[digest] = occurrences.get(digest, 0) + 1
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
                date=day,
                revision=revision,
                context=" ".join(neighbours),
                key=fact_key(fact.text),
            )
        )
    return docs


def fact_key(text: str) -> str:
    """The exact-duplicate key of a fact: a digest of its normalised text."""
    return hashlib.sha1(normalise(text).encode()).hexdigest()[:16]


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


class Syncer:
    """Brings one vault's index up to date with its files, under the vault lock."""

    def __init__(self, vault: Vault, index: FactIndex, max_file_bytes: int) -> None:
        self.vault = vault
        self.index = index
        self.max_file_bytes = max_file_bytes
        self._manifest: dict[str, ManifestEntry] = {}
        self._manifest_stamp: tuple[int, int, int] | None = None
        self.last_sync: float | None = None

    @property
    def manifest_path(self) -> Path:
        """Kept inside the index folder, so deleting the index also forgets what it held."""
        return self.index.directory / MANIFEST_NAME

    # -- manifest -------------------------------------------------------------
    def manifest(self) -> dict[str, ManifestEntry]:
        """The manifest as another process may have left it (re-read only when it changed)."""
        self.index.open()
        try:
            stat = self.manifest_path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        except FileNotFoundError:
            stamp = None
        if stamp != self._manifest_stamp:
            self._manifest = self._read_manifest()
            self._manifest_stamp = stamp
        return self._manifest

    def _read_manifest(self) -> dict[str, ManifestEntry]:
        try:
            raw = json.loads(self.manifest_path.read_text("utf-8"))
            return {rel: ManifestEntry(**entry) for rel, entry in raw["files"].items()}
        except (OSError, ValueError, KeyError, TypeError):
            return {}

    def _write_manifest(self, entries: dict[str, ManifestEntry]) -> None:
        data = json.dumps({"files": {rel: asdict(entry) for rel, entry in sorted(entries.items())}})
        atomic_write(self.manifest_path, data.encode())
        self._manifest = entries
        stat = self.manifest_path.stat()
        self._manifest_stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)

    # -- syncing --------------------------------------------------------------
    def pending(self, *, racy: bool = True) -> SyncPlan:
        """What differs between disk and the index right now (no lock, no writes).

        racy=False leaves out files that are only re-checked because they were written moments ago.
        """
        return plan(self.vault.scan(), self.manifest(), racy=racy)

    def last_synced(self) -> float | None:
        """When any process last changed the index (the manifest's mtime), or this one last synced."""
        try:
            written = self.manifest_path.stat().st_mtime
        except OSError:
            written = None
        stamps = [stamp for stamp in (written, self.last_sync) if stamp is not None]
        return max(stamps) if stamps else None

    def sync(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Make the index reflect the files on disk; cheap when nothing changed."""
        if not self.pending():
            self.last_sync = time.time()
            return SyncReport()
        with self.vault.lock():
            return self.sync_locked(progress)

    def sync_locked(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """sync() for a caller that already holds the vault lock."""
        manifest = dict(self.manifest())
        todo = plan(self.vault.scan(), manifest)
        report = SyncReport()
        docs_by_path: dict[str, list[FactDoc]] = {}
        for number, rel in enumerate(todo.check, 1):
            entry = self._look(rel, manifest.get(rel), docs_by_path, report)
            if entry is None:
                manifest.pop(rel, None)
                report.removed.append(rel)
            else:
                manifest[rel] = entry
            if progress:
                progress(number, len(todo.check))
        for rel in todo.remove:
            manifest.pop(rel, None)
            report.removed.append(rel)
        if docs_by_path or report.removed:
            self.index.replace_files(docs_by_path, report.removed)
        if manifest != self.manifest():
            self._write_manifest(manifest)
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
        path = self.vault.root / rel
        stat = None
        try:
            stat = path.stat()
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("skipped %s: cannot read it (%s)", rel, exc)
            report.skipped[rel] = f"cannot read: {exc.strerror or exc}"
            docs_by_path[rel] = []
            mtime_ns, size = (stat.st_mtime_ns, stat.st_size) if stat is not None else (0, -1)
            return ManifestEntry(mtime_ns, size, "", time.time_ns(), report.skipped[rel])
        revision = content_hash(data)
        now = time.time_ns()
        if old is not None and old.revision == revision:
            still_racy = now - stat.st_mtime_ns < RACY_WINDOW_NS
            if still_racy and (old.mtime_ns, old.size) == (stat.st_mtime_ns, stat.st_size):
                return old  # nothing learned yet; keep the manifest untouched
            return ManifestEntry(stat.st_mtime_ns, stat.st_size, revision, now, old.skipped)
        text, note = decode_note(data, self.max_file_bytes)
        if text is None:
            log.warning("skipped %s: %s", rel, note)
            report.skipped[rel] = note
            docs_by_path[rel] = []
            return ManifestEntry(stat.st_mtime_ns, stat.st_size, revision, now, note)
        if note:
            # Named like a skipped file, so `reindex` and status say which file was cut short.
            log.warning("%s: %s", rel, note)
            report.skipped[rel] = note
        docs = facts_of(rel, text, revision)
        docs_by_path[rel] = docs
        report.indexed.append(rel)
        report.facts += len(docs)
        return ManifestEntry(stat.st_mtime_ns, stat.st_size, revision, now, note)

    def reindex_text(self, rel: str, data: bytes) -> None:
        """Index bytes wolfmem itself just wrote, under the caller's vault lock, with no re-read."""
        manifest = dict(self.manifest())
        stat = (self.vault.root / rel).stat()
        revision = content_hash(data)
        text, note = decode_note(data, self.max_file_bytes)
        self.index.replace_files({rel: facts_of(rel, text or "", revision)}, [])
        manifest[rel] = ManifestEntry(stat.st_mtime_ns, stat.st_size, revision, time.time_ns(), note)
        self._write_manifest(manifest)

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Throw the index away and index every file again."""
        with self.vault.lock():
            self.index.reset()
            self._manifest, self._manifest_stamp = {}, None
            return self.sync_locked(progress)

    def skipped(self) -> dict[str, str]:
        """Files the index holds no facts of, with the reason."""
        return {rel: entry.skipped for rel, entry in self.manifest().items() if entry.skipped}
