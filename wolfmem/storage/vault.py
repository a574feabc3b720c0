"""The vault on disk: its layout, path confinement, atomic writes with backups, and the vault lock."""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import logging
import os
import re
import stat
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from wolfmem.core.syncnames import conflict_name, is_conflict_copy
from wolfmem.errors import (
    LinkOutside,
    NotAVault,
    OutsideVault,
    UsageError,
    storage_error,
)
from wolfmem.storage import locks
from wolfmem.storage.confine import Confined, EscapingLink, Spot, open_subdir
from wolfmem.storage.exchange import create_new

CURATED = ("people", "projects", "preferences", "technical", "decisions")
CURATED_PATHS = tuple(f"knowledge/{name}.md" for name in CURATED)
INDEXED_DIRS = ("knowledge", "episodes", "consolidated")
# What a fact can come from: a folder, or the archive of facts that left knowledge/ (kept in consolidated/).
SOURCES = (*INDEXED_DIRS, "archive")
LOCK_TIMEOUT_SECONDS = 60.0
# An index commit takes milliseconds; one waited for longer is behind a rebuild, and the write that
# wanted it lands anyway, its reindex left to the next sync.
INDEX_LOCK_SECONDS = 5.0

log = logging.getLogger(__name__)

_EPISODE_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$", re.IGNORECASE)
# Editor temp, swap and backup files are never vault notes; nor are sync engines' conflict copies, which
# are merged into their file and archived (storage/conflicts.py).
_IGNORED_NAME = re.compile(r"(^\.|~$|\.bak$|\.swp$|\.swx$|\.tmp$|^#.*#$|\.orig$)")
_ARCHIVE_NAME = re.compile(r"^consolidated/archive-\d{4}-\d{2}\.md$")



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


def _copy_of(rel: str) -> str:
    """The file a conflict copy is a copy of ("" when rel is no conflict copy)."""
    name = conflict_name(rel)
    return name.original if name is not None else ""


def source_of(rel: str) -> str:
    """Which source a vault-relative path belongs to: knowledge, episodes, consolidated or archive."""
    return "archive" if is_archive(rel) else rel.split("/", 1)[0]


def is_markdown(name: str) -> bool:
    """Whether a file name is a markdown note's: `.md` in any case (`NOTES.MD` is common on macOS and Windows)."""
    return name[-3:].lower() == ".md"


def is_indexable(rel: str) -> bool:
    """Whether a vault-relative path is a markdown note wolfmem indexes."""
    parts = rel.split("/")
    if len(parts) < 2 or parts[0] not in INDEXED_DIRS or not is_markdown(rel):
        return False
    return not _ignored(rel) and not is_conflict_copy(rel)


# Why a file a person may expect to be found is not indexed (`wolfmem status` names each).
NOT_MARKDOWN = "only .md files are indexed; rename it to end in .md if it holds notes"
OUTSIDE_INDEXED = "outside knowledge/, episodes/ and consolidated/, the folders wolfmem indexes"
MAX_NOT_INDEXED = 50


def _ignored(rel: str) -> bool:
    """Whether any part of a path is hidden, editor litter or a backup: never a note."""
    return any(_IGNORED_NAME.search(part) for part in rel.split("/"))


