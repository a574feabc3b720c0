"""Rewrites over the removal budget, kept for a person: `wolfmem curate apply` lands them, checked again.

A rewrite that would take more facts out of a file than the budget allows is never landed by a
night's run. It is kept in the state database (the `curate:staged` record beside the curate job's
own), the newest per file: the revision of the file it was computed from, the proposed text and
change list, the evidence of its run, and why it was staged. `wolfmem status` points to it.

`apply_staged` checks each one again against the file as it is now — every check except the budget,
which the person lifts by asking — archives what leaves and lands it through the writer. One whose
file changed since is dropped as stale: its text was computed from older lines, and the next
nightly run looks at the file afresh.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from wolfmem.curation.contract import Change, FileOutcome
from wolfmem.curation.landing import (
    RunEvidence,
    land,
    outcome_of,
    run_evidence,
    verdict_for,
)
from wolfmem.curation.validate import clean_changes
from wolfmem.errors import WolfmemError
from wolfmem.storage.services import VaultServices
from wolfmem.storage.vault import content_hash
from wolfmem.storage.writer import Cause

RECORD = "curate:staged"


@dataclass(frozen=True)
class StagedRewrite:
    """One file's rewrite waiting for a person."""

    rel: str
    day: str
    revision: str  # of the file the rewrite was computed from
    text: str
    changes: list[Change] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)


def staged(services: VaultServices) -> list[StagedRewrite]:
    """Every staged rewrite, one per file; a damaged record counts as empty (it only ever holds proposals)."""
    record = services.state.run_record(RECORD) or {}
    try:
        return [StagedRewrite(**{**item, "changes": clean_changes(item.get("changes"))})
                for item in record.get("files", {}).values()]
    except (TypeError, AttributeError):
        return []


def stage(services: VaultServices, items: list[StagedRewrite], settled: Iterable[str] = ()) -> None:
    """Keep these rewrites for a person (replacing older ones of the same files); forget those of `settled` files."""
    done = set(settled)
    kept = {item.rel: item for item in staged(services) if item.rel not in done}
    kept.update({item.rel: item for item in items})
    services.state.put_run_record(RECORD, {"files": {rel: asdict(item) for rel, item in kept.items()}})


def apply_staged(services: VaultServices, *, dry_run: bool = False) -> dict[str, Any]:
    """Check each staged rewrite again and land it (the budget lifted); report what became of each."""
    pending = staged(services)
    files: dict[str, FileOutcome] = {}
    diffs: dict[str, str] = {}
    base = run_evidence(services, budget=False)
    for item in pending:
        files[item.rel] = _apply_one(services, item, base, dry_run, diffs)
    if not dry_run:
        stage(services, [], settled=list(files))
    counts: dict[str, int] = {}
    for outcome in files.values():
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    tally = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    summary = f"{len(pending)} staged rewrite(s): {tally}" if pending else "nothing is staged"
    bad = {"rejected", "failed", "skipped-cas"}
    status = "noop" if not pending else "dry-run" if dry_run else "partial" if bad & set(counts) else "landed"
    return {"status": status, "summary": summary, "files": {rel: o.to_dict() for rel, o in files.items()},
            "diffs": diffs}


def _apply_one(
    services: VaultServices, item: StagedRewrite, base: RunEvidence, dry_run: bool, diffs: dict[str, str]
) -> FileOutcome:
    try:
        data = services.vault.read_or_empty(item.rel)
        current = data.decode("utf-8")
    except (OSError, UnicodeDecodeError, WolfmemError) as exc:
        return FileOutcome("failed", [f"cannot read {item.rel}: {exc}"])
    if content_hash(data) != item.revision:
        return FileOutcome("skipped-cas", [f"{item.rel} changed since this rewrite was staged on {item.day}; "
                                           "dropped, and the next nightly run looks at the file afresh"])
    run = RunEvidence(tuple(item.evidence), base.forgotten, budget=False)
    verdict = verdict_for(services, item.rel, current, item.text, item.changes, run)
    checked, text = outcome_of(verdict, current)
    if checked.status != "proposed" or dry_run:
        if checked.status == "proposed":
            diffs[item.rel] = "".join(difflib.unified_diff(
                current.splitlines(keepends=True), text.splitlines(keepends=True), f"a/{item.rel}", f"b/{item.rel}"))
        return checked
    return land(services, item.rel, text, verdict.departures, checked, base_revision=item.revision,
                cause=Cause.CURATION)
