"""Filesystem primitives for replacing one file safely: atomic write, and compare-and-exchange.

Only `wolfmem.storage.writer` calls these for vault files; everything else writes through it. Each
works on a `Spot` (a name in an open folder) so the writer's temp file, rename and `.bak` all land
in the folder it checked, never through a folder swapped for a link since.

Two rules for files people edit. The *displaced* file (the inode an exchange swapped out) can be kept
under a hidden name instead of deleted, because a program that opened it before the swap (nano,
`cmd >> file`, vim without a backup) still writes into it; `storage/displaced.py` merges what
arrives there. And a new file never takes an inode number the caller says this file had recently,
so an editor comparing inode numbers always sees that the file changed.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import secrets
import stat
from collections.abc import Container
from pathlib import Path
from typing import Any

from wolfmem.storage.confine import Spot, open_regular, read_fd, spot_of

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC
DISPLACED_MARK = ".wolfmem-displaced-"


def displaced_name(name: str, revision: str) -> str:
    """The hidden name a displaced version of `name` is kept under: its revision, then a unique token."""
    return f".{name}{DISPLACED_MARK}{revision}-{secrets.token_hex(3)}"


def displaced_parts(name: str) -> tuple[str, str] | None:
    """(the file's name, the revision it held when displaced) of a displaced name; None for any other name."""
    if not name.startswith(".") or DISPLACED_MARK not in name:
        return None
    original, _, rest = name[1:].rpartition(DISPLACED_MARK)
    revision, _, token = rest.partition("-")
    return (original, revision) if original and revision and token else None


def atomic_write(path: Path | Spot, data: bytes) -> None:
    """Write bytes to path via a temp file in the same folder, fsync and rename."""
    with spot_of(path, create=True) as spot:
        tmp = _write_temp(spot, data)
        try:
            os.replace(tmp.name, spot.name, src_dir_fd=spot.folder, dst_dir_fd=spot.folder)
        except BaseException:
            _discard(tmp)
            raise
        _fsync(spot.folder)


def create_new(path: Path | Spot, data: bytes) -> bool:
    """Create path holding data, complete or not at all; False (and nothing written) if it already exists."""
    return replace_if_unchanged(path, b"", data) is None


def replace_if_unchanged(
    path: Path | Spot,
    expected: bytes,
    data: bytes,
    *,
    keep_as: str | None = None,
    avoid: Container[int] = (),
) -> tuple[bytes, bytes] | None:
    """Atomically put data at path if path still holds `expected` (b"" = missing or empty).

    None on success. Otherwise (what path holds now, the text to redo the edit on): usually the same
    bytes. Where the OS cannot swap two files atomically and another writer wrote in place in the
    last instant, path holds ours and the edit must be redone on theirs, so no one's write is lost.
    `keep_as` names where the displaced file is kept (in the same folder) instead of being deleted;
    the new file's inode number is none of `avoid` (where the filesystem allows, see `_write_temp`).
    """
    with spot_of(path) as spot:
        current = read_or_empty(spot)
        if current != expected:
            return current, current
        tmp = _write_temp(spot, data, avoid)
        try:
            if not current and _lstat(spot) is None:
                try:
                    # A link creates the file only if it is still absent.
                    os.link(tmp.name, spot.name, src_dir_fd=spot.folder, dst_dir_fd=spot.folder)
                except FileExistsError:
                    found = read_or_empty(spot)
                    return found, found
                return None
            try:
                exchanged = _exchange(tmp, spot)
            except FileNotFoundError:
                return b"", b""  # an editor renamed the file away since the read: the caller waits and redoes it
            if exchanged:
                # What was at path a moment ago is now at tmp: if it is not what we read, someone wrote since.
                if read_or_empty(tmp) == expected:
                    if keep_as is not None:
                        # A writer that opened the old file still writes there: keep it where it can be found
                        # (if the rename fails, the write still landed; the old file is deleted as before).
                        with contextlib.suppress(OSError):
                            os.rename(tmp.name, keep_as, src_dir_fd=spot.folder, dst_dir_fd=spot.folder)
                    return None
                # Swap their version back at once (later writes then land on it, not on ours) and retry.
                _exchange(tmp, spot)
                found = read_or_empty(spot)
                return found, found
            # No atomic exchange here: compare, replace, and catch in-place writes to the old file after.
            try:
                fd = open_regular(spot)
            except FileNotFoundError:
                return b"", b""
            with os.fdopen(fd, "rb") as old:
                if old.read() != expected:
                    found = read_or_empty(spot)
                    return found, found
                if keep_as is not None:
                    with contextlib.suppress(OSError):  # a filesystem without hard links keeps only the late re-read
                        os.link(spot.name, keep_as, src_dir_fd=spot.folder, dst_dir_fd=spot.folder)
                os.replace(tmp.name, spot.name, src_dir_fd=spot.folder, dst_dir_fd=spot.folder)
                old.seek(0)
                late = old.read()
            if late == expected:
                return None
            if keep_as is not None:
                _discard(spot.sibling(keep_as))  # the retry redoes the edit on `late`: nothing is left to merge
            return data, late
        finally:
            _discard(tmp)
            _fsync(spot.folder)


def _write_temp(spot: Spot, data: bytes, avoid: Container[int] = ()) -> Spot:
    """A new hidden temp file next to spot holding data, fsynced, with the mode of the file it will replace.

    Its inode number is none of `avoid`: a temp that got one is held (so the filesystem cannot hand the
    same number out again) while another is made, and deleted after. Held temps have different numbers,
    so this ends after at most len(avoid) of them.
    """
    rejected: list[Spot] = []
    try:
        tmp, fd = _create_temp(spot)
        while os.fstat(fd).st_ino in avoid:
            os.close(fd)
            rejected.append(tmp)
            tmp, fd = _create_temp(spot)
    finally:
        for spare in rejected:
            _discard(spare)
    try:
        with os.fdopen(fd, "wb") as handle:
            current = _lstat(spot)
            if current is not None and stat.S_ISREG(current.st_mode):
                os.fchmod(handle.fileno(), stat.S_IMODE(current.st_mode))
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        _discard(tmp)
        raise
    return tmp


def _create_temp(spot: Spot) -> tuple[Spot, int]:
    """A new empty hidden temp file next to spot, and its open descriptor."""
    while True:
        tmp = spot.sibling(f".{spot.name}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp.name, _TEMP_FLAGS, 0o600, dir_fd=spot.folder)
        except FileExistsError:
            continue


def read_only(spot: Spot) -> bool:
    """Whether the file at spot is there with no write bit in its mode: someone froze it (a rename would not care)."""
    found = _lstat(spot)
    return found is not None and stat.S_ISREG(found.st_mode) and not found.st_mode & 0o222


def _lstat(spot: Spot) -> os.stat_result | None:
    try:
        return os.stat(spot.name, dir_fd=spot.folder, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _discard(spot: Spot) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(spot.name, dir_fd=spot.folder)


def _fsync(folder: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(folder)


@functools.cache
def _renameat2() -> Any:
    """glibc's renameat2, or None where it is missing (macOS, Windows, old glibc)."""
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return function


def _exchange(a: Spot, b: Spot) -> bool:
    """Atomically swap two files (Linux RENAME_EXCHANGE); False where the OS or filesystem cannot."""
    function = _renameat2()
    if function is None:
        return False
    rename_exchange = 2
    if function(a.folder, os.fsencode(a.name), b.folder, os.fsencode(b.name), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), b.name)


def read_or_empty(path: Path | Spot) -> bytes:
    """A file's bytes (never through a link), or b"" when it does not exist."""
    try:
        with spot_of(path) as spot:
            return read_fd(open_regular(spot))[0]
    except FileNotFoundError:
        return b""
