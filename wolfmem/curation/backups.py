"""Going back: `wolfmem diff`/`restore` against `<file>.bak`, and `wolfmem history`/`restore --to` over kept versions.

Showing, diffing and bringing back lines of a kept version is `memory.recovery`.
"""

from __future__ import annotations

import difflib

from wolfmem.errors import NotFound
from wolfmem.memory.recovery import Recovery, curated_rel, decoded
from wolfmem.storage.history import Version
from wolfmem.storage.services import VaultServices
from wolfmem.storage.writer import Cause, Edit, Written


def _backup(services: VaultServices, name: str) -> tuple[str, bytes]:
    """The file's vault-relative path and its `.bak`'s bytes, read beneath the vault's root (never through a link)."""
    rel = curated_rel(name)
    services.vault.resolve(rel)
    try:
        return rel, services.vault.read_bytes(f"{rel}.bak")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise NotFound(
            f"{rel} has no backup ({rel}.bak); one is kept each time curation, an audit or a restore rewrites it"
        ) from None


def diff_backup(services: VaultServices, name: str) -> str:
    """A unified diff from `<file>.bak` to the current file; "" when they are identical."""
    rel, backup = _backup(services, name)
    old = decoded(backup, f"{rel}.bak")
    new = decoded(services.vault.read_or_empty(rel), rel)
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"{rel}.bak", rel
        )
    )


def restore_backup(services: VaultServices, name: str) -> str:
    """Put `<file>.bak` back in place through the writer, keeping what it replaces as the new `.bak`."""
    rel, backup = _backup(services, name)
    restored = decoded(backup, f"{rel}.bak")
    # A restore brings back old text: none of its lines count as newly composed by wolfmem.
    written: Written[None] = services.writer.edit(rel, lambda _current: Edit(restored), cause=Cause.RESTORE,
                                                  backup=True, composed=False)
    if not written.changed:
        return f"{rel} already matches {rel}.bak; nothing to restore"
    return f"restored {rel} from {rel}.bak; the version it replaced is now {rel}.bak (restore again to undo)"


def versions(services: VaultServices, name: str) -> list[Version]:
    """The kept versions of a knowledge file, newest first (`wolfmem history FILE`)."""
    rel = curated_rel(name)
    services.vault.resolve(rel)
    kept = services.history.versions(rel)
    if not kept and not services.vault.resolve(rel).is_file():
        # A file deleted since still lists its versions; a name that never was one is a typo, not "none yet".
        raise NotFound(f"{name} is not a file in the vault, and no versions of it are kept; name a knowledge file "
                       "such as people or knowledge/people.md")
    return kept


def restore_version(services: VaultServices, name: str, wanted: str) -> str:
    """Put a kept version back (by id, or the last one on or before a date), through the writer."""
    kept = Recovery(services.vault, services.history, services.writer).version(name, wanted)
    rel, version = kept.rel, kept.version
    written: Written[None] = services.writer.edit(
        rel, lambda _current: Edit(kept.text), cause=Cause.RESTORE, backup=True, composed=False
    )
    if not written.changed:
        return f"{rel} already matches version {version.id}; nothing to restore"
    return (f"restored {rel} to version {version.id} ({version.at}, {version.cause}); "
            f"the version it replaced is in `wolfmem history {name}` and {rel}.bak")
