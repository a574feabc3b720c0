"""A curation run: gather what changed, ask the curator, land each file through validation and CAS, record.

`run(services, curator, day)` gives the curator every episode entry filed up to
`day` that it has not consumed yet (`curation.coverage`: whatever day an entry is
filed under), in batches within the prompt's episode budget, and the facts saved
since the last successful run. A run with nothing new makes no curator call.
The proposed files of a round go through `landing.land_all`, the landing path
shared with the monthly audit: validated together against the round's evidence
(its episode lines, saves and hand edits), every fact that leaves archived
first. A rewrite over the removal budget is staged (`curation.staging`) for
`wolfmem curate apply`. A curated file that cannot be read (a symlink, a bad
mode, not UTF-8) is skipped with its reason; the rest of the run goes on. The
vault lock is held only around each write, never during an LLM call.
"""

from __future__ import annotations

import difflib
import logging
import time
from dataclasses import replace
from datetime import date, timedelta
from typing import Any

from wolfmem.config import Config
from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.curation.budget import window_start
from wolfmem.curation.contract import (
    CurationRequest,
    Curator,
    Episode,
    FileInput,
    FileOutcome,
    Proposal,
    SavedFact,
)
from wolfmem.curation.coverage import (
    Coverage,
    CoverageFile,
    EpisodeLog,
    as_episodes,
    baseline,
    batches,
)
from wolfmem.curation.landing import (
    Rewrite,
    forgotten_facts,
    hand_lines_of,
    land_all,
    new_hand_lines,
    run_evidence,
)
from wolfmem.curation.llm_budget import Budget
from wolfmem.curation.llm_curator import LLMCurator
from wolfmem.curation.log import append_log, render_entry
from wolfmem.curation.offline import OfflineCurator
from wolfmem.curation.outcome import (
    JOB,
    SUCCESS,
    CurationResult,
    RoundInputs,
    Tally,
    record_run,
    run_status,
    summarise,
    whole,
)
from wolfmem.curation.prompting import EPISODE_BUDGET_CHARS
from wolfmem.curation.staging import StagedRewrite, stage
from wolfmem.errors import WolfmemError, storage_error
from wolfmem.limits import curated_file_problem
from wolfmem.storage.conflicts import MARKERS, MERGED, SyncConflicts
from wolfmem.storage.services import VaultServices
from wolfmem.storage.vault import (
    CURATED_PATHS,
    content_hash,
    episode_date,
)

log = logging.getLogger(__name__)
_UNCHANGED = FileOutcome("unchanged")


def sync_conflicts(services: VaultServices, since: str) -> list[str]:
    """What the curation log says of sync conflicts: merged since `since`, left for a person, copies still there."""
    merged = [repair["message"] for repair in services.state.repairs(100)
              if repair.get("kind") in (MERGED, MARKERS) and str(repair.get("at", ""))[:10] >= since[:10]]
    person = SyncConflicts(services.writer, services.archive, services.clock).unresolved()
    waiting = [f"{rel} (merged into its file by the next sync)" for rel in services.vault.conflict_copies()
               if rel not in person]
    return [*reversed(merged), *(f"{rel}: {why}" for rel, why in person.items()), *waiting]


def make_curator(config: Config) -> Curator:
    """The LLM curator when a model is configured, else the offline curator."""
    if not config.llm_model:
        return OfflineCurator()
    # Imported here: the openai client and pydantic cost the daemon ~25 MB it needs only with an LLM.
    from wolfmem.llm.chat import LLMClient, LLMSettings

    return LLMCurator(LLMClient(LLMSettings.from_config(config)))


# --- gathering the inputs ----------------------------------------------------------------


def _read(services: VaultServices, rel: str) -> tuple[bytes, str]:
    data = services.vault.read_or_empty(rel)
    return data, data.decode("utf-8")


def _too_large(services: VaultServices, rel: str) -> str | None:
    """Why a curated file is too large to curate (`limits.curated_file_problem`), or None."""
    try:
        size = services.vault.size(rel)
    except (OSError, WolfmemError):
        return None  # the read that follows says why
    return curated_file_problem(rel, size, services.config.index_max_file_bytes)


def _read_logs(services: VaultServices) -> tuple[list[EpisodeLog], list[str]]:
    """Every readable episode log, and the paths of all of them (readable or not)."""
    logs, present = [], []
    for rel in services.vault.names("episodes", "*.md"):
        when = episode_date(rel)
        if when is None:
            continue
        present.append(rel)
        try:
            logs.append(EpisodeLog.of(rel, when, services.vault.read_bytes(rel)))
        except (OSError, UnicodeDecodeError, WolfmemError):
            log.warning("skipped episode %s: not readable as UTF-8", rel)
    return logs, present


