"""The one landing path for curated rewrites, shared by nightly curation, the audit and staged applies.

validate (with the run's evidence and what is protected) → archive every fact that leaves → compare-
and-exchange through the writer against the revision the curator read → `.bak`, history, provenance
and reindex (the writer's job). Nothing lands that validation refuses, and nothing leaves a file
without an archive record: the records are written first, while the file still holds the facts.
(Should an editor write the file in the instant between, the rewrite is left unlanded and the
records stay; restoring one of them then reports the fact as already on file.)
A rewrite over the removal budget comes back "staged", unwritten; its caller keeps it for a person.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from wolfmem.core import markdown
from wolfmem.core.compare import carries, fact_words
from wolfmem.core.facts import fact_key
from wolfmem.core.untrusted import quote_untrusted
from wolfmem.curation.budget import Growth, removed_since, window_start
from wolfmem.curation.candidates import WordIndex
from wolfmem.curation.contract import Change, FileOutcome
from wolfmem.curation.evidence import (
    PROTECTION_DAYS,
    Departure,
    Safeguards,
    dated_lines,
    evidence_lines,
)
from wolfmem.curation.meaning import Subjects, text_key
from wolfmem.curation.validate import Verdict, hand_edited_lines, quote, validate
from wolfmem.errors import FileChanged, WolfmemError
from wolfmem.storage.archive import ArchivedFact, forgotten
from wolfmem.storage.services import VaultServices
from wolfmem.storage.vault import CURATED_PATHS, content_hash, template_text
from wolfmem.storage.writer import Cause, Edit


def hand_lines_of(services: VaultServices, rel: str, text: str) -> frozenset[str]:
    """Lines of a curated file a person wrote since wolfmem last wrote or accepted it."""
    name = rel.rsplit("/", 1)[-1].removesuffix(".md")
    return frozenset(hand_edited_lines(text, services.state.snapshot_lines(rel), template_text(name)))


def _title(rel: str, text: str) -> str:
    return markdown.parse(text).title or rel.rsplit("/", 1)[-1].removesuffix(".md").title()


@dataclass(frozen=True)
class RunEvidence:
    """What one run knows beyond each file: evidence since the last run, what a person forgot, the budgets used."""

    lines: tuple[str, ...] = ()
    forgotten: tuple[str, ...] = ()
    budget: bool = True  # False when a person lands what was staged
    since: Mapping[str, str] = field(default_factory=dict)  # per file: hand lines first seen earlier are not new
    files: Mapping[str, str] | None = None  # every curated file's text as the run read it (None: read the disk)
    removed: Mapping[str, int] = field(default_factory=dict)  # removal budget used per file in the window
    added: Mapping[str, int] = field(default_factory=dict)  # facts and sections added per file in the window
    said_on: tuple[str, ...] = ()  # the day each line was said (`Safeguards.said_on`)


def forgotten_facts(services: VaultServices, records: list[ArchivedFact] | None = None) -> tuple[str, ...]:
    """The facts a person asked to forget (and did not restore since), newest first, from the archive."""
    records = services.archive.records() if records is None else records
    gone = forgotten(records)
    newest_first = {record.key: record.fact for record in reversed(records) if record.key in gone}
    return tuple(newest_first.values())


def run_evidence(
    services: VaultServices, texts: Iterable[tuple[str, str]] = (), *, budget: bool = True,
    since: Mapping[str, str] | None = None, files: Mapping[str, str] | None = None,
    added: Mapping[str, int] | None = None,
) -> RunEvidence:
    """The evidence lines of episodes, saves and hand edits ((day, text), oldest first), with the archive's
    forgotten facts and removals."""
    records = services.archive.records()
    start = window_start(services.clock().date())
    removed = {rel: removed_since(records, rel, start) for rel in CURATED_PATHS}
    lines, days = dated_lines(texts)
    return RunEvidence(lines, forgotten_facts(services, records), budget, dict(since or {}), files,
                       removed, dict(added or {}), days)


def new_hand_lines(services: VaultServices, rel: str, text: str, since: str | None) -> list[str]:
    """The file's hand-written lines first seen from `since` on: only they are evidence for this run."""
    first_seen = services.state.first_seen(rel)
    return sorted(line for line in hand_lines_of(services, rel, text)
                  if since is None or first_seen.get(fact_key(line), since) >= since)


def _files(services: VaultServices, run: RunEvidence) -> Mapping[str, str]:
    return run.files if run.files is not None else {rel: _disk_text(services, rel) for rel in CURATED_PATHS}


