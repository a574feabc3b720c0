"""A curation run: gather what changed, ask the curator, land each file through validation and CAS, record.

`run(memory, curator, day)` covers the episodes and saves from the last
successful curation (exclusive) through `day`. A day with nothing new makes no
curator call. Each proposed file goes through `landing.apply_rewrite`, the one
landing path shared with the monthly audit. The vault lock is held only around
each write, never during an LLM call.
"""

from __future__ import annotations

import difflib
import logging
import time
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from typing import Any

from wolfmem.config import Config
from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.curation.contract import (
    CurationRequest,
    Curator,
    Episode,
    FileInput,
    FileOutcome,
    FileProposal,
    Proposal,
    SavedFact,
)
from wolfmem.curation.landing import apply_rewrite, check_rewrite, hand_lines_of
from wolfmem.curation.llm_curator import LLMCurator
from wolfmem.curation.log import append_log, render_entry
from wolfmem.curation.offline import OfflineCurator
from wolfmem.errors import OutsideVault, WolfmemError
from wolfmem.memory.facade import Memory
from wolfmem.storage.vault import (
    CURATED_PATHS,
    content_hash,
    episode_date,
)

log = logging.getLogger(__name__)

JOB = "curate"
SUCCESS = ("landed", "noop", "partial")


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

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        data = asdict(self)
        data["files"] = {rel: outcome.to_dict() for rel, outcome in self.files.items()}
        return data


def make_curator(config: Config) -> Curator:
    """The LLM curator when a model is configured, else the offline curator."""
    if not config.llm_model:
        return OfflineCurator()
    # Imported here: the openai client and pydantic cost the daemon ~25 MB it needs only with an LLM.
    from wolfmem.llm import LLMClient, LLMSettings

    return LLMCurator(LLMClient(LLMSettings.from_config(config)))


# --- gathering the inputs ----------------------------------------------------------------


@dataclass
class _Inputs:
    files: dict[str, tuple[str, str]]  # rel -> (text, revision) of every readable curated file
    unreadable: dict[str, str]
    episodes: list[Episode]
    episode_revisions: dict[str, str]
    saves: list[SavedFact]
    targets: list[str]


def _read(memory: Memory, rel: str) -> tuple[bytes, str]:
    data = memory.vault.read_or_empty(rel)
    return data, data.decode("utf-8")


def _gather(memory: Memory, day: str, since: str, previous: dict[str, Any]) -> _Inputs:
    """Read the curated files and the episodes; decide which files need the curator."""
    inputs = _Inputs({}, {}, [], {}, [], [])
    for rel in CURATED_PATHS:
        try:
            data, text = _read(memory, rel)
        except (OSError, UnicodeDecodeError, OutsideVault) as exc:
            inputs.unreadable[rel] = f"cannot read {rel} as UTF-8 text ({exc}); fix it and curation resumes"
            continue
        inputs.files[rel] = (text, content_hash(data))
    seen_episodes = previous.get("episodes", {})
    for rel in memory.vault.names("episodes", "*.md"):
        when = episode_date(rel)
        if when is None or not since <= when <= day:
            continue
        try:
            data = memory.vault.read_bytes(rel)
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError, OutsideVault) as exc:
            log.warning("skipped episode %s: not readable as UTF-8 text (%s)", rel, exc)
            continue
        revision = content_hash(data)
        inputs.episode_revisions[rel] = revision
        # The last run's own day is covered again only if it grew since that run read it.
        if when > since or (rel in seen_episodes and seen_episodes[rel] != revision):
            inputs.episodes.append(Episode(rel, when, text))
    seen_files = previous.get("revisions", {})
    for rel, (text, revision) in inputs.files.items():
        facts = markdown.parse(text).facts
        first_seen = memory.state.first_seen(rel)
        for fact in facts:
            saved_on = first_seen.get(fact_key(fact.text))
            if saved_on and since < saved_on <= day:
                inputs.saves.append(SavedFact(rel, fact.text, saved_on))
        changed = seen_files.get(rel) != revision
        if inputs.episodes or (changed and facts):
            inputs.targets.append(rel)
    return inputs


def _request(memory: Memory, day: str, since: str, inputs: _Inputs) -> CurationRequest:
    files = {}
    for rel in inputs.targets:
        text, _ = inputs.files[rel]
        files[rel] = FileInput(rel, text, memory.state.first_seen(rel), hand_lines_of(memory, rel, text))
    sections = {
        rel: [section.heading for section in markdown.parse(text).sections]
        for rel, (text, _) in inputs.files.items()
    }
    return CurationRequest(day, since, files, tuple(inputs.episodes), tuple(inputs.saves), sections)


# --- the run -------------------------------------------------------------------------------


