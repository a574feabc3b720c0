"""Filesystem primitives for replacing one file safely: atomic write, and compare-and-exchange.

Only `wolfmem.storage.writer` calls these for vault files; everything else writes through it.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import tempfile
from pathlib import Path
from typing import Any


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
    fsync_dir(path.parent)


def create_new(path: Path, data: bytes) -> bool:
    """Create path holding data, complete or not at all; False (and nothing written) if it already exists."""
    return replace_if_unchanged(path, b"", data) is None


def fsync_dir(folder: Path) -> None:
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
        fsync_dir(path.parent)


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
