"""The vault on disk: its layout, path confinement, atomic writes with backups, and the vault lock."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import filelock

from wolfmem.errors import NotAVault, OutsideVault, UsageError, VaultBusy
from wolfmem.storage.exchange import create_new

CURATED = ("people", "projects", "preferences", "technical", "decisions")
CURATED_PATHS = tuple(f"knowledge/{name}.md" for name in CURATED)
INDEXED_DIRS = ("knowledge", "episodes", "consolidated")
# What a fact can come from: a folder, or the archive of facts that left knowledge/ (kept in consolidated/).
SOURCES = (*INDEXED_DIRS, "archive")
LOCK_TIMEOUT_SECONDS = 60.0

_EPISODE_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
# Editor temp, swap and backup files are never vault notes. Sync-tool conflict copies are indexed
# (as custom notes, never curated), so what is in them can still be found.
_IGNORED_NAME = re.compile(r"(^\.|~$|\.bak$|\.swp$|\.swx$|\.tmp$|^#.*#$|\.orig$)")
_ARCHIVE_NAME = re.compile(r"^consolidated/archive-\d{4}-\d{2}\.md$")
_CONFLICT_NAME = re.compile(r"(\.sync-conflict-|\(conflicted copy|\.orig$)")

# Threads of one process share one lock object per vault, so the OS lock is re-entrant across them.
_THREAD_LOCKS: dict[str, threading.RLock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


class DiskFile(NamedTuple):
    """One markdown file found on disk, with the stat fields sync compares (a tuple: scans make many)."""

    rel: str
    mtime_ns: int
    size: int


def content_hash(data: bytes) -> str:
    """The revision of a file's bytes."""
    return hashlib.sha256(data).hexdigest()[:16]


def episode_date(rel: str) -> str | None:
    """The YYYY-MM-DD of an episode file's name, or None."""
    if not rel.startswith("episodes/"):
        return None
    match = _EPISODE_NAME.match(rel.rsplit("/", 1)[-1])
    return match.group(1) if match else None


def is_archive(rel: str) -> bool:
    """Whether a vault-relative path is one of the monthly archive files of facts that left knowledge/."""
    return bool(_ARCHIVE_NAME.match(rel))


def source_of(rel: str) -> str:
    """Which source a vault-relative path belongs to: knowledge, episodes, consolidated or archive."""
    return "archive" if is_archive(rel) else rel.split("/", 1)[0]


def is_conflict_copy(rel: str) -> bool:
    """Whether a file name looks like a sync tool's conflict copy."""
    return bool(_CONFLICT_NAME.search(rel.rsplit("/", 1)[-1]))


def is_indexable(rel: str) -> bool:
    """Whether a vault-relative path is a markdown note wolfmem indexes."""
    parts = rel.split("/")
    if len(parts) < 2 or parts[0] not in INDEXED_DIRS or not rel.endswith(".md"):
        return False
    return not any(_IGNORED_NAME.search(part) for part in parts)


