"""Which files a sync looks at: pure decisions from the files' stat and what the index last saw of them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from wolfmem.search.documents import RACY_WINDOW_NS, UNREADABLE
from wolfmem.storage.catalog import ManifestEntry
from wolfmem.storage.vault import DiskFile


@dataclass(frozen=True)
class SyncPlan:
    """Files whose stat changed (to read and hash) and files gone from disk (to drop)."""

    check: tuple[str, ...]
    remove: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.check or self.remove)


def plan(
    disk: Mapping[str, DiskFile], manifest: Mapping[str, ManifestEntry], *, racy: bool = True
) -> SyncPlan:
    """Decide which files need a look: new, stat changed, or (with racy) racily clean or unreadable last
    time; and which are gone."""
    check = []
    for rel, seen in disk.items():
        entry = manifest.get(rel)
        if (
            entry is None
            or entry.mtime_ns != seen.mtime_ns
            or entry.size != seen.size
            or (racy and (entry.checked_ns - entry.mtime_ns < RACY_WINDOW_NS or entry.skipped.startswith(UNREADABLE)))
        ):
            check.append(rel)
    remove = [rel for rel in manifest if rel not in disk]
    return SyncPlan(tuple(sorted(check)), tuple(sorted(remove)))


def plan_changed(disk: Mapping[str, DiskFile], manifest: Mapping[str, ManifestEntry], rels: Sequence[str]) -> SyncPlan:
    """The plan for files known to have changed: look at each one still on disk, drop the others."""
    return SyncPlan(
        tuple(sorted(rel for rel in rels if rel in disk)),
        tuple(sorted(rel for rel in rels if rel not in disk and rel in manifest)),
    )