def _gather(
    services: VaultServices, day: str, since: str, seen_files: dict[str, str], episodes: tuple[Episode, ...],
    saves: bool,
) -> RoundInputs:
    """Read the curated files (and the saves when asked); decide which files need the curator."""
    inputs = RoundInputs({}, {}, list(episodes), [], [])
    for rel in CURATED_PATHS:
        too_large = _too_large(services, rel)
        if too_large:
            inputs.unreadable[rel] = f"skipped: {too_large}"
            continue
        try:
            data, text = _read(services, rel)
        except OSError as exc:
            inputs.unreadable[rel] = f"skipped: {storage_error(exc, 'read', rel)}; curation resumes once it can be read"
            continue
        except UnicodeDecodeError as exc:
            inputs.unreadable[rel] = (
                f"skipped: {rel} is not UTF-8 text ({exc.reason} at byte {exc.start}); fix it and curation resumes"
            )
            continue
        except WolfmemError as exc:
            inputs.unreadable[rel] = f"skipped: {exc}; curation resumes once it can be read"
            continue
        inputs.files[rel] = (text, content_hash(data))
    for rel, (text, revision) in inputs.files.items():
        facts = markdown.parse(text).facts
        first_seen = services.state.first_seen(rel)
        # A line a person typed is first seen too, but it is a hand edit, not a save.
        hand = hand_lines_of(services, rel, text) if saves else frozenset()
        lines = text.splitlines()
        for fact in facts if saves else ():
            saved_on = first_seen.get(fact_key(fact.text))
            if saved_on and since <= saved_on <= day and lines[fact.line - 1].rstrip() not in hand:
                inputs.saves.append(SavedFact(rel, fact.text, saved_on))
        changed = seen_files.get(rel) != revision
        if inputs.episodes or (changed and facts):
            inputs.targets.append(rel)
    return inputs


def _request(services: VaultServices, day: str, since: str, inputs: RoundInputs) -> CurationRequest:
    files = {}
    for rel in inputs.targets:
        text, _ = inputs.files[rel]
        files[rel] = FileInput(rel, text, services.state.first_seen(rel), hand_lines_of(services, rel, text))
    sections = {
        rel: [section.heading for section in markdown.parse(text).sections]
        for rel, (text, _) in inputs.files.items()
    }
    return CurationRequest(day, since, files, tuple(inputs.episodes), tuple(inputs.saves), sections,
                           forgotten_facts(services))


# --- the run -------------------------------------------------------------------------------


def run(
    services: VaultServices, curator: Curator, day: date, *, since: date | None = None, dry_run: bool = False
) -> CurationResult:
    """Curate the five files through `day`: every episode entry not consumed yet, and the saves from `since` on.

    `since` is the first day covered, as in the job runner (default: the day after the coverage's last day).
    """
    started_at = services.clock()
    started = time.monotonic()
    previous = services.state.run_record(JOB) or {}
    day_s = day.isoformat()
    logs, present = _read_logs(services)
    store = CoverageFile(services.writer, services.provenance.machine)
    coverage = store.read() or _first_coverage(previous, since, logs)
    since_s = (since or _day_after(coverage.through) or day).isoformat()
    pending = coverage.pending(logs, day_s)
    rounds = (batches(pending, EPISODE_BUDGET_CHARS) if curator.reads_episodes else [pending]) or [[]]
    result = CurationResult("noop", day_s, "")
    tally = Tally()
    window = window_start(day)
    budget = Budget.of(services.config)
    for number, batch in enumerate(rounds):
        inputs = _gather(services, day_s, since_s, coverage.files, as_episodes(batch), saves=number == 0)
        inputs.added = coverage.added_since(window)
        # A hand line is evidence once: in the runs up to the one that settles its file.
        inputs.fresh_since = {rel: (_day_after(d) or day).isoformat() for rel, d in coverage.settled.items()}
        # A round sends at most one request per file; past the budget the rest waits for the next run.
        result.stopped = budget.refusal(tally.requests, tally.usage, len(inputs.targets)) or ""
        if result.stopped:
            break
        files, proposal, error = _round(services, curator, day_s, since_s, inputs, dry_run, result.diffs)
        tally.add(inputs, files, proposal, error, batch)
        if dry_run:
            break
        grown = {rel: outcome.added for rel, outcome in files.items() if outcome.status == "written"}
        done = {rel: day_s for rel in inputs.files if files.get(rel, _UNCHANGED).status in ("written", "unchanged")}
        coverage = replace(coverage.grown(day_s, grown, window), files=_seen_files(coverage.files, inputs, files),
                           settled={**coverage.settled, **done})
        settled = run_status(files, inputs.targets, dry_run) in SUCCESS
        if settled:
            coverage = coverage.consume(batch, day_s, logs, present)
            tally.settled += whole(batch)
        store.write(coverage)
        if not settled:
            break
    result.files, result.usage = tally.files, tally.usage
    result.status = run_status(result.files, sorted(tally.targets), dry_run)
    result.entries, result.batches = tally.entries, tally.rounds
    result.left = sum(whole(batch) for batch in rounds) - (tally.entries if dry_run else tally.settled)
    result.summary = summarise(curator, result, tally, since_s)
    if dry_run:
        return result
    conflicts = sync_conflicts(services, since_s)
    entry = render_entry(day_s, curator.label, result.status, result.summary, result.files, conflicts)
    try:
        result.log_path = append_log(services.writer, day, entry)
    except (OSError, WolfmemError) as exc:
        log.warning("the curation log could not be written: %s", exc)
    record_run(services, result, coverage, since_s, started_at, started, tally, curator)
    return result


