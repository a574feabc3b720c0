"""What curation has consumed: every episode entry it gave a curator, by digest, whatever day it is filed under.

An episode log is a day's file of `## HH:MM — headline` entries. `wolfmem log --when` appends to any
day's file and a person may edit any of them, so "curated through day D" cannot say what curation has
seen. Instead the coverage keeps, per episode file, the digest of each entry a successful run handed to
the curator, and a run takes the entries it has not seen yet, oldest file first, in batches that fit the
prompt's episode budget. An entry edited by hand has a new digest, so it is seen again.

The coverage also keeps the revision of each curated file as curation last saw or wrote it (a file that
changed since is looked at again) and the last day a run covered (facts saved after it are pointed out).
It lives in the vault, one file per machine, `.wolfmem/curation/<machine>.json`, so a machine that takes
over curation (see the lease) continues from what the previous one consumed. Each machine rewrites only
its own file and reads them all (conflict copies and the old shared `.wolfmem/curation.json` included)
as their union: what any machine consumed counts as consumed, so no sync engine ever has two writers of
one file to reconcile, and a double run of one period consumes the same entries once.

Curation's progress is kept in four places, each the truth for one question and none derivable from another:
- this coverage: *what content* curation has consumed (entries, file revisions, its last day). Only it
  decides what a run gives the curator; it travels with the vault.
- curation's run record (`outcome.record_run`, this machine's state): the *report* of the last run for
  `wolfmem status` (timings, usage, each file's outcome). Its `last_success_day` copies `through` so a
  lost or unreadable coverage file restarts from that date mark (`baseline`), not from nothing.
- the job record (`jobs.runner`, this machine's state): *which scheduled period* has run here, and the
  failures and backoff; it counts runs, not content (a period can succeed with entries left for later).
- the lease's `done` (`jobs.lease`, in the vault): the job records' periods *published to the other
  machines*, so a machine that takes over neither reruns a period nor leaves a day out.
The job runner turns the last period done (its record or the lease, the later) into the run's `since`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from wolfmem.core import edits, markdown
from wolfmem.curation.contract import Episode
from wolfmem.errors import WolfmemError
from wolfmem.storage.machine import machine_id
from wolfmem.storage.vault import content_hash
from wolfmem.storage.writer import Cause, VaultWriter

log = logging.getLogger(__name__)

COVERAGE_REL = ".wolfmem/curation.json"  # before per-machine files: still read, never written
COVERAGE_FOLDER = ".wolfmem/curation"
VERSION = 1
# 64 bits of SHA-256: a collision inside one day's log (a few dozen entries) is out of reach.
_DIGEST_CHARS = 16


@dataclass(frozen=True)
class EpisodeLog:
    """One readable episode file: its path, the day it is filed under, its text and its revision."""

    rel: str
    day: str
    text: str
    revision: str = ""

    @classmethod
    def of(cls, rel: str, day: str, data: bytes) -> EpisodeLog:
        """A log from its bytes (which must be UTF-8)."""
        return cls(rel, day, data.decode("utf-8"), content_hash(data))


@dataclass(frozen=True)
class Entry:
    """One entry of an episode log (or a piece of one too long for a single prompt)."""

    rel: str
    day: str
    digest: str
    text: str
    last_piece: bool = True  # the entry counts as consumed once its last piece has been given


def digest(text: str) -> str:
    """The digest of an entry's text, blind to trailing spaces and to blank lines around it."""
    lines = [line.rstrip() for line in text.strip("\r\n").splitlines()]
    return hashlib.sha256("\n".join(lines).strip("\n").encode("utf-8")).hexdigest()[:_DIGEST_CHARS]


def split_entries(log_file: EpisodeLog) -> list[Entry]:
    """A log's entries: each `##` section to the next, and any text before the first besides `#` headings."""
    lines = markdown.split_lines(log_file.text)
    starts = [section.line - 1 for section in markdown.parse(log_file.text).sections]
    chunks = [lines[: starts[0] if starts else len(lines)]]
    chunks += [lines[start:end] for start, end in zip(starts, [*starts[1:], len(lines)], strict=False)]
    entries = []
    for number, chunk in enumerate(chunks):
        text = "".join(chunk).strip("\r\n")
        if number == 0 and all(not line.strip() or line.startswith("# ") for line in chunk):
            continue  # only the day's title: nothing happened here
        if text.strip():
            entries.append(Entry(log_file.rel, log_file.day, digest(text), text))
    return entries


