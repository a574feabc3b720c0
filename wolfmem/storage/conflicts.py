"""Sync engines' conflict artefacts, merged back: conflict copies of notes, and git's conflict markers.

A conflict copy (see `core.syncnames`) of a knowledge file or an episode log is merged into its file with
`core.merge.merge_copy` (the union of both sides, less the facts the archive says left on purpose; a copy
of one of the archive's monthly files keeps every record of both),
through the writer, as a version of cause "put back". The copy is then moved out of the
searchable vault to `.wolfmem/conflicts/YYYY-MM/<its name>` (hidden, so never indexed, and synced, so a
person on any machine can open it or copy it back). A copy that is not UTF-8, or whose file is no note
wolfmem keeps versions of, is left where it is and listed by `status` as needing a person.

git's conflict markers in a knowledge file or an episode log are resolved by `core.markers.resolve`
where both sides are lists of facts (every hunk of an episode log); a hunk that is not is left as it is,
never indexed as facts (the parser empties marker lines), and listed by `status` until someone resolves it.
Every merge is logged at WARNING and recorded as a repair (`status`, the next agent call's notices).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from wolfmem.core.facts import fact_key
from wolfmem.core.markdown import content_lines, parse
from wolfmem.core.markers import resolve
from wolfmem.core.merge import merge_copy
from wolfmem.core.syncnames import conflict_name
from wolfmem.errors import WolfmemError
from wolfmem.storage.archive import Archive
from wolfmem.storage.vault import source_of
from wolfmem.storage.writer import Cause, Edit, VaultWriter, Written

log = logging.getLogger(__name__)

ARCHIVE_FOLDER = ".wolfmem/conflicts"
UNRESOLVED = "sync:unresolved"  # state record: file → why it needs a person (live: cleared once resolved)
MERGED = "conflict merged"
MARKERS = "markers resolved"  # = reconcile.Kind.MARKERS


@dataclass(frozen=True)
class SyncRepair:
    """A conflict copy merged into its file, or git's markers resolved in one: the repair record's shape."""

    kind: str
    path: str
    count: int
    at: str
    where: str
    message: str
    first: int = 0
    last: int = 0
    archived: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The record `status` and the notices read."""
        return asdict(self)


