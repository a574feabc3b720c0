"""The vault on disk: its layout, path confinement, atomic writes with backups, and the vault lock."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import filelock

from .errors import NotAVault, OutsideVault, UsageError, VaultBusy

CURATED = ("people", "projects", "preferences", "technical", "decisions")
CURATED_PATHS = tuple(f"knowledge/{name}.md" for name in CURATED)
INDEXED_DIRS = ("knowledge", "episodes", "consolidated")
LOCK_TIMEOUT_SECONDS = 60.0

_EPISODE_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
# Editor temp, swap and backup files are never vault notes. Sync-tool conflict copies are indexed
# (as custom notes, never curated), so what is in them can still be found.
_IGNORED_NAME = re.compile(r"(^\.|~$|\.bak$|\.swp$|\.swx$|\.tmp$|^#.*#$|\.orig$)")
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


def source_of(rel: str) -> str:
    """Which source a vault-relative path belongs to: knowledge, episodes or consolidated."""
    return rel.split("/", 1)[0]


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
            with contextlib.suppress(FileExistsError):
                with open(target, "x", encoding="utf-8", newline="") as handle:
                    handle.write(template_text(name))
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

    def write_text(self, rel: str, text: str, *, backup: bool = False) -> bytes:
        """Atomically replace a vault file with text (its bytes as given); optionally keep `<file>.bak`."""
        path = self.resolve(rel)
        data = text.encode("utf-8")
        if backup and path.exists():
            atomic_write(path.with_name(path.name + ".bak"), path.read_bytes())
        atomic_write(path, data)
        return data


def atomic_write(path: Path, data: bytes) -> None:
    """Write bytes to path via a temp file in the same folder, fsync and rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def replace_if_unchanged(path: Path, expected: bytes, data: bytes) -> tuple[bytes, bytes] | None:
    """Atomically put data at path if path still holds `expected` (b"" = missing or empty).

    None on success. Otherwise (what path holds now, the text to redo the edit on): usually the same
    bytes. Where the OS cannot swap two files atomically and another writer wrote in place in the
    last instant, path holds ours and the edit must be redone on theirs, so no one's write is lost.
    """
    current = read_or_empty(path)
    if current != expected:
        return current, current
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if not current and not path.exists():
            try:
                os.link(tmp, path)  # create only if still absent
            except FileExistsError:
                found = read_or_empty(path)
                return found, found
            return None
        with contextlib.suppress(OSError):
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        if _exchange(tmp, path):
            # What was at path a moment ago is now at tmp: if it is not what we read, someone wrote since.
            if Path(tmp).read_bytes() == expected:
                return None
            # Swap their version back at once (later writes then land on it, not on ours) and retry.
            _exchange(tmp, path)
            found = read_or_empty(path)
            return found, found
        # No atomic exchange here: compare, replace, and catch in-place writes to the old file after.
        with open(path, "rb") as old:
            if old.read() != expected:
                found = read_or_empty(path)
                return found, found
            os.replace(tmp, path)
            old.seek(0)
            late = old.read()
        return None if late == expected else (data, late)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        _fsync_dir(path.parent)


@functools.cache
def _renameat2() -> Any:
    """glibc's renameat2, or None where it is missing (macOS, Windows, old glibc)."""
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return function


def _exchange(a: str | Path, b: str | Path) -> bool:
    """Atomically swap two paths (Linux RENAME_EXCHANGE); False where the OS or filesystem cannot."""
    function = _renameat2()
    if function is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if function(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), str(b))


def read_or_empty(path: Path) -> bytes:
    """A file's bytes, or b"" when it does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def template_text(name: str) -> str:
    """The packaged template of a curated file."""
    return resources.files("wolfmem.knowledge_templates").joinpath(f"{name}.md").read_text("utf-8")