def batches(entries: list[Entry], budget: int) -> list[list[Entry]]:
    """Entries in order, in batches whose episodes (`as_episodes`) fit `budget` characters.

    An entry longer than a whole batch is cut at line ends into pieces, each in a batch of its own.
    """
    out: list[list[Entry]] = []
    current: list[Entry] = []
    used = 0
    for entry in (piece for whole in entries for piece in _pieces(whole, budget)):
        opens_log = not current or current[-1].rel != entry.rel
        # A log's first entry brings its title line; later ones a blank line between entries.
        cost = len(entry.text) + (len(_title(entry.day)) + 1 if opens_log else 2)
        if current and used + cost > budget:
            out.append(current)
            current, used = [], 0
            cost = len(entry.text) + len(_title(entry.day)) + 1
        current.append(entry)
        used += cost
    if current:
        out.append(current)
    return out


def _title(day: str) -> str:
    return edits.episode_title(day)


def _pieces(entry: Entry, budget: int) -> list[Entry]:
    limit = max(1, budget - len(_title(entry.day)) - 1)
    if len(entry.text) <= limit:
        return [entry]
    parts: list[str] = []
    for line in entry.text.splitlines(keepends=True):
        while len(line) > limit:  # one giant line: cut it
            parts.append(line[:limit])
            line = line[limit:]
        if parts and len(parts[-1]) + len(line) <= limit:
            parts[-1] += line
        else:
            parts.append(line)
    return [replace(entry, text=part, last_piece=n == len(parts) - 1) for n, part in enumerate(parts)]


def as_episodes(batch: Iterable[Entry]) -> tuple[Episode, ...]:
    """A batch as the curator's episodes: one per log, its entries in order."""
    grouped: dict[str, list[Entry]] = {}
    for entry in batch:
        grouped.setdefault(entry.rel, []).append(entry)
    return tuple(
        Episode(rel, entries[0].day, _title(entries[0].day) + "\n" + "\n\n".join(entry.text for entry in entries))
        for rel, entries in grouped.items()
    )


@dataclass(frozen=True)
class Coverage:
    """How far curation has got: the entries it consumed, the file revisions it saw, and its last day."""

    through: str | None = None
    files: dict[str, str] = field(default_factory=dict)  # curated file -> revision
    episodes: dict[str, list[str]] = field(default_factory=dict)  # episode log -> consumed digests
    # Episode log -> its revision when every entry in it had been consumed: it is not parsed again
    # until it changes (1,000 logs of 10 entries take 1.6 s to parse and under 1 ms to hash).
    read: dict[str, str] = field(default_factory=dict)
    # Curated file -> day -> facts and sections curation added that day, for the 30-day growth budget.
    added: dict[str, dict[str, int]] = field(default_factory=dict)
    # Curated file -> the last day a run settled it (written or unchanged): later hand lines are new evidence.
    settled: dict[str, str] = field(default_factory=dict)

    def pending(self, logs: Iterable[EpisodeLog], day: str) -> list[Entry]:
        """Entries not consumed yet in the logs filed up to `day`, oldest log first."""
        out = []
        for log_file in sorted(logs, key=lambda item: (item.day, item.rel)):
            if log_file.day <= day and self.read.get(log_file.rel) != log_file.revision:
                seen = set(self.episodes.get(log_file.rel, ()))
                out += [entry for entry in split_entries(log_file) if entry.digest not in seen]
        return out

    def consume(self, batch: list[Entry], day: str, logs: Iterable[EpisodeLog], existing: Iterable[str]) -> Coverage:
        """The coverage after a successful batch (from `logs`): its whole entries consumed and `day` covered."""
        episodes = {rel: list(digests) for rel, digests in self.episodes.items()}
        for entry in batch:
            if entry.last_piece and entry.digest not in episodes.setdefault(entry.rel, []):
                episodes[entry.rel].append(entry.digest)
        read = dict(self.read)
        touched = {entry.rel for entry in batch}
        for log_file in logs:
            if log_file.rel in touched and _all_in(log_file, episodes.get(log_file.rel, [])):
                read[log_file.rel] = log_file.revision
        # Deleted logs are forgotten, so the record grows only with the vault.
        alive = set(existing)
        through = max(filter(None, [self.through, day]))
        return replace(self, through=through, episodes=_only(episodes, alive), read=_only(read, alive))

    def added_since(self, since: str) -> dict[str, int]:
        """Facts and sections curation added to each file from `since` on."""
        return {rel: sum(n for day, n in days.items() if day >= since) for rel, days in self.added.items()}

    def grown(self, day: str, added: Mapping[str, int], since: str) -> Coverage:
        """The coverage with `added` (file -> count) noted on `day`, and days before `since` forgotten."""
        ledger = {rel: {d: n for d, n in days.items() if d >= since} for rel, days in self.added.items()}
        for rel, count in added.items():
            if count:
                ledger.setdefault(rel, {})[day] = ledger.get(rel, {}).get(day, 0) + count
        return replace(self, added={rel: days for rel, days in ledger.items() if days})

    def to_json(self) -> str:
        """The file's text."""
        data = {"version": VERSION, "through": self.through, "files": dict(sorted(self.files.items())),
                "episodes": dict(sorted(self.episodes.items())), "read": dict(sorted(self.read.items())),
                "added": dict(sorted(self.added.items())), "settled": dict(sorted(self.settled.items()))}
        return json.dumps(data, indent=1) + "\n"


