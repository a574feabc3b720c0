"""What a curation run did: each file's outcome over its rounds, the run's status and summary, and its record."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from wolfmem.curation.contract import Curator, Episode, FileOutcome, Proposal, SavedFact
from wolfmem.curation.coverage import Coverage, Entry
from wolfmem.storage.services import VaultServices

JOB = "curate"
SUCCESS = ("landed", "noop", "partial")


@dataclass
class RoundInputs:
    """What one round of a run reads: the curated files, the episodes and saves it covers, and the files to send."""

    files: dict[str, tuple[str, str]]  # rel -> (text, revision) of every readable curated file
    unreadable: dict[str, str]
    episodes: list[Episode]
    saves: list[SavedFact]
    targets: list[str]
    added: dict[str, int] = field(default_factory=dict)  # facts and sections added per file in the last 30 days
    # Per file: hand lines first seen from this day on are new evidence (a file never settled: all are).
    fresh_since: dict[str, str] = field(default_factory=dict)


@dataclass
class CurationResult:
    """The outcome of one run: landed, noop, partial, failed or dry-run, with per-file detail."""

    status: str
    day: str
    summary: str
    files: dict[str, FileOutcome] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    diffs: dict[str, str] = field(default_factory=dict)
    log_path: str | None = None
    entries: int = 0  # episode entries given to the curator
    batches: int = 0  # curator rounds: entries past the prompt's episode budget wait for the next round
    left: int = 0  # entries not consumed: a round failed, the budget was spent, or a dry run shows only the first
    stopped: str = ""  # why the run stopped before its last round: its LLM budget was spent

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        data = asdict(self)
        data["files"] = {rel: outcome.to_dict() for rel, outcome in self.files.items()}
        return data


@dataclass
class Tally:
    """What the rounds of one run add up to."""

    files: dict[str, FileOutcome] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    targets: set[str] = field(default_factory=set)
    logs: set[str] = field(default_factory=set)
    saves: int = 0
    entries: int = 0
    requests: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    rounds: int = 0  # rounds that carried episode entries
    settled: int = 0  # entries consumed

    def add(
        self, inputs: RoundInputs, files: dict[str, FileOutcome], proposal: Proposal, error: str, batch: list[Entry]
    ) -> None:
        """Count one round in."""
        for rel, outcome in files.items():
            self.files[rel] = combined(self.files.get(rel), outcome)
        for key, value in proposal.usage.items():
            self.usage[key] = self.usage.get(key, 0) + value
        self.targets.update(inputs.targets)
        self.logs.update(episode.rel for episode in inputs.episodes)
        self.saves += len(inputs.saves)
        self.entries += whole(batch)
        self.requests += proposal.requests
        self.seconds += proposal.seconds
        self.errors += [error] if error else []
        self.rounds += 1 if batch else 0


def whole(batch: list[Entry]) -> int:
    """How many entries a batch completes (an entry cut in pieces counts with its last piece)."""
    return sum(1 for entry in batch if entry.last_piece)


BAD = ("rejected", "failed", "skipped-cas")


def combined(before: FileOutcome | None, now: FileOutcome) -> FileOutcome:
    """One file's outcome over several rounds: a failure outweighs a write, and a write outweighs no change."""
    if before is None:
        return now

    def weight(outcome: FileOutcome) -> int:
        return 2 if outcome.status in BAD else 0 if outcome.status in ("unchanged", "skipped") else 1

    status = max(before, now, key=weight).status if weight(before) != weight(now) else now.status
    return FileOutcome(status, before.reasons + now.reasons, before.changes + now.changes,
                       now.revision or before.revision, before.archived + now.archived, before.added + now.added)


def run_status(files: dict[str, FileOutcome], targets: list[str], dry_run: bool) -> str:
    if dry_run:
        return "dry-run"
    states = [outcome.status for outcome in files.values()]
    # A file skipped as unreadable counts as not done: the run is retried, and covers it once readable.
    bad = [s for s in states if s in ("rejected", "failed", "skipped-cas", "skipped")]
    if not bad:
        return "landed" if "written" in states else "noop"
    if len(bad) == len(states) and "skipped-cas" not in bad:
        return "failed"
    return "partial"


def summarise(curator: Curator, result: CurationResult, tally: Tally, since: str) -> str:
    """One paragraph for the log and `wolfmem status`."""
    covered = f"from {since} through {result.day}"
    if not tally.targets and not any(o.status == "failed" for o in result.files.values()):
        return f"No-op: nothing new {covered} (no episodes, saves or hand edits); the curator was not called."
    counts: dict[str, int] = {}
    for outcome in result.files.values():
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    tally_text = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    sources = (f"{result.entries} episode entries from {len(tally.logs)} episode log(s) "
               f"and {tally.saves} new save(s)")
    rounds = f" in {result.batches} rounds" if result.batches > 1 else ""
    left = f"; {result.left} entries are left for the next run" if result.left else ""
    left += f" ({result.stopped})" if result.stopped else ""
    return (f"{curator.label} looked at {len(tally.targets)} file(s) {covered}, from {sources}{rounds}: "
            f"{tally_text}{left}.")


def record_run(
    services: VaultServices,
    result: CurationResult,
    coverage: Coverage,
    since: str,
    started_at: Any,
    started: float,
    tally: Tally,
    curator: Curator,
) -> None:
    """Store the report of this run that `wolfmem status` shows (how far curation has got is the coverage).

    One of curation's four progress keepers (see `curation.coverage`): the truth only for what the last
    run did; `last_success_day` is the coverage's date mark, kept for rebuilding a lost coverage file.
    """
    record = {
        "job": JOB,
        "status": result.status,
        "day": result.day,
        "since": since,
        "started_at": started_at.isoformat(),
        "finished_at": services.clock().isoformat(),
        "duration_seconds": round(time.monotonic() - started, 3),
        "curator_seconds": tally.seconds,
        "curator": curator.label,
        "requests": tally.requests,
        "usage": result.usage,
        "files": {rel: {"status": o.status, "reasons": o.reasons, "changes": len(o.changes)}
                  for rel, o in result.files.items()},
        "summary": result.summary,
        "error": "; ".join(tally.errors),
        "log_path": result.log_path,
        "entries": result.entries,
        "batches": result.batches,
        "left": result.left,
        "stopped": result.stopped,
        "last_success_day": coverage.through,
    }
    services.state.put_run_record(JOB, record)


