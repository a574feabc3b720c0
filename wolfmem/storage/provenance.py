"""What curation must know travels with the vault: `.wolfmem/provenance/<machine>/<YYYY-MM>.jsonl`.

Curation needs two facts about each knowledge line that no file shows: whether wolfmem wrote it (a
line a person wrote is kept word for word) and the day it was first seen (the newest evidence wins).
Each machine keeps both in its state folder and queues every change in an outbox there; `publish`
appends the queue to this machine's own log in the vault, through the writer. `absorb` reads every
machine's log back into this machine's state before a job runs, so a machine that takes over curation
knows what the others wrote.

The logs are built to survive sync tools: each machine appends only to its own files, so two
machines never write one file; a line is one self-contained JSON record, so a cut-off or merged file
loses at most its broken lines; every file under the folder is read, conflict copies included; and
the merge is order-free: a fact's first-seen day is the earliest any machine saw, and a line is
wolfmem's when the newest record naming it (by wall time, then machine) says so. Lines are named by a
hash of their text, never by their words, so what a person deletes from a note is not kept here.

    {"at": 1796045362.46, "path": "knowledge/people.md", "own": ["ae030a32f1f546fd"], "drop": []}
    {"at": 1796045362.47, "path": "knowledge/people.md", "seen": {"3f2c9a1b0d4e5f67": "2026-11-04"}}
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, TypeGuard

from wolfmem.cancellation import shielded
from wolfmem.core.markdown import content_lines
from wolfmem.errors import WolfmemError
from wolfmem.storage.state import StateStore, line_hash
from wolfmem.storage.writer import Cause, VaultWriter

log = logging.getLogger(__name__)

PROVENANCE_DIR = ".wolfmem/provenance"
# Saves in a burst share one append; the rest wait in the outbox for the next change, job or close.
PUBLISH_SECONDS = 2.0
BATCH = 500

_HASH = re.compile(r"^[0-9a-f]{16}$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Claim:
    """The newest word on one line of one file: whether wolfmem wrote it, when, and which machine said so."""

    at: float
    machine: str
    own: bool


@dataclass
class Union:
    """Every machine's records merged: earliest first-seen days, and the newest claim on each line."""

    first_seen: dict[str, dict[str, str]] = field(default_factory=dict)
    claims: dict[str, dict[str, Claim]] = field(default_factory=dict)
    rejected: int = 0

    def add(self, record: Any, machine: str) -> None:
        """Merge one record (from any file: it is checked, and a malformed one is counted and dropped)."""
        checked = _checked(record)
        if checked is None:
            self.rejected += 1
            return
        at, path, seen, own, drop = checked
        days = self.first_seen.setdefault(path, {})
        for key, day in seen.items():
            if key not in days or day < days[key]:
                days[key] = day
        lines = self.claims.setdefault(path, {})
        for hashes, is_own in ((drop, False), (own, True)):
            for name in hashes:
                claim = Claim(at, machine, is_own)
                if name not in lines or _order(claim) > _order(lines[name]):
                    lines[name] = claim


def _order(claim: Claim) -> tuple[float, str, bool]:
    return claim.at, claim.machine, claim.own


def _checked(record: Any) -> tuple[float, str, dict[str, str], list[str], list[str]] | None:
    """A record's fields if every one has the right type and shape, else None (content from files is data)."""
    if not isinstance(record, dict):
        return None
    at, path = record.get("at"), record.get("path")
    seen, own, drop = record.get("seen", {}), record.get("own", []), record.get("drop", [])
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not _knowledge_path(path):
        return None
    if not isinstance(seen, dict) or not isinstance(own, list) or not isinstance(drop, list):
        return None
    if not all(isinstance(k, str) and _HASH.match(k) and _is_day(v) for k, v in seen.items()):
        return None
    if not all(isinstance(name, str) and _HASH.match(name) for name in own + drop):
        return None
    return float(at), path, seen, own, drop


def _after_last_line(text: str) -> Callable[[str], str]:
    """Append `text`, ending first a line cut off by a crash or a sync tool, so it costs only itself."""
    return lambda current: text if current.endswith("\n") or not current else "\n" + text


def _knowledge_path(path: Any) -> TypeGuard[str]:
    return (
        isinstance(path, str) and path.startswith("knowledge/") and path.endswith(".md")
        and ".." not in path.split("/") and "\\" not in path and len(path) < 300
    )