def run(
    memory: Memory, curator: Curator, day: date, *, since: date | None = None, dry_run: bool = False
) -> CurationResult:
    """Curate the five files for `day`, covering everything since the last successful run."""
    started_at = memory.clock()
    started = time.monotonic()
    previous = memory.state.run_record(JOB) or {}
    day_s = day.isoformat()
    since_s = (
        since.isoformat() if since else previous.get("last_success_day") or (day - timedelta(days=1)).isoformat()
    )
    result = CurationResult("noop", day_s, "")
    proposal = Proposal(files={})
    inputs = _gather(memory, day_s, since_s, previous)
    for rel, reason in inputs.unreadable.items():
        result.files[rel] = FileOutcome("failed", [reason])
    error = ""
    if inputs.targets:
        if not dry_run:
            # Lines a person added get their first-seen day now, the first time wolfmem sees them.
            for rel in inputs.targets:
                facts = markdown.parse(inputs.files[rel][0]).facts
                memory.state.note_first_seen(rel, [fact_key(fact.text) for fact in facts], day_s)
        try:
            proposal = curator.propose(_request(memory, day_s, since_s, inputs))
        except WolfmemError as exc:
            error = str(exc)
            for rel in inputs.targets:
                result.files[rel] = FileOutcome("failed", [error])
        for rel, answer in proposal.files.items():
            if rel in inputs.files:
                result.files[rel] = _land(memory, rel, inputs.files[rel], answer, dry_run, result.diffs)
    result.usage = proposal.usage
    result.status = _status(result.files, inputs.targets, dry_run)
    result.summary = _summary(curator, result, inputs, since_s)
    if dry_run:
        return result
    conflicts = memory.vault.conflict_copies()
    entry = render_entry(day_s, curator.label, result.status, result.summary, result.files, conflicts)
    try:
        result.log_path = append_log(memory.writer, day, entry)
    except (OSError, WolfmemError) as exc:
        log.warning("the curation log could not be written: %s", exc)
    _record(memory, result, previous, inputs, since_s, started_at, started, proposal, curator, error)
    return result


def _land(
    memory: Memory, rel: str, current: tuple[str, str], answer: FileProposal, dry_run: bool, diffs: dict[str, str]
) -> FileOutcome:
    """Turn one file's answer into an outcome, writing it unless this is a dry run."""
    old_text, revision = current
    if answer.status == "failed":
        return FileOutcome("failed", [answer.error or "the curator failed on this file"])
    if answer.status != "rewrite":
        return FileOutcome("unchanged", [], answer.changes)
    if not dry_run:
        return apply_rewrite(memory, rel, old_text, answer.content, answer.changes, base_revision=revision)
    outcome, new_text = check_rewrite(memory, rel, old_text, answer.content, answer.changes)
    if outcome.status == "proposed":
        diffs[rel] = "".join(
            difflib.unified_diff(
                old_text.splitlines(keepends=True), new_text.splitlines(keepends=True), f"a/{rel}", f"b/{rel}"
            )
        )
    return outcome


def _status(files: dict[str, FileOutcome], targets: list[str], dry_run: bool) -> str:
    if dry_run:
        return "dry-run"
    states = [outcome.status for outcome in files.values()]
    bad = [s for s in states if s in ("rejected", "failed", "skipped-cas")]
    if not bad:
        return "landed" if "written" in states else "noop"
    if len(bad) == len(states) and "skipped-cas" not in bad:
        return "failed"
    return "partial"


def _summary(curator: Curator, result: CurationResult, inputs: _Inputs, since: str) -> str:
    """One paragraph for the log and `wolfmem status`."""
    covered = f"after {since} through {result.day}"
    if not inputs.targets and not inputs.unreadable:
        return f"No-op: nothing new {covered} (no episodes, saves or hand edits); the curator was not called."
    counts: dict[str, int] = {}
    for outcome in result.files.values():
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    tally = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    sources = f"{len(inputs.episodes)} episode log(s) and {len(inputs.saves)} new save(s)"
    return f"{curator.label} looked at {len(inputs.targets)} file(s) {covered}, from {sources}: {tally}."


def _record(
    memory: Memory,
    result: CurationResult,
    previous: dict[str, Any],
    inputs: _Inputs,
    since: str,
    started_at: Any,
    started: float,
    proposal: Proposal,
    curator: Curator,
    error: str,
) -> None:
    """Store the machine-readable run record the scheduler and `wolfmem status` read."""
    success = result.status in SUCCESS
    revisions = dict(previous.get("revisions", {}))
    for rel, (_, revision) in inputs.files.items():
        outcome = result.files.get(rel)
        if outcome is None or outcome.status == "unchanged":
            revisions[rel] = revision
        elif outcome.status == "written":
            revisions[rel] = outcome.revision
        else:
            revisions.pop(rel, None)  # not settled: the next run looks at it again
    last_success = previous.get("last_success_day")
    if success:
        last_success = max(filter(None, [last_success, result.day]))
    record = {
        "job": JOB,
        "status": result.status,
        "day": result.day,
        "since": since,
        "started_at": started_at.isoformat(),
        "finished_at": memory.clock().isoformat(),
        "duration_seconds": round(time.monotonic() - started, 3),
        "curator_seconds": proposal.seconds,
        "curator": curator.label,
        "requests": proposal.requests,
        "usage": result.usage,
        "files": {rel: {"status": o.status, "reasons": o.reasons, "changes": len(o.changes)}
                  for rel, o in result.files.items()},
        "summary": result.summary,
        "error": error,
        "log_path": result.log_path,
        "last_success_day": last_success,
        "revisions": revisions,
        "episodes": _seen_episodes(previous.get("episodes", {}), inputs.episode_revisions if success else {},
                                   last_success),
    }
    memory.state.put_run_record(JOB, record)


def _seen_episodes(before: dict[str, str], now: dict[str, str], last_success: str | None) -> dict[str, str]:
    """Episode revisions read so far, from the last successful day on.

    Merged rather than replaced: a run for an earlier day (a clock set back) reads none of the
    later logs, and forgetting them would hide their growth from the next run.
    """
    merged = {**before, **now}
    return {rel: rev for rel, rev in merged.items() if not last_success or (episode_date(rel) or "") >= last_success}