def safeguards(services: VaultServices, rel: str, old_text: str, run: RunEvidence) -> Safeguards:
    """The file's safeguards: the run's evidence plus its own new hand edits, what is protected, the budgets."""
    hand = hand_lines_of(services, rel, old_text)
    since = (services.clock().date() - timedelta(days=PROTECTION_DAYS)).isoformat()
    recent = {key for key, day in services.state.first_seen(rel).items() if day >= since}
    hand_facts = evidence_lines(hand)
    files = _files(services, run)
    headings = tuple(s.heading for text in files.values() for s in markdown.parse(text).sections)
    config = services.config
    growth = Growth(config.curation_max_added_per_run, config.curation_max_added_per_month,
                    config.index_max_file_bytes, run.added.get(rel, 0), run.removed.get(rel, 0))
    own = evidence_lines(new_hand_lines(services, rel, old_text, run.since.get(rel)))
    today = services.clock().date().isoformat()  # a hand edit is seen only now: the newest evidence
    return Safeguards(
        evidence=run.lines + own,
        said_on=run.said_on + (today,) * len(own) if len(run.said_on) == len(run.lines) else (),
        protected=frozenset(recent | {fact_key(line) for line in hand_facts}),
        forgotten=run.forgotten,
        move_targets=frozenset(CURATED_PATHS) - {rel},
        budget=run.budget,
        hand=frozenset(text_key(line) for line in hand_facts),
        headings=headings,
        incoming=tuple((f.text, f.section) for other, text in files.items() if other != rel
                       for f in markdown.parse(text).facts),
        growth=growth,
    )


def verdict_for(
    services: VaultServices, rel: str, old_text: str, new_text: str, changes: list[Change], run: RunEvidence
) -> Verdict:
    """Validate one rewrite against the file's safeguards (no I/O beyond reading state)."""
    if rel not in CURATED_PATHS:
        return Verdict(False, old_text, [f"{rel} is not one of the five curated files; curation never touches it"])
    return validate(
        old_text, new_text, changes, hand_lines=hand_lines_of(services, rel, old_text), title=_title(rel, old_text),
        guards=safeguards(services, rel, old_text, run),
    )


def outcome_of(verdict: Verdict, old_text: str) -> tuple[FileOutcome, str]:
    """("proposed", repaired text), ("staged", text), ("unchanged", old) or ("rejected", old) for a verdict."""
    if verdict.over_budget:
        return FileOutcome("staged", verdict.reasons, verdict.changes), verdict.text
    if not verdict.ok:
        return FileOutcome("rejected", verdict.reasons, verdict.changes), old_text
    if verdict.text == old_text:
        return FileOutcome("unchanged", [], verdict.changes), old_text
    return FileOutcome("proposed", verdict.repairs, verdict.changes, added=verdict.added), verdict.text


def check_rewrite(
    services: VaultServices, rel: str, old_text: str, new_text: str, changes: list[Change],
    run: RunEvidence | None = None,
) -> tuple[FileOutcome, str]:
    """Validate without writing: ("proposed", repaired), ("staged", text), ("unchanged", old) or ("rejected", old)."""
    return outcome_of(verdict_for(services, rel, old_text, new_text, changes, run or RunEvidence()), old_text)


def apply_rewrite(
    services: VaultServices,
    rel: str,
    old_text: str,
    new_text: str,
    changes: list[Change],
    *,
    base_revision: str,
    cause: Cause = Cause.CURATION,
    run: RunEvidence | None = None,
) -> FileOutcome:
    """Validate a rewrite, then land it through the writer only if the file is still at base_revision."""
    verdict = verdict_for(services, rel, old_text, new_text, changes, run or RunEvidence())
    checked, text = outcome_of(verdict, old_text)
    if checked.status != "proposed":
        return checked
    return land(services, rel, text, verdict.departures, checked, base_revision=base_revision, cause=cause)


def land(
    services: VaultServices,
    rel: str,
    text: str,
    departures: list[Departure],
    checked: FileOutcome,
    *,
    base_revision: str,
    cause: Cause,
) -> FileOutcome:
    """Archive what leaves, then write a validated text if the file is still at base_revision."""
    archived: list[str] = []

    def exchange(current: str) -> Edit[None]:
        if content_hash(current.encode("utf-8")) != base_revision:
            raise FileChanged(rel)
        if departures and not archived:
            # Before the exchange: a fact is in the archive before it leaves its file, never after.
            archived.extend(services.archive.add(_records(services, rel, departures, cause)))
        return Edit(text)

    try:
        written = services.writer.edit(rel, exchange, cause=cause, backup=True)
    except FileChanged:
        return FileOutcome(
            "skipped-cas", [f"{rel} changed while the curator was working; left as it is for the next run"],
            checked.changes,
        )
    except WolfmemError as exc:
        return FileOutcome("failed", [f"could not write {rel}: {exc}"], checked.changes)
    return FileOutcome("written", checked.reasons, checked.changes, written.revision, archived, checked.added)


