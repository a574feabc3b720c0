"""The exceptions wolfmem raises. Every one says what went wrong and how to fix it."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path


class WolfmemError(Exception):
    """Base class of every error wolfmem raises on purpose."""


class UsageError(WolfmemError):
    """The caller passed an argument that cannot be used as given."""


class InvalidFact(UsageError):
    """A fact handed to memory_save is not one self-contained sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SecretRefused(InvalidFact):
    """A fact (or a curated rewrite) looks like it contains a credential."""

    def __init__(self, kind: str) -> None:
        super().__init__(
            f"refused: this looks like a secret ({kind}). Save where the secret lives "
            "(e.g. 'The Stripe key is in 1Password'), never the secret itself"
        )
        self.kind = kind


class FileTooLarge(UsageError):
    """A curated file is larger than wolfmem reads whole; saves and curation refuse it until it is split."""

    def __init__(self, rel: str, message: str) -> None:
        super().__init__(message)
        self.rel = rel


class OutsideVault(UsageError):
    """A path or ref points outside the vault (.., absolute path, symlink escape)."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(
            f"refused: {path!s} is outside the vault; pass a vault-relative path "
            "such as 'knowledge/people.md'"
        )
        self.path = str(path)


class LinkOutside(OutsideVault):
    """A path in the vault leads through a symlink to a place outside it; wolfmem never follows such a link."""

    def __init__(self, path: str, link: str, target: str) -> None:
        where = "is a symlink" if link == path else f"leads through the symlink {link}"
        UsageError.__init__(
            self,
            f"refused: {path} {where} to a place outside the vault, and wolfmem never follows a link "
            "out of the vault — move what it points to into the vault, or remove the link "
            "(`wolfmem status` lists such links)",
        )
        self.path = path
        self.link = link
        self.target = target


class NotAVault(UsageError):
    """A command that needs an existing vault was pointed at a folder that is not one."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(
            f"{path!s} is not a wolfmem vault (no knowledge/ folder); "
            f"run `wolfmem init --vault {path!s}` to create one"
        )
        self.path = str(path)


class NotFound(WolfmemError):
    """A ref names a file or section that does not exist."""


class IndexUnavailable(WolfmemError):
    """The search index could not be brought up to date with the files on disk."""


class IndexDamaged(IndexUnavailable):
    """A read found the search index's files damaged; the index was moved aside, to be rebuilt from the files."""


class VaultBusy(WolfmemError):
    """The vault lock could not be taken in time (another process holds it too long)."""


class ConfigError(UsageError):
    """A configuration file or environment variable holds an unknown key or a bad value."""


class LLMError(WolfmemError):
    """The configured LLM endpoint failed, refused, or answered with something unusable."""


class CurationRejected(WolfmemError):
    """A proposed rewrite of a knowledge file failed validation and was not written."""

    def __init__(self, path: str, reasons: list[str]) -> None:
        super().__init__(f"{path}: rewrite rejected: " + "; ".join(reasons))
        self.path = path
        self.reasons = reasons


class StorageError(WolfmemError):
    """The disk refused a read or write: full, read-only, permission denied, or another OS fault."""

    def __init__(self, message: str, path: str | Path = "", errno_code: int | None = None) -> None:
        super().__init__(message)
        self.path = str(path)
        self.errno = errno_code


class DatabaseDamaged(StorageError):
    """One of wolfmem's own SQLite files is corrupt or not wolfmem's; it is moved aside and rebuilt."""


class FileChanged(WolfmemError):
    """A file changed since it was read, so an edit computed from the old text was not written."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} changed since it was read; read it again and retry")
        self.path = path


_FIXES = {
    errno.ENOSPC: "the disk is full; free some space and try again",
    errno.EDQUOT: "the disk quota is used up; free some space and try again",
    errno.EROFS: "the file system is read-only; remount it read-write or point wolfmem at a writable folder",
    errno.EACCES: "permission denied; check the owner and mode of the file and its folder (ls -l)",
    errno.EPERM: "the operation is not permitted; check the file's owner, mode and attributes",
}


def storage_error(exc: OSError, action: str, path: str | Path) -> StorageError:
    """A StorageError that names what failed, where, and how to fix it."""
    fix = _FIXES.get(exc.errno or 0, exc.strerror or str(exc))
    return StorageError(f"cannot {action} {path!s}: {fix}", path, exc.errno)


_SQLITE_FIXES = {
    sqlite3.SQLITE_FULL: _FIXES[errno.ENOSPC],
    sqlite3.SQLITE_READONLY: "it is read-only (a read-only mount, folder or file); make wolfmem's state folder "
    "writable or point state_dir at a writable folder",
    sqlite3.SQLITE_CANTOPEN: "it cannot be opened; check that its folder exists and is yours (ls -l)",
    sqlite3.SQLITE_PERM: _FIXES[errno.EACCES],
    sqlite3.SQLITE_AUTH: _FIXES[errno.EACCES],
    sqlite3.SQLITE_IOERR: "the disk reported an I/O error; check that it is not full, failing or unplugged",
    sqlite3.SQLITE_CORRUPT: "it is damaged; wolfmem moves it aside and starts a new one on the next run",
    sqlite3.SQLITE_NOTADB: "it is damaged or not one of wolfmem's databases; "
    "wolfmem moves it aside and starts a new one",
}
_SQLITE_DAMAGE = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
_SQLITE_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def sqlite_code(exc: sqlite3.Error) -> int:
    """The primary SQLite result code of an error (0 when the driver gave none)."""
    return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


def database_error(exc: sqlite3.Error, path: str | Path) -> WolfmemError:
    """The WolfmemError for a SQLite failure on one of wolfmem's own files, saying how to fix it."""
    code = sqlite_code(exc)
    if code in _SQLITE_BUSY:
        return VaultBusy(f"{path!s} stayed locked by another wolfmem process; try again")
    fix = _SQLITE_FIXES.get(code, str(exc))
    kind = DatabaseDamaged if code in _SQLITE_DAMAGE else StorageError
    return kind(f"cannot use {path!s}: {fix}", path, _ERRNO_OF.get(code))


_ERRNO_OF = {sqlite3.SQLITE_FULL: errno.ENOSPC, sqlite3.SQLITE_READONLY: errno.EROFS, sqlite3.SQLITE_PERM: errno.EACCES}


def shown(value: object, cap: int = 80) -> str:
    """A value as an error message quotes it: its repr cut to `cap` characters; never raises (a 5,000-digit int)."""
    if isinstance(value, str) and len(value) > cap:
        value = value[:cap]  # no need to repr a megabyte to show its start
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        # int → str refuses over 4,300 digits; a deeply nested list overflows the stack.
        text = f"<a {type(value).__name__} too large to show>"
    return text if len(text) <= cap else text[: cap - 1] + "…"