class Vault:
    """A vault folder plus this machine's state folder for it."""

    def __init__(self, root: Path, state_root: Path) -> None:
        self.root = Path(os.path.abspath(root.expanduser()))
        real = os.path.realpath(self.root)
        key = hashlib.sha256(real.encode()).hexdigest()[:12]
        slug = re.sub(r"[^A-Za-z0-9_-]+", "-", self.root.name)[:32] or "vault"
        self.state_dir = state_root.expanduser() / "vaults" / f"{slug}-{key}"
        self._confined = Confined(Path(real))

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
            try:
                if target.exists() or target.is_symlink():
                    continue
                with self.spot(f"knowledge/{name}.md") as spot:
                    if create_new(spot, template_text(name).encode("utf-8")):
                        created.append(self._display(target))
            except LinkOutside:
                break  # knowledge/ leads out of the vault: nothing is created there (status lists the link)
            except OSError:
                continue  # a read-only, full or unreadable vault still opens; the first write there says why
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
        # A link out of the vault anywhere on the way raises LinkOutside; nothing behind it is opened.
        # (A missing file is fine here: writers create it, readers answer NotFound.)
        with contextlib.suppress(OSError), self._confined.spot(rel):
            pass
        return self.root / candidate

    def read_text(self, rel: str) -> str:
        """A vault file's text (UTF-8), read only inside the vault."""
        try:
            return self.read_bytes(rel).decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{rel} is not UTF-8 text; fix or move it") from None

    def rel(self, path: Path) -> str:
        """The posix vault-relative form of an absolute path inside the vault."""
        return path.relative_to(self.root).as_posix()

    # -- confined reads (storage/confine.py: nothing outside the real root is opened) --------
    def read_bytes(self, rel: str) -> bytes:
        """A vault file's bytes, opened beneath the vault's root; a link out of the vault raises LinkOutside."""
        return self._confined.read(rel)[0]

    def read_or_empty(self, rel: str) -> bytes:
        """read_bytes, or b"" when the file does not exist."""
        try:
            return self.read_bytes(rel)
        except FileNotFoundError:
            return b""

    def size(self, rel: str) -> int:
        """A vault file's size in bytes (0 when it does not exist), without reading it."""
        try:
            return self.resolve(rel).stat().st_size
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise storage_error(exc, "read the size of", rel) from None

    def read_file(self, rel: str) -> tuple[bytes, os.stat_result]:
        """A vault file's bytes and the stat of exactly what was read."""
        return self._confined.read(rel)

    def names(self, folder: str, pattern: str = "*") -> list[str]:
        """The vault-relative paths in a vault folder whose names match a glob pattern, sorted."""
        return [f"{folder}/{name}" for name in self._confined.names(folder) if fnmatch.fnmatchcase(name, pattern)]

    def notes(self, folder: str, pattern: str = "*.md") -> Iterator[tuple[str, bytes]]:
        """Each matching file of a vault folder with its bytes.

        A link out of the vault or an unreadable file is skipped.
        """
        for rel in self.names(folder, pattern):
            try:
                yield rel, self.read_bytes(rel)
            except (OSError, OutsideVault) as exc:
                log.warning("skipped %s: %s", rel, exc)

    def spot(self, rel: str, *, create: bool = False) -> contextlib.AbstractContextManager[Spot]:
        """The open real folder of a vault file and its name, for the writer; its folders created when asked."""
        return self._confined.spot(rel, create=create)

    def escaping_links(self) -> list[EscapingLink]:
        """Symlinks in the vault's folders that lead out of it; wolfmem ignores them."""
        return self._confined.escaping_links((*INDEXED_DIRS, ".wolfmem"))

    # -- scanning -------------------------------------------------------------
    def scan(self, only: Iterable[str] | None = None) -> dict[str, DiskFile]:
        """Every indexable markdown file with its stat (or just those of `only` that exist).

        Symlinks leaving the vault are skipped.
        """
        if only is not None:
            return self._stat_some(only)
        found: dict[str, DiskFile] = {}
        visited: set[tuple[int, int]] = set()
        for top in INDEXED_DIRS:
            try:
                folder = self._confined.open_dir(top)
            except (OSError, OutsideVault):
                continue  # missing, or a link out of the vault
            self._scan_dir(folder, top, found, visited)
        return found

    def _scan_dir(self, folder: int, rel: str, into: dict[str, DiskFile], visited: set[tuple[int, int]]) -> None:
        """Scan one open folder, then close it; folders are opened by handle, so none is reached through a link out."""
        try:
            # A symlinked folder inside the vault is scanned once; a link back up would loop forever.
            info = os.fstat(folder)
            if (info.st_dev, info.st_ino) in visited:
                return
            visited.add((info.st_dev, info.st_ino))
            entries = list(os.scandir(folder))
            # The hot path of every search: names are checked alone, since the parent folders passed already.
            for entry in entries:
                name = entry.name
                if name.startswith(".") or _IGNORED_NAME.search(name):
                    continue
                child = f"{rel}/{name}"
                try:
                    if entry.is_symlink():
                        self._scan_link(child, into, visited)
                    elif entry.is_dir(follow_symlinks=False):
                        self._scan_dir(open_subdir(folder, name), child, into, visited)
                    elif is_markdown(name) and entry.is_file(follow_symlinks=False):
                        found = entry.stat(follow_symlinks=False)
                        into[child] = DiskFile(child, found.st_mtime_ns, found.st_size)
                except (OSError, OutsideVault):
                    continue
        except OSError:
            return
        finally:
            os.close(folder)

    def _scan_link(self, rel: str, into: dict[str, DiskFile], visited: set[tuple[int, int]]) -> None:
        """A symlink inside the vault is scanned where it points; one leading out raises LinkOutside."""
        found = self._confined.stat(rel)
        if stat.S_ISDIR(found.st_mode):
            self._scan_dir(self._confined.open_dir(rel), rel, into, visited)
        elif stat.S_ISREG(found.st_mode) and is_markdown(rel):
            into[rel] = DiskFile(rel, found.st_mtime_ns, found.st_size)

    def _stat_some(self, rels: Iterable[str]) -> dict[str, DiskFile]:
        found: dict[str, DiskFile] = {}
        for rel in rels:
            try:
                info = self._confined.stat(rel)
            except (OSError, OutsideVault):
                continue
            if stat.S_ISREG(info.st_mode):
                found[rel] = DiskFile(rel, info.st_mtime_ns, info.st_size)
        return found

    def not_indexed(self) -> list[tuple[str, str]]:
        """Files a person may expect a search to find that are not indexed, with why (the first MAX_NOT_INDEXED).

        Inside the indexed folders: every file that is not markdown. Elsewhere: markdown files at the
        vault's top level or one folder down. Hidden files, editor litter and `.bak` files are not named.
        """
        found: list[tuple[str, str]] = []
        for top in INDEXED_DIRS:
            for rel, info in self._confined.tree(top):
                if stat.S_ISREG(info.st_mode) and not is_markdown(rel) and not _ignored(rel):
                    found.append((rel, NOT_MARKDOWN))
        for rel in self._outside_notes():
            found.append((rel, OUTSIDE_INDEXED))
        return sorted(found)[:MAX_NOT_INDEXED]

    def _outside_notes(self) -> Iterator[str]:
        """Markdown files at the vault's top level and in its other top-level folders (not deeper)."""
        try:
            entries = list(os.scandir(self.root))
        except OSError:
            return
        for entry in entries:
            if _IGNORED_NAME.search(entry.name) or entry.name in INDEXED_DIRS:
                continue
            if entry.is_file(follow_symlinks=False) and is_markdown(entry.name):
                yield entry.name
            elif entry.is_dir(follow_symlinks=False):
                # Opened beneath the root, like every read: a folder swapped for a link out lists nothing.
                for child in self._confined.names(entry.name):
                    rel = f"{entry.name}/{child}"
                    if is_markdown(child) and not _IGNORED_NAME.search(child) and self._is_file(rel):
                        yield rel

    def _is_file(self, rel: str) -> bool:
        try:
            return stat.S_ISREG(self._confined.stat(rel).st_mode)
        except (OSError, OutsideVault):
            return False

    def conflict_copies(self) -> list[str]:
        """Sync engines' conflict copies under knowledge/ and episodes/, and of the archive's files (never notes;
        storage/conflicts.py)."""
        return sorted(rel for top in ("knowledge", "episodes", "consolidated") for rel, info in self._confined.tree(top)
                      if stat.S_ISREG(info.st_mode) and is_conflict_copy(rel)
                      and (top != "consolidated" or is_archive(_copy_of(rel)))
                      and not any(part.startswith(".") for part in rel.split("/")))

    # -- writing --------------------------------------------------------------
    def lock(self, rel: str | None = None, timeout: float = LOCK_TIMEOUT_SECONDS) -> AbstractContextManager[None]:
        """Hold one file's write lock (`rel`), or with no rel the whole vault's (a rebuild); see storage/locks.py.

        A write holds only its own file's lock, so a busy file slows only its own writers.
        """
        if rel is None:
            return locks.hold(self.state_dir / "vault.lock", timeout, f"the vault {self.root}")
        name = re.sub(r"[^A-Za-z0-9._-]", "_", rel.rpartition("/")[2])[:60]
        digest = hashlib.sha256(rel.encode("utf-8")).hexdigest()[:12]
        return locks.hold(self.state_dir / "locks" / f"{name}-{digest}.lock", timeout, rel)

    def index_lock(self, timeout: float = INDEX_LOCK_SECONDS) -> AbstractContextManager[None]:
        """Hold the search index's write lock, taken around each commit to it (never around reading files)."""
        return locks.hold(self.state_dir / "locks" / "index.lock", timeout, f"the search index of {self.root}")


def template_text(name: str) -> str:
    """The packaged template of a curated file."""
    return resources.files("wolfmem.knowledge_templates").joinpath(f"{name}.md").read_text("utf-8")