class Vault:
    """A vault folder plus this machine's state folder for it."""

    def __init__(self, root: Path, state_root: Path) -> None:
        self.root = Path(os.path.abspath(root.expanduser()))
        real = os.path.realpath(self.root)
        key = hashlib.sha256(real.encode()).hexdigest()[:12]
        slug = re.sub(r"[^A-Za-z0-9_-]+", "-", self.root.name)[:32] or "vault"
        self.state_dir = state_root.expanduser() / "vaults" / f"{slug}-{key}"
        self._real_root = Path(real)

    # -- layout ---------------------------------------------------------------
    @property
    def knowledge_dir(self) -> Path:
        """The folder of curated and custom knowledge files."""
        return self.root / "knowledge"

    @property
    def episodes_dir(self) -> Path:
        """The folder of daily episode logs."""
        return self.root / "episodes"

    @property
    def consolidated_dir(self) -> Path:
        """The folder of curation logs and audit reports."""
        return self.root / "consolidated"

    @property
    def index_dir(self) -> Path:
        """The disposable Whoosh index."""
        return self.state_dir / "index"

    def exists(self) -> bool:
        """Whether the folder already is a vault."""
        return self.knowledge_dir.is_dir()

    def require(self) -> None:
        """Raise NotAVault unless the folder is a vault."""
        if not self.exists():
            raise NotAVault(self.root)

    def init(self) -> list[str]:
        """Create the layout from the templates, never overwriting; return what was created."""
        created: list[str] = []
        for folder in (self.root, self.knowledge_dir, self.episodes_dir):
            if folder.exists() and not folder.is_dir():
                raise UsageError(f"{folder} is a file, not a folder; a vault needs a folder there")
            if not folder.is_dir():
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise UsageError(f"cannot create {folder}: {exc.strerror or exc}") from None
                created.append(self._display(folder) + "/")
        for name in CURATED:
            target = self.knowledge_dir / f"{name}.md"
            if target.exists() or target.is_symlink():
                continue
            if create_new(target, template_text(name).encode("utf-8")):
                created.append(self._display(target))
        return created

    def _display(self, path: Path) -> str:
        return "." if path == self.root else path.relative_to(self.root).as_posix()

    # -- confinement ----------------------------------------------------------
    def resolve(self, rel: str) -> Path:
        """The absolute path of a vault-relative path, refusing anything that leaves the vault."""
        if not rel or "\x00" in rel:
            raise OutsideVault(rel or "''")
        candidate = Path(rel)
        if candidate.is_absolute() or rel.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", rel):
            raise OutsideVault(rel)
        if any(part == ".." for part in re.split(r"[\\/]", rel)):
            raise OutsideVault(rel)
        path = self.root / candidate
        real = Path(os.path.realpath(path))
        if real != self._real_root and self._real_root not in real.parents:
            raise OutsideVault(rel)
        return path

    def read_text(self, rel: str) -> str:
        """A vault file's text (UTF-8), read only inside the vault."""
        try:
            return self.resolve(rel).read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{rel} is not UTF-8 text; fix or move it") from None

    def rel(self, path: Path) -> str:
        """The posix vault-relative form of an absolute path inside the vault."""
        return path.relative_to(self.root).as_posix()

    # -- scanning -------------------------------------------------------------
    def scan(self, only: Iterable[str] | None = None) -> dict[str, DiskFile]:
        """Every indexable markdown file with its stat (or just those of `only` that exist).

        Symlinks leaving the vault are skipped.
        """
        if only is not None:
            return self._stat_some(only)
        found: dict[str, DiskFile] = {}
        visited: set[str] = set()
        for top in INDEXED_DIRS:
            self._scan_dir(self.root / top, top, found, visited)
        return found

    def _scan_dir(self, folder: Path, rel: str, into: dict[str, DiskFile], visited: set[str]) -> None:
        # A symlinked folder inside the vault is followed once; a link back up would loop forever.
        real = os.path.realpath(folder)
        if real in visited:
            return
        visited.add(real)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        # The hot path of every search: names are checked alone, since the parent folders passed already.
        for entry in entries:
            name = entry.name
            if name.startswith(".") or _IGNORED_NAME.search(name):
                continue
            try:
                if entry.is_symlink() and not self._inside(entry.path):
                    continue
                if entry.is_dir():
                    self._scan_dir(Path(entry.path), f"{rel}/{name}", into, visited)
                elif name.endswith(".md") and entry.is_file():
                    stat = entry.stat()
                    child = f"{rel}/{name}"
                    into[child] = DiskFile(child, stat.st_mtime_ns, stat.st_size)
            except OSError:
                continue

    def _stat_some(self, rels: Iterable[str]) -> dict[str, DiskFile]:
        found: dict[str, DiskFile] = {}
        for rel in rels:
            path = self.root / rel
            try:
                if path.is_symlink() and not self._inside(str(path)):
                    continue
                stat = path.stat()
            except OSError:
                continue
            found[rel] = DiskFile(rel, stat.st_mtime_ns, stat.st_size)
        return found

    def _inside(self, path: str) -> bool:
        real = Path(os.path.realpath(path))
        return self._real_root in real.parents

    def conflict_copies(self) -> list[str]:
        """Sync-tool conflict copies anywhere under knowledge/, which are never curated."""
        if not self.knowledge_dir.is_dir():
            return []
        return sorted(
            self.rel(path) for path in self.knowledge_dir.rglob("*") if is_conflict_copy(path.name)
        )

    # -- writing --------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
        """Hold the vault's single-writer lock (threads and processes); freed if the holder dies."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        lock_path = str(self.state_dir / "vault.lock")
        with _THREAD_LOCKS_GUARD:
            thread_lock = _THREAD_LOCKS.setdefault(lock_path, threading.RLock())
        if not thread_lock.acquire(timeout=timeout):
            raise VaultBusy(f"the vault {self.root} is busy in this process; try again")
        try:
            file_lock = filelock.FileLock(
                lock_path, thread_local=False, is_singleton=True, preserve_lock_file=True
            )
            try:
                file_lock.acquire(timeout=timeout, poll_interval=0.002)
            except filelock.Timeout:
                raise VaultBusy(
                    f"another process has held the vault lock of {self.root} for {timeout:.0f} s; "
                    "check `wolfmem status` and try again"
                ) from None
            try:
                yield
            finally:
                file_lock.release()
        finally:
            thread_lock.release()


def template_text(name: str) -> str:
    """The packaged template of a curated file."""
    return resources.files("wolfmem.knowledge_templates").joinpath(f"{name}.md").read_text("utf-8")
