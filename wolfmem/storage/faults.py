"""Faults of the machine that wolfmem can see without writing: for `wolfmem status` and `wolfmem doctor`.

Each is a `Fault` with what is wrong and how to fix it: a curated file that cannot be read, a vault or
state folder that is read-only, not writable or nearly full, a database or index that was found
damaged and replaced, and a write this process made whose bookkeeping failed.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from wolfmem.errors import WolfmemError, storage_error
from wolfmem.storage.db import ASIDE
from wolfmem.storage.vault import CURATED_PATHS, Vault
from wolfmem.storage.writer import VaultWriter

FaultKind = Literal["unreadable", "read-only", "not-writable", "low-space", "replaced", "bookkeeping"]

# Below this much free space a save, a curation or an index commit may fail half-way (and be refused).
LOW_SPACE_BYTES = 16 * 1024 * 1024

_LOST_WITH = {
    "state.db": "receipts, first-seen dates and job records started over (the vault's provenance log "
                "restores first-seen dates and which lines wolfmem wrote at the next job)",
    "history.sqlite": "the version history of the knowledge files started over",
    "index": "it was rebuilt from the files; nothing was lost",
}


@dataclass(frozen=True)
class Fault:
    """One problem: its kind, the file or folder, and a message that says how to fix it."""

    kind: FaultKind
    path: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return asdict(self)


def unreadable_files(vault: Vault) -> list[Fault]:
    """The curated files wolfmem cannot read (permissions, a damaged disk, not UTF-8); a missing one is fine."""
    faults = []
    for rel in CURATED_PATHS:
        try:
            vault.read_bytes(rel).decode("utf-8")
        except FileNotFoundError:
            continue
        except OSError as exc:
            faults.append(Fault("unreadable", rel, f"{storage_error(exc, 'read', rel)}; until then it is "
                                                   "not searchable and curation skips it"))
        except WolfmemError as exc:  # a link out of the vault, never followed
            faults.append(Fault("unreadable", rel, f"{exc}; curation skips it"))
        except UnicodeDecodeError as exc:
            faults.append(Fault("unreadable", rel, f"{rel} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
                                                   "fix its encoding and curation resumes"))
    return faults


def folder_faults(folder: Path, name: str) -> list[Fault]:
    """Whether a folder wolfmem writes to is on a read-only mount, not writable, or nearly full."""
    try:
        stat = os.statvfs(folder)
        free = shutil.disk_usage(folder).free
    except OSError:
        return []  # a folder that does not exist yet is created at the first write
    if stat.f_flag & os.ST_RDONLY:
        return [Fault("read-only", str(folder), f"the {name} {folder} is on a read-only file system; remount it "
                                                 "read-write (meanwhile reads work and writes are refused)")]
    if not os.access(folder, os.W_OK):
        return [Fault("not-writable", str(folder), f"the {name} {folder} is not writable by this user; check its "
                                                    "owner and mode (ls -ld); meanwhile writes are refused")]
    if free < LOW_SPACE_BYTES:
        return [Fault("low-space", str(folder), f"the {name} {folder} has {free // 1024} KB free; writes fail "
                                                 "when it is full, so free some space")]
    return []


def replaced_files(state_dir: Path) -> list[Fault]:
    """Databases and indexes found damaged and moved aside (`<name>.damaged-<stamp>`), newest first."""
    if not state_dir.is_dir():
        return []
    faults = []
    for aside in sorted(state_dir.glob(f"*.{ASIDE}-*"), reverse=True):
        if aside.name.endswith(("-wal", "-shm")):
            continue
        original, stamp = aside.name.split(f".{ASIDE}-", 1)
        lost = _LOST_WITH.get(original, "a new one was started")
        faults.append(Fault("replaced", str(aside), f"{original} was found damaged on {_when(stamp)} and moved "
                                                    f"aside to {aside.name}; {lost}. Delete the copy once "
                                                    "you have looked at it, and this note goes away"))
    return faults


def writer_faults(writer: VaultWriter) -> list[Fault]:
    """Writes this process landed whose history, provenance or index entry could not be recorded."""
    faults = []
    if writer.last_bookkeeping_error:
        faults.append(Fault("bookkeeping", "", f"written, but not recorded: {writer.last_bookkeeping_error}"))
    if writer.last_index_error:
        faults.append(Fault("bookkeeping", "", f"written, but not yet indexed: {writer.last_index_error}"))
    return faults


def check(vault: Vault, writer: VaultWriter | None = None) -> list[Fault]:
    """Every fault above for one vault, in a fixed order (the hook `wolfmem doctor` calls)."""
    faults = unreadable_files(vault)
    faults += folder_faults(vault.root, "vault")
    faults += folder_faults(vault.state_dir, "state folder")
    faults += replaced_files(vault.state_dir)
    if writer is not None:
        faults += writer_faults(writer)
    return faults


def _when(stamp: str) -> str:
    try:
        moment = datetime.strptime(stamp[:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return stamp
    return moment.isoformat(timespec="seconds")
