"""Confinement: the vault is what lies inside its real root, and every file is opened beneath that root.

The rule: a path is walked one name at a time from an open handle on the vault's real root, each
step an `os.open(name, dir_fd=folder, O_NOFOLLOW)`, so every check is made on the very object that
is then read or written, and a file or folder swapped for a symlink between a check and its use
cannot lead outside. A symlink met on the way is followed only when its target stays under the
root; one that leads out raises `LinkOutside`, and nothing behind it is opened or created.

Needs `dir_fd` and `O_NOFOLLOW` (Linux and macOS have both). One window is left: a folder that is
*moved* out of the vault (not swapped for a link) while a walk holds it open is still read. That
takes a rename out of the vault by someone who can already read both places.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from wolfmem.errors import LinkOutside, OutsideVault, UsageError, shown

# As the kernel's own limit on links in one path (Linux MAXSYMLINKS).
MAX_LINKS = 40
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
# Non-blocking, so a FIFO named like a note cannot hang a read; it is refused as not a regular file.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
# What open() says when O_NOFOLLOW meets a link: ELOOP (Linux, macOS), EMLINK (FreeBSD), ENOTDIR with O_DIRECTORY.
_LINK_ERRORS = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})


@dataclass(frozen=True)
class Spot:
    """A file by name inside an open folder: calls on it stay in that folder, whatever is renamed or linked
    meanwhile."""

    folder: int  # an open directory descriptor, owned by whoever made the Spot
    name: str

    def sibling(self, name: str) -> Spot:
        """Another name in the same folder (the `.bak` next to a file)."""
        return Spot(self.folder, name)


@dataclass(frozen=True)
class EscapingLink:
    """A symlink in the vault whose target lies outside it: never followed, and listed by `wolfmem status`."""

    rel: str
    target: str


@contextlib.contextmanager
def spot_of(path: Path | Spot, *, create: bool = False) -> Iterator[Spot]:
    """A Spot as is, or one for a plain path outside any vault (wolfmem's state files, tests)."""
    if isinstance(path, Spot):
        yield path
        return
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    try:
        yield Spot(folder, path.name)
    finally:
        os.close(folder)


def open_regular(spot: Spot) -> int:
    """An open descriptor on the regular file at spot, never through a link (OSError otherwise)."""
    fd = os.open(spot.name, _FILE_FLAGS, dir_fd=spot.folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise IsADirectoryError(errno.EISDIR, "not a regular file", spot.name)
    return fd


def read_fd(fd: int) -> tuple[bytes, os.stat_result]:
    """Every byte of an open file and its stat, taken from the same descriptor; closes it."""
    with os.fdopen(fd, "rb") as handle:
        return handle.read(), os.fstat(handle.fileno())


class Confined:
    """Opens, reads and lists files beneath one vault's real root, following only links that stay inside."""

    def __init__(self, real_root: Path) -> None:
        self.real_root = str(real_root)

    # -- walking -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def spot(self, rel: str, *, create: bool = False) -> Iterator[Spot]:
        """The real folder holding rel's file (its folders created when asked) and the file's name."""
        folder, name = self._walk(rel, create=create)
        try:
            yield Spot(folder, name)
        finally:
            os.close(folder)

    def open_file(self, rel: str) -> int:
        """An open descriptor on the regular file rel names; FileNotFoundError, LinkOutside or OSError otherwise."""
        for _ in range(MAX_LINKS):
            with self.spot(rel) as spot:
                try:
                    return open_regular(spot)
                except OSError as exc:
                    # A link swapped in since the walk looked: walk again, and judge the link.
                    if exc.errno not in _LINK_ERRORS:
                        raise
        raise OSError(errno.ELOOP, "too many symbolic links", rel)

    def read(self, rel: str) -> tuple[bytes, os.stat_result]:
        """A file's bytes and the stat of exactly what was read."""
        return read_fd(self.open_file(rel))

    def stat(self, rel: str) -> os.stat_result:
        """The stat of what rel names (a file or a folder), links inside the vault followed."""
        with self.spot(rel) as spot:
            found = os.stat(spot.name, dir_fd=spot.folder, follow_symlinks=False)
        if stat.S_ISLNK(found.st_mode):  # swapped in since the walk looked
            raise OSError(errno.ELOOP, "a link appeared while it was looked at", rel)
        return found

    def open_dir(self, rel: str) -> int:
        """An open descriptor on the vault folder rel names."""
        with self.spot(rel) as spot:
            return open_subdir(spot.folder, spot.name)

    def names(self, rel: str) -> list[str]:
        """The names in a vault folder, sorted; [] when it is missing or leads outside."""
        try:
            folder = self.open_dir(rel)
        except (OSError, OutsideVault):
            return []
        try:
            return sorted(os.listdir(folder))
        finally:
            os.close(folder)

    def _walk(self, rel: str, *, create: bool) -> tuple[int, str]:
        """An open handle on the real folder that holds rel's last name, and that name (not a link)."""
        pending = deque(_parts(rel))
        folder = self._open_root()
        names: list[str] = []
        links = 0
        try:
            while True:
                if not pending:
                    raise IsADirectoryError(errno.EISDIR, "names the vault folder itself", rel)
                name = pending.popleft()
                if pending:
                    try:
                        child = os.open(name, _DIR_FLAGS, dir_fd=folder)
                    except FileNotFoundError:
                        if not create:
                            raise
                        with contextlib.suppress(FileExistsError):
                            os.mkdir(name, dir_fd=folder)
                        pending.appendleft(name)  # open what is there now, link or folder
                        continue
                    except OSError as exc:
                        mode = _lstat_mode(folder, name) if exc.errno in _LINK_ERRORS else None
                        if mode is None or not (stat.S_ISLNK(mode) or stat.S_ISDIR(mode)):
                            raise
                        # A link (judged below), or a folder again after a swap (looked at again).
                    else:
                        os.close(folder)
                        folder = child
                        names.append(name)
                        continue
                elif not _is_link(folder, name):
                    return folder, name
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, "too many symbolic links", rel)
                inside = self._link_target(names, name, rel, folder)
                if inside is None:  # swapped back since it was seen as a link: look again
                    pending.appendleft(name)
                    continue
                root = self._open_root()
                os.close(folder)
                folder, names = root, []
                pending.extendleft(reversed(inside))
        except BaseException:
            os.close(folder)
            raise

    def _open_root(self) -> int:
        return os.open(self.real_root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)

    def _link_target(self, names: list[str], name: str, rel: str, folder: int) -> list[str] | None:
        """Where a link points, as names under the root; LinkOutside when it leads out; None if it is no link now."""
        try:
            target = os.readlink(name, dir_fd=folder)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOENT):
                return None
            raise
        # realpath only turns the target into names: each is then walked again beneath the root
        # with O_NOFOLLOW, so a link swapped in after this look cannot lead anywhere unchecked.
        real = os.path.realpath(os.path.join(self.real_root, *names, target))
        inside = self.relative(real)
        if inside is None:
            raise LinkOutside(rel, "/".join([*names, name]), target)
        return [part for part in inside.split("/") if part]

    def relative(self, real: str) -> str | None:
        """The root-relative form of a real absolute path, or None when it lies outside the root."""
        if real == self.real_root:
            return ""
        if real.startswith(self.real_root.rstrip(os.sep) + os.sep):
            return real[len(self.real_root.rstrip(os.sep)) + 1:].replace(os.sep, "/")
        return None

    # -- listing -----------------------------------------------------------------------------
    def tree(self, top: str) -> Iterator[tuple[str, os.stat_result]]:
        """Every entry under a top-level folder (and the folder itself) with its lstat.

        Links are listed, never entered.
        """
        root = self._open_root()
        try:
            yield from _tree(root, top, top)
        finally:
            os.close(root)

    def escaping_links(self, tops: tuple[str, ...]) -> list[EscapingLink]:
        """Every symlink under the given top-level folders (or one of them) that leads out of the vault."""
        found = []
        for top in tops:
            for rel, info in self.tree(top):
                if not stat.S_ISLNK(info.st_mode):
                    continue
                try:
                    target = os.readlink(os.path.join(self.real_root, rel))
                except OSError:
                    continue
                real = os.path.realpath(os.path.join(self.real_root, os.path.dirname(rel), target))
                if self.relative(real) is None:
                    found.append(EscapingLink(rel, target))
        return found