def _records(services: VaultServices, rel: str, departures: list[Departure], cause: Cause) -> list[ArchivedFact]:
    day = services.clock().date().isoformat()
    # The reason is the model's text: quoted like everything untrusted before it is written anywhere.
    return [ArchivedFact(d.fact, rel, d.section, day, d.reason, quote_untrusted(d.why), d.into, cause.value)
            for d in departures]


# --- a run's rewrites, landed together -----------------------------------------------------------


@dataclass(frozen=True)
class Rewrite:
    """One file's proposed rewrite in a run: the text and revision the curator read, and its answer."""

    old_text: str
    revision: str
    new_text: str
    changes: list[Change]


def land_all(
    services: VaultServices, rewrites: dict[str, Rewrite], run: RunEvidence, *, dry_run: bool = False,
    cause: Cause = Cause.CURATION,
) -> dict[str, tuple[FileOutcome, str]]:
    """Validate a run's rewrites together, then land them: receivers of moved facts first.

    A fact "moved" to another file leaves only if that file's text after this run carries it:
    its accepted rewrite, or what it holds now. Landing re-checks against the disk before each
    file that moves facts out, so a receiver that failed to land keeps its senders unwritten.
    Returns each file's outcome and text (the repaired rewrite when proposed or staged).
    """
    verdicts = {rel: verdict_for(services, rel, r.old_text, r.new_text, r.changes, run) for rel, r in rewrites.items()}
    results = {rel: outcome_of(verdict, rewrites[rel].old_text) for rel, verdict in verdicts.items()}
    settled = False
    while not settled:  # a refused receiver can refuse its senders, and so on: a fixed point
        settled = True
        for rel, (outcome, _) in results.items():
            if outcome.status not in ("proposed", "staged"):
                continue
            missing = _unreceived(verdicts[rel].departures, lambda target: _planned_text(services, target, results))
            if missing:
                results[rel] = (FileOutcome("rejected", missing, outcome.changes), rewrites[rel].old_text)
                settled = False
    if dry_run:
        return results
    order = sorted(results, key=lambda rel: any(d.reason == "moved" for d in verdicts[rel].departures))
    for rel in order:
        outcome, text = results[rel]
        if outcome.status != "proposed":
            continue
        missing = _unreceived(verdicts[rel].departures, lambda target: _disk_text(services, target))
        if missing:
            results[rel] = (FileOutcome("rejected", missing, outcome.changes), rewrites[rel].old_text)
            continue
        landed = land(services, rel, text, verdicts[rel].departures, outcome,
                      base_revision=rewrites[rel].revision, cause=cause)
        results[rel] = (landed, text if landed.status == "written" else rewrites[rel].old_text)
    return results


def _planned_text(services: VaultServices, rel: str, results: dict[str, tuple[FileOutcome, str]]) -> str:
    outcome, text = results.get(rel, (None, None))
    if outcome is not None and outcome.status in ("proposed", "unchanged") and text is not None:
        return text
    return _disk_text(services, rel)


def _disk_text(services: VaultServices, rel: str) -> str:
    try:
        return services.vault.read_or_empty(rel).decode("utf-8")
    except (OSError, UnicodeDecodeError, WolfmemError):
        return ""


def _unreceived(departures: list[Departure], text_of: Callable[[str], str]) -> list[str]:
    """Reasons for each fact moved to a file whose text does not hold it, about the same subject."""
    reasons = []
    receivers: dict[str, tuple[WordIndex[markdown.Fact], list[str]]] = {}
    for departure in departures:
        if departure.reason != "moved":
            continue
        if departure.into not in receivers:
            parsed = markdown.parse(text_of(departure.into))
            index: WordIndex[markdown.Fact] = WordIndex()
            for fact in parsed.facts:
                index.add(fact.text, fact)
            receivers[departure.into] = (index, [section.heading for section in parsed.sections])
        index, headings = receivers[departure.into]
        # Sarah's "Prefers tea" lands in preferences.md as "Sarah prefers tea", never as the user's "Prefers tea".
        known = Subjects([*headings, departure.section])
        words = fact_words(departure.fact)
        # A carrying line may miss one plain word in five, so one of the n//5 + 1 rarest is certainly in it.
        held = any(carries(f.text, departure.fact) and known.of(f.section, f.text) == departure.subject
                   for f in index.candidates(index.rarest(words, len(words) // 5 + 1)))
        if not held:
            reasons.append(f"moves {quote(departure.fact)} to {departure.into}, but that file's text after this "
                           "run does not hold it about the same subject")
    return reasons