class SyncConflicts:
    """Merges one vault's conflict copies and resolves git's markers, keeping what cannot be for a person."""

    def __init__(self, writer: VaultWriter, archive: Archive, clock: Callable[[], datetime]) -> None:
        self.writer = writer
        self.archive = archive
        self.clock = clock

    # -- conflict copies -------------------------------------------------------------------------------
    def settle(self) -> list[SyncRepair]:
        """Merge every conflict copy under knowledge/ and episodes/ into its file, then archive it.

        Before the file's own check for an outside write (the merge's write is of cause "put back", which
        skips it): the engine's overwrite and its copy are one event, and the merge is its repair.
        """
        repairs: list[SyncRepair] = []
        for rel in self.writer.vault.conflict_copies():
            try:
                repair = self._merge_copy(rel)
            except (OSError, WolfmemError) as exc:  # busy, read-only: the next sync tries again
                log.warning("could not merge the conflict copy %s (%s); trying again later", rel, exc)
                continue
            if repair is not None:
                repairs.append(repair)
        return repairs

    def _merge_copy(self, rel: str) -> SyncRepair | None:
        name = conflict_name(rel)
        assert name is not None
        target = name.original
        if source_of(target) not in ("knowledge", "episodes", "archive") or not target.lower().endswith(".md"):
            self._needs_person(rel, f"a {name.engine} conflict copy of {target}, which wolfmem does not merge")
            return None
        data = self.writer.vault.read_or_empty(rel)
        try:
            copy = data.decode("utf-8")
        except UnicodeDecodeError:
            self._needs_person(rel, f"a {name.engine} conflict copy of {target} that is not UTF-8 text")
            return None
        # The archive's records are never facts gone on purpose: both machines' records are kept, each once.
        gone = self._removed_on_purpose(target) if source_of(target) != "archive" else (lambda _line: False)

        def merge(current: str) -> Edit[int]:
            merged = merge_copy(current, copy, gone).text if current else copy
            return Edit(merged, len(set(content_lines(merged)) - set(content_lines(current))))

        written = self.writer.edit(target, merge, cause=Cause.MERGE, composed=False)
        archived = self._archive(rel, data)
        self._resolved(rel)
        added = written.detail or 0
        now = self.clock().isoformat(timespec="seconds")
        many = "s" if added != 1 else ""
        message = (f"{name.engine} conflict copy {rel} merged into {target} ({added} line{many} only the copy "
                   f"held put back); the copy is kept at {archived}")
        log.warning("%s", message)
        repair = SyncRepair(MERGED, target, added, now, f"file:{target}", message, archived=archived)
        self.writer.state.add_repair(target, repair.to_dict())
        return repair

    def _removed_on_purpose(self, rel: str) -> Callable[[str], bool]:
        """Whether a line is a fact the archive says left rel on purpose (on any machine: it is synced).

        Only its latest record for rel counts: a fact moved to another file, or saved again since, is no
        fact gone from this one.
        """
        left = self.archive.left(rel)

        def gone(line: str) -> bool:
            facts = parse(line).facts
            return bool(facts) and fact_key(facts[0].text) in left

        return gone

    def _archive(self, rel: str, data: bytes) -> str:
        """Move a merged copy to .wolfmem/conflicts/YYYY-MM/ (its name kept, numbered if taken); where it went."""
        name = rel.rsplit("/", 1)[-1]
        folder = f"{ARCHIVE_FOLDER}/{self.clock():%Y-%m}/{rel.rsplit('/', 1)[0]}"
        vault = self.writer.vault
        dest, number = f"{folder}/{name}", 1
        while vault.read_or_empty(dest):
            number += 1
            dest = f"{folder}/{number}-{name}"
        with vault.lock(), vault.spot(rel) as src, vault.spot(dest, create=True) as dst:
            if vault.read_or_empty(rel) == data:
                os.rename(src.name, dst.name, src_dir_fd=src.folder, dst_dir_fd=dst.folder)
        return dest

    # -- git's conflict markers -----------------------------------------------------------------------
    def markers(self, rel: str, text: str) -> list[SyncRepair]:
        """Resolve the hunks of rel (holding `text`) that are lists of facts; note the others for a person."""
        result = resolve(text, facts_only=source_of(rel) == "knowledge",
                         union=lambda current, copy, gone: merge_copy(current, copy, gone).text)
        if result.unresolved:
            hunks = ", ".join(f"lines {hunk.start}-{hunk.end}" for hunk in result.unresolved)
            self._needs_person(rel, f"git conflict markers around more than a list of facts ({hunks}); "
                                    "resolve them in an editor")
        else:
            self._resolved(rel)
        if not result.resolved:
            return []
        written: Written[None] = self.writer.edit(rel, lambda current: Edit(result.text) if current == text else None,
                                   cause=Cause.MERGE, composed=False)
        if not written.changed:
            return []  # changed again meanwhile: the next look resolves that version
        now = self.clock().isoformat(timespec="seconds")
        many = "s" if result.resolved != 1 else ""
        message = (f"{result.resolved} git conflict hunk{many} in {rel} resolved by keeping both sides' lines "
                   "(the marker lines removed)")
        log.warning("%s", message)
        repair = SyncRepair(MARKERS, rel, result.resolved, now, f"file:{rel}", message)
        self.writer.state.add_repair(rel, repair.to_dict())
        return [repair]

    # -- what needs a person ---------------------------------------------------------------------------
    def unresolved(self) -> dict[str, str]:
        """Files whose sync conflicts wolfmem could not merge, and why (for `status` and `doctor`)."""
        with contextlib.suppress(WolfmemError):
            record = self.writer.state.run_record(UNRESOLVED) or {}
            return {rel: why for rel, why in record.items() if isinstance(why, str) and self._exists(rel)}
        return {}

    def _exists(self, rel: str) -> bool:
        try:
            self.writer.vault.read_bytes(rel)
        except (OSError, WolfmemError):
            return False
        return True

    def _needs_person(self, rel: str, why: str) -> None:
        found = self.unresolved()
        if found.get(rel) != why:
            log.warning("%s: %s", rel, why)
            self.writer.state.put_run_record(UNRESOLVED, {**found, rel: why})

    def cleared(self, rel: str) -> None:
        """rel holds no conflict markers now (a person resolved them, or never had any)."""
        self._resolved(rel)

    def _resolved(self, rel: str) -> None:
        found = self.unresolved()
        if rel in found:
            del found[rel]
            self.writer.state.put_run_record(UNRESOLVED, found)