def open_subdir(folder: int, name: str) -> int:
    """An open descriptor on a folder inside an open folder, never through a link."""
    return os.open(name, _DIR_FLAGS, dir_fd=folder)


def _tree(folder: int, name: str, rel: str) -> Iterator[tuple[str, os.stat_result]]:
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except OSError:
        return
    yield rel, info
    if not stat.S_ISDIR(info.st_mode):
        return
    try:
        child = open_subdir(folder, name)
    except OSError:
        return
    try:
        for entry in sorted(os.listdir(child)):
            yield from _tree(child, entry, f"{rel}/{entry}")
    finally:
        os.close(child)


def _lstat_mode(folder: int, name: str) -> int | None:
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None


def _is_link(folder: int, name: str) -> bool:
    mode = _lstat_mode(folder, name)
    return mode is not None and stat.S_ISLNK(mode)


def _parts(rel: str) -> list[str]:
    """The names of a vault-relative path; '..' and absolute paths are refused before any walk."""
    if not rel or "\x00" in rel or rel.startswith(("/", "\\")):
        raise OutsideVault(rel or "''")
    try:
        os.fsencode(rel)
    except UnicodeEncodeError:
        raise UsageError(f"{shown(rel)} is not a usable file name: it holds a lone surrogate such as \\ud800") from None
    parts = [part for part in rel.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        raise OutsideVault(rel)
    return parts