def _is_day(value: Any) -> bool:
    if not isinstance(value, str) or not _DAY.match(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


class Provenance:
    """Publishes this machine's provenance to the vault and absorbs every machine's."""

    def __init__(self, writer: VaultWriter, state: StateStore, machine: str) -> None:
        self.writer = writer
        self.state = state
        self.machine = machine
        self._publishing = threading.Lock()
        self._published_at = 0.0

    @property
    def folder(self) -> Path:
        """Where every machine's log lives in the vault."""
        return self.writer.vault.root / PROVENANCE_DIR

    def publish_soon(self) -> None:
        """Publish now unless this process published moments ago (then the next change, job or close does)."""
        if time.monotonic() - self._published_at >= PUBLISH_SECONDS:
            self.publish()

    def publish(self) -> int:
        """Append this machine's queued records to its log in the vault; how many. Faults leave them queued."""
        # One publisher at a time; a change made while publishing is picked up by the next call.
        if not self._publishing.acquire(blocking=False):
            return 0
        try:
            self._published_at = time.monotonic()
            # It follows a change that has landed: a caller who cancels now has not stopped that
            # change, and a log saying "cancelled; nothing was changed" would be untrue.
            with shielded():
                return self._publish()
        except WolfmemError as exc:
            log.warning("provenance not yet published to the vault (%s); it stays queued", exc)
            return 0
        finally:
            self._publishing.release()

    def _publish(self) -> int:
        total = 0
        while batch := self.state.outbox(BATCH):
            text = "".join(json.dumps(record, sort_keys=True) + "\n" for _, record in batch)
            rel = f"{PROVENANCE_DIR}/{self.machine}/{self.writer.clock():%Y-%m}.jsonl"
            self.writer.append(rel, _after_last_line(text), cause=Cause.PROVENANCE)
            self.state.clear_outbox(number for number, _ in batch)
            total += len(batch)
        return total

    # -- reading every machine's log back ------------------------------------------------------------
    def union(self) -> Union:
        """Every record in the vault's logs (conflict copies included) and this machine's queue, merged."""
        merged = Union()
        for machine, record in self._records():
            merged.add(record, machine)
        for _, record in self.state.outbox(limit=-1):
            merged.add(record, self.machine)
        if merged.rejected:
            log.warning("ignored %d malformed provenance record(s) under %s", merged.rejected, PROVENANCE_DIR)
        return merged

    def _records(self) -> Iterator[tuple[str, Any]]:
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.rglob("*")):
            if path.name.startswith(".") or ".jsonl" not in path.name or not path.is_file():
                continue  # the writer's temp files, stray notes
            machine = path.relative_to(self.folder).parts[0]
            try:
                lines = path.read_text("utf-8", errors="replace").splitlines()
            except OSError as exc:
                log.warning("cannot read provenance log %s (%s); skipped", path, exc.strerror)
                continue
            for line in lines:
                try:
                    yield machine, json.loads(line)
                except ValueError:
                    yield machine, None  # counted as malformed

    def absorb(self) -> list[str]:
        """Bring every machine's records into this machine's state; return the files whose dates changed.

        Only the lines a file holds now are settled: a claim on a line that is gone matters again only
        if the line comes back, and the next absorb sees it then.
        """
        merged = self.union()
        redated: list[str] = []
        for path in sorted(set(merged.first_seen) | set(merged.claims)):
            if merged.first_seen.get(path) and self.state.absorb_first_seen(path, merged.first_seen[path]):
                redated.append(path)
            claims = merged.claims.get(path)
            if not claims:
                continue
            try:
                text = self.writer.vault.read_bytes(path).decode("utf-8")
            except (OSError, UnicodeDecodeError, WolfmemError):
                continue  # unreadable now: settled once it can be read
            own, not_own = _settle(content_lines(text), claims)
            self.state.absorb_snapshot(path, own, not_own)
        self._reindex(redated)
        return redated

    def _reindex(self, paths: Iterable[str]) -> None:
        """Re-date the index's facts of files whose first-seen days moved earlier."""
        if self.writer.reindex is None:
            return
        for rel in paths:
            try:
                with self.writer.vault.lock(rel):
                    self.writer.reindex(rel, self.writer.vault.read_bytes(rel))
            except (OSError, WolfmemError) as exc:
                log.info("%s keeps its old dates in the index until its next change (%s)", rel, exc)


def _settle(lines: Iterable[str], claims: Mapping[str, Claim]) -> tuple[list[str], list[str]]:
    """Split a file's lines into wolfmem's and not wolfmem's, by the newest claim on each (unclaimed: neither)."""
    own: list[str] = []
    not_own: list[str] = []
    for line in lines:
        claim = claims.get(line_hash(line))
        if claim is not None:
            (own if claim.own else not_own).append(line)
    return own, not_own