def _first_coverage(previous: dict[str, Any], since: date | None, logs: list[EpisodeLog]) -> Coverage:
    """No coverage file yet: start from the date mark of a vault curated before entries were tracked."""
    mark = previous.get("last_success_day") or ((since - timedelta(days=1)).isoformat() if since else None)
    return baseline(mark, logs, previous.get("episodes") or {})


def _day_after(through: str | None) -> date | None:
    """The first day after the last one covered (None: nothing covered yet, or a mark that is not a date)."""
    try:
        return date.fromisoformat(through) + timedelta(days=1) if through else None
    except ValueError:
        return None


def _round(
    services: VaultServices, curator: Curator, day: str, since: str, inputs: RoundInputs, dry_run: bool,
    diffs: dict[str, str],
) -> tuple[dict[str, FileOutcome], Proposal, str]:
    """One curator call over the files that need it, and what became of each file."""
    files = {rel: FileOutcome("skipped", [reason]) for rel, reason in inputs.unreadable.items()}
    proposal = Proposal(files={})
    error = ""
    if not inputs.targets:
        return files, proposal, error
    if not dry_run:
        # Lines a person added get their first-seen day now, the first time wolfmem sees them.
        for rel in inputs.targets:
            facts = markdown.parse(inputs.files[rel][0]).facts
            services.state.note_first_seen(rel, [fact_key(fact.text) for fact in facts], day)
    request = _request(services, day, since, inputs)
    try:
        proposal = curator.propose(request)
    except WolfmemError as exc:
        error = str(exc)
        for rel in inputs.targets:
            files[rel] = FileOutcome("failed", [error])
    files.update(_land(services, request, inputs, proposal, dry_run, diffs))
    return files, proposal, error


def _land(
    services: VaultServices, request: CurationRequest, inputs: RoundInputs, proposal: Proposal, dry_run: bool,
    diffs: dict[str, str],
) -> dict[str, FileOutcome]:
    """Turn the answers into outcomes: rewrites validated together and landed, or staged, unless a dry run."""
    outcomes: dict[str, FileOutcome] = {}
    rewrites: dict[str, Rewrite] = {}
    for rel, answer in proposal.files.items():
        if rel not in inputs.files:
            continue
        if answer.status == "failed":
            outcomes[rel] = FileOutcome("failed", [answer.error or "the curator failed on this file"])
        elif answer.status != "rewrite":
            outcomes[rel] = FileOutcome("unchanged", [], answer.changes)
        else:
            old_text, revision = inputs.files[rel]
            rewrites[rel] = Rewrite(old_text, revision, answer.content, answer.changes)
    # Only what arrived since the last run is evidence: its episode lines, saves and new hand edits, oldest
    # first (by day; hand edits, seen only now, last), since the newest evidence about a fact wins.
    said = [(episode.day, episode.text) for episode in request.episodes] + [(save.day, save.text) for save in
                                                                             request.saves]
    texts = sorted(said, key=lambda item: item[0])
    read = {rel: text for rel, (text, _) in inputs.files.items()}
    fresh = inputs.fresh_since
    today = services.clock().date().isoformat()
    texts += [(today, line) for rel, text in read.items()
              for line in new_hand_lines(services, rel, text, fresh.get(rel))]
    evidence = run_evidence(services, texts, since=fresh, files=read, added=inputs.added)
    to_stage = []
    for rel, (outcome, new_text) in land_all(services, rewrites, evidence, dry_run=dry_run).items():
        old_text, revision = inputs.files[rel]
        if outcome.status == "staged":
            to_stage.append(StagedRewrite(rel, request.day, revision, new_text, outcome.changes, outcome.reasons,
                                          list(evidence.lines)))
            outcome.reasons.append("staged for a person: `wolfmem curate apply --dry-run` shows it, "
                                   "`wolfmem curate apply` lands it")
        if dry_run and outcome.status in ("proposed", "staged"):
            diffs[rel] = "".join(
                difflib.unified_diff(
                    old_text.splitlines(keepends=True), new_text.splitlines(keepends=True), f"a/{rel}", f"b/{rel}"
                )
            )
        outcomes[rel] = outcome
    if not dry_run:
        written = [rel for rel, outcome in outcomes.items() if outcome.status == "written"]
        if to_stage or written:
            try:
                stage(services, to_stage, settled=written)
            except WolfmemError as exc:
                for item in to_stage:
                    outcomes[item.rel].reasons.append(f"could not be staged: {exc}")
    return outcomes


def _seen_files(before: dict[str, str], inputs: RoundInputs, files: dict[str, FileOutcome]) -> dict[str, str]:
    """Each curated file's revision as curation last saw or wrote it; an unsettled file is looked at again."""
    revisions = dict(before)
    for rel, (_, revision) in inputs.files.items():
        outcome = files.get(rel)
        if outcome is None or outcome.status == "unchanged":
            revisions[rel] = revision
        elif outcome.status == "written":
            revisions[rel] = outcome.revision
        else:
            revisions.pop(rel, None)  # not settled: the next run looks at it again
    return revisions