def _all_in(log_file: EpisodeLog, digests: list[str]) -> bool:
    seen = set(digests)
    return all(entry.digest in seen for entry in split_entries(log_file))


def _only(mapping: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    return {key: value for key, value in mapping.items() if key in keys}


def baseline(through: str | None, logs: Iterable[EpisodeLog], revisions: Mapping[str, str]) -> Coverage:
    """Coverage for a vault curated before entries were tracked: what its date mark says was read.

    Logs filed before `through` were read whole; the log of `through` itself only if it has not changed
    since (its old revision matches). With no mark, nothing has been consumed: a first run sees it all.
    """
    if not through:
        return Coverage()
    episodes, read = {}, {}
    for log_file in logs:
        if log_file.day < through or (log_file.day == through and revisions.get(log_file.rel) == log_file.revision):
            episodes[log_file.rel] = [entry.digest for entry in split_entries(log_file)]
            read[log_file.rel] = log_file.revision
    return Coverage(through=through, episodes=episodes, read=read)


class CoverageFile:
    """Reads every machine's coverage in `<vault>/.wolfmem/curation/` as one, and writes this machine's."""

    def __init__(self, writer: VaultWriter, machine: str | None = None) -> None:
        self.writer = writer
        # The machine's id is kept in the state root, two folders above this vault's state folder.
        self.machine = machine or machine_id(writer.vault.state_dir.parent.parent)
        self.own_rel = f"{COVERAGE_FOLDER}/{self.machine}.json"
        self.path = writer.vault.root / self.own_rel

    def read(self) -> Coverage | None:
        """The union of every machine's coverage, or None when there is none readable (then it is rebuilt)."""
        found = [coverage for rel in self._files() if (coverage := self._read(rel)) is not None]
        return union(found) if found else None

    def _files(self) -> list[str]:
        vault = self.writer.vault
        rels = [COVERAGE_REL]
        for folder, pattern in ((".wolfmem", "curation*.json"), (COVERAGE_FOLDER, "*.json")):
            with contextlib.suppress(OSError, WolfmemError):
                rels += vault.names(folder, pattern)
        return sorted(set(rels))

    def _read(self, rel: str) -> Coverage | None:
        try:
            return _parse(json.loads(self.writer.vault.read_bytes(rel).decode("utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, WolfmemError, ValueError, TypeError, AttributeError) as exc:
            log.warning("ignoring unreadable %s (%s); the other coverage files still count", rel, exc)
            return None

    def write(self, coverage: Coverage) -> None:
        """Store the coverage in this machine's own file."""
        self.writer.put(self.own_rel, coverage.to_json(), cause=Cause.CURATION, backup=False)


def union(coverages: list[Coverage]) -> Coverage:
    """Several machines' coverage as one: every entry any consumed, the latest day, the newest revisions."""
    ordered = sorted(coverages, key=lambda coverage: coverage.through or "")
    episodes: dict[str, list[str]] = {}
    files: dict[str, str] = {}
    read: dict[str, str] = {}
    added: dict[str, dict[str, int]] = {}
    settled: dict[str, str] = {}
    for coverage in ordered:  # the one with the latest day last, so its revisions win
        for rel, digests in coverage.episodes.items():
            have = episodes.setdefault(rel, [])
            have += [digest for digest in digests if digest not in have]
        files.update(coverage.files)
        read.update(coverage.read)
        # Each machine's file carries what it read of the others too, so a day's count is the largest
        # any machine noted (never a sum, which would count a double run twice), and settled the latest day.
        for rel, days in coverage.added.items():
            ledger = added.setdefault(rel, {})
            for day, count in days.items():
                ledger[day] = max(ledger.get(day, 0), count)
        for rel, day in coverage.settled.items():
            settled[rel] = max(settled.get(rel, ""), day)
    return Coverage(ordered[-1].through, files, episodes, read, added, settled)


def _parse(data: Any) -> Coverage:
    through = data.get("through")
    files = data.get("files") or {}
    episodes = data.get("episodes") or {}
    read = data.get("read") or {}
    added = data.get("added") or {}
    settled = data.get("settled") or {}
    if through is not None and not isinstance(through, str):
        raise TypeError("'through' is not a date")
    return Coverage(
        through=through,
        files={str(rel): str(rev) for rel, rev in files.items()},
        episodes={str(rel): [str(d) for d in digests] for rel, digests in episodes.items()},
        read={str(rel): str(rev) for rel, rev in read.items()},
        added={str(rel): {str(day): int(n) for day, n in days.items()} for rel, days in added.items()},
        settled={str(rel): str(day) for rel, day in settled.items()},
    )
