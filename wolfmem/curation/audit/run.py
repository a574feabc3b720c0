"""The monthly adversarial audit: find what curation got wrong, report it, and land fixes safely.

`run_audit(services, "2026-10", now)` audits each curated file against the month's episodes and
curation logs. Findings go to `consolidated/audit-2026-10.md` with their evidence and proposed change.
A proposed change is line-level (remove lines, or replace them with one line) and lands through
`landing.apply_rewrite` — the same evidence-checking validation (the month's episodes, saves and hand
edits are its evidence), removal budget, archive, compare-and-swap, history and `.bak` as curation —
so an audit can never delete a hand edit or a recent save, launder a merge, or drop a fact the
archive does not keep. Evidence refs that leave the vault are withheld, and the report quotes
everything the model wrote through the untrusted-text rules.

With `audit.apply = false` the changes are only staged in the report; `wolfmem audit apply` lands them
later. Each staged change carries a hash of the lines it touches, and one whose lines have changed since
is marked stale instead of applied, and every staged change is validated again when it lands (the
removal budget lifted: a person asked for it). With no LLM configured the audit reports mechanical findings only
(duplicates, empty sections, past dates marked upcoming, sections untouched for 90 days) and changes
nothing.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import replace
from datetime import date, datetime
from typing import Any

from wolfmem.config import Config
from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.core.untrusted import quote_untrusted
from wolfmem.curation.audit import prompting
from wolfmem.curation.audit.auditors import Auditor, LLMAuditor
from wolfmem.curation.audit.findings import (
    Finding,
    confine_refs,
    count_outcomes,
    edit,
    line_hash,
    locate_exact,
    matched,
    mechanical_findings,
    safe_text,
)
from wolfmem.curation.audit.report import (
    MONTH,
    check_report_path,
    load_report,
    report_rel,
    summarise,
    write_report,
)
from wolfmem.curation.contract import Change, FileInput
from wolfmem.curation.landing import (
    RunEvidence,
    apply_rewrite,
    check_rewrite,
    hand_lines_of,
    new_hand_lines,
    run_evidence,
)
from wolfmem.curation.llm_budget import Budget
from wolfmem.errors import LLMError, UsageError, WolfmemError
from wolfmem.limits import curated_file_problem
from wolfmem.storage.services import VaultServices
from wolfmem.storage.vault import CURATED_PATHS, content_hash, episode_date
from wolfmem.storage.writer import Cause

log = logging.getLogger(__name__)


def make_auditor(config: Config) -> Auditor | None:
    """The LLM auditor when a model is configured; None (mechanical checks only) otherwise."""
    if not config.llm_model:
        return None
    # Imported here: the openai client and pydantic cost the daemon ~25 MB it needs only with an LLM.
    from wolfmem.llm.chat import LLMClient, LLMSettings

    return LLMAuditor(LLMClient(LLMSettings.from_config(config)))


def run_audit(
    services: VaultServices,
    month: str,
    now: datetime,
    *,
    apply: bool | None = None,
    auditor: Auditor | None = None,
) -> dict[str, Any]:
    """Audit the five curated files for `month` (YYYY-MM), write the report, apply or stage the changes."""
    if not MONTH.match(month or ""):
        raise UsageError(f"month must look like 2026-10, not {month!r}")
    config = services.config
    apply = config.audit_apply if apply is None else apply
    check_report_path(services, month)
    today = now.date()
    files = _read_files(services)
    findings: list[Finding] = []
    for rel, (body, _) in files.items():
        findings += mechanical_findings(rel, body, services.state.first_seen(rel), today)
    errors: dict[str, str] = {}
    usage: dict[str, int] = {}
    summaries: list[str] = []
    auditor = auditor or make_auditor(config)
    label = auditor.label if auditor else "offline (mechanical checks only; no LLM configured)"
    if auditor is not None:
        evidence = _evidence(services, month, today)
        budget, requests = Budget.of(config), 0
        try:
            for rel, (body, _) in files.items():
                if not markdown.parse(body).facts:
                    continue
                stopped = budget.refusal(requests, usage, 1)
                if stopped:
                    errors[rel] = f"not audited: {stopped}; the next audit reads it"
                    continue
                requests += 1
                item = FileInput(rel, body, services.state.first_seen(rel), hand_lines_of(services, rel, body))
                try:
                    answer = auditor.audit(item, evidence)
                except LLMError as exc:
                    errors[rel] = str(exc)
                    continue
                for key, value in answer.usage.items():
                    usage[key] = usage.get(key, 0) + value
                if answer.summary:
                    summaries.append(f"{rel}: {safe_text(answer.summary)}")
                items = [replace(item, evidence=confine_refs(item.evidence, lambda ref: _in_vault(services, ref)))
                         for item in answer.items]
                findings += matched(rel, body, items)
        finally:
            auditor.close()
        run = _month_evidence(services, evidence, files, month)
        _land_all(services, files, [f for f in findings if f.change is not None], apply, run)
    audited = sum(1 for body, _ in files.values() if markdown.parse(body).facts) if auditor else 0
    status = "ok" if not errors else "failed" if len(errors) >= audited else "partial"
    counts = count_outcomes(findings)
    summary = summarise(label, findings, counts, errors)
    meta = {"month": month, "run_at": now.isoformat(timespec="seconds"), "auditor": label,
            "mode": "apply" if apply else "stage", "summary": summary, "model_summaries": summaries,
            "errors": errors, "llm": auditor is not None}
    report = write_report(services, meta, findings)
    return {"status": status, "summary": summary, "month": month, "report": report, "usage": usage,
            "counts": counts, "errors": errors, "findings": [f.to_dict() for f in findings]}


def _read_files(services: VaultServices) -> dict[str, tuple[str, str]]:
    files = {}
    for rel in CURATED_PATHS:
        try:
            too_large = curated_file_problem(rel, services.vault.size(rel), services.config.index_max_file_bytes)
            if too_large:
                log.warning("audit skipped %s", too_large)
                continue
            data = services.vault.read_or_empty(rel)
            files[rel] = (data.decode("utf-8"), content_hash(data))
        except (OSError, UnicodeDecodeError, WolfmemError) as exc:
            log.warning("audit skipped %s: %s", rel, exc)
    return files


def _in_vault(services: VaultServices, ref: str) -> bool:
    """Whether a ref names a file inside the vault (a symlink out of it, `..` or an absolute path do not)."""
    rel = ref.removeprefix("file:").split("#", 1)[0]
    try:
        return services.vault.resolve(rel).is_file()
    except (OSError, WolfmemError):
        return False


def _month_evidence(
    services: VaultServices, evidence: prompting.Evidence, files: dict[str, tuple[str, str]], month: str, *,
    budget: bool = True,
) -> RunEvidence:
    """What backs a change in an audit: the month's episodes, the facts first seen in it, and its new hand edits."""
    start = f"{month}-01"
    texts = [(episode_date(rel) or "", text) for rel, text in evidence.episodes]
    for rel, (body, _) in files.items():
        first_seen = services.state.first_seen(rel)
        texts += [(first_seen[fact_key(fact.text)], fact.text) for fact in markdown.parse(body).facts
                  if first_seen.get(fact_key(fact.text), "").startswith(month)]
        texts += [(evidence.today, line) for line in new_hand_lines(services, rel, body, start)]
    texts.sort(key=lambda item: item[0])  # oldest first: the newest evidence about a fact wins
    return run_evidence(services, texts, budget=budget, since=dict.fromkeys(files, start),
                        files={rel: body for rel, (body, _) in files.items()})


def _evidence(services: VaultServices, month: str, today: date) -> prompting.Evidence:
    episodes = []
    for rel, data in services.vault.notes("episodes", f"{month}-*.md"):
        day = episode_date(rel)
        if day and day.startswith(month):
            episodes.append((rel, data.decode("utf-8", errors="replace")))
    logs = []
    for rel, data in services.vault.notes("consolidated", "*-W*.md"):
        if rel.startswith(("consolidated/digest-", "consolidated/audit-")):
            continue
        section = prompting.curation_sections(data.decode("utf-8", errors="replace"), month)
        if section:
            logs.append((rel, section))
    return prompting.Evidence(month, today.isoformat(), tuple(episodes), tuple(logs))


def _land_all(
    services: VaultServices, files: dict[str, tuple[str, str]], changed: list[Finding], apply: bool, run: RunEvidence
) -> None:
    """Check each change alone, then land (or stage) the good ones file by file."""
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in changed:
        by_file[finding.file].append(finding)
    for rel, group in by_file.items():
        body, revision = files[rel]
        good = [f for f in group if _check_alone(services, rel, body, f, run) and _quotable(f)]
        if not apply:
            for finding in good:
                finding.outcome = "staged"
            continue
        _land_file(services, rel, body, revision, good, run)


def _quotable(finding: Finding) -> bool:
    """A change kept in the report verbatim (to apply later) may quote no secret and no instruction."""
    assert finding.change is not None
    verbatim = [*finding.change.old, finding.change.new]
    if any(text and quote_untrusted(text, len(text) + 1) != " ".join(text.split()) for text in verbatim):
        finding.outcome = "rejected"
        finding.reasons = ["it quotes a line that looks like a secret or an instruction; change that line by hand"]
        return False
    return True


def _check_alone(services: VaultServices, rel: str, body: str, finding: Finding, run: RunEvidence) -> bool:
    """Validate one change on its own, so one bad change does not sink the others."""

    assert finding.change is not None
    candidate = edit(body, finding.change.old, finding.change.new)
    if candidate is None:
        finding.outcome, finding.reasons = "stale", ["its lines are no longer in the file"]
        return False
    outcome, _ = check_rewrite(services, rel, body, candidate, [finding.change], run)
    if outcome.status == "rejected":
        finding.outcome, finding.reasons = "rejected", outcome.reasons
        return False
    if outcome.status == "unchanged":
        finding.outcome = "reported"
        return False
    return True  # "proposed", or "staged" (over the removal budget): the file's combined rewrite decides


def _land_file(
    services: VaultServices, rel: str, body: str, revision: str, good: list[Finding], run: RunEvidence
) -> None:
    """Combine a file's checked changes into one rewrite and land it through curation's path.

    Changes join the rewrite in the model's order while it stays within the removal budget; the
    rest are staged for `wolfmem audit apply`, which lands them after a person has looked.
    """

    new_text, landing = body, []
    changes: list[Change] = []
    for finding in good:
        assert finding.change is not None
        candidate = edit(new_text, finding.change.old, finding.change.new)
        if candidate is None:
            finding.outcome, finding.reasons = "rejected", ["overlaps another change to the same lines"]
            continue
        together, _ = check_rewrite(services, rel, body, candidate, [*changes, finding.change], run)
        if together.status in ("staged", "rejected"):
            finding.outcome, finding.reasons = together.status, together.reasons
            if together.status == "staged":
                finding.reasons = [*together.reasons, "`wolfmem audit apply` lands it after a person has looked"]
            continue
        new_text = candidate
        changes.append(finding.change)
        landing.append(finding)
    if not landing:
        return
    outcome = apply_rewrite(services, rel, body, new_text, changes, base_revision=revision, cause=Cause.AUDIT, run=run)
    for finding in landing:
        if outcome.status == "written":
            finding.outcome = "applied"
        else:
            finding.outcome, finding.reasons = outcome.status, outcome.reasons


def apply_staged(services: VaultServices, month: str) -> dict[str, Any]:
    """Apply the changes a staged audit report proposes; a change whose lines changed since is marked stale."""
    rel = report_rel(month)
    try:
        report = services.vault.read_bytes(rel).decode("utf-8")
    except FileNotFoundError:
        others = [name.rsplit("/", 1)[-1] for name in services.vault.names("consolidated", "audit-*.md")]
        hint = f"; audit reports here: {', '.join(others)}" if others else "; run `wolfmem audit --now` first"
        raise UsageError(f"there is no audit report for {month} ({rel}){hint}") from None
    meta, findings = load_report(report, rel)
    # A staged finding always carries its change; one without (load_report found it malformed) was tampered with.
    staged = [f for f in findings if f.outcome == "staged"]

    def inside(ref: str) -> bool:
        return _in_vault(services, ref)

    for finding in staged:
        if finding.file not in CURATED_PATHS or finding.change is None:
            # The report is a file in the vault: someone may have edited its data block.
            finding.outcome, finding.reasons = "rejected", ["the staged change is malformed; not applied"]
        else:
            finding.evidence = confine_refs(finding.evidence, inside)
            finding.change = replace(finding.change,
                                     source=", ".join(confine_refs(finding.change.source.split(", "), inside)))
            _quotable(finding)
    staged_ok = [f for f in staged if f.outcome == "staged"]
    files = _read_files(services)
    # Checked again as it lands, against this month's evidence; the person lifts only the budget.
    run = _month_evidence(services, _evidence(services, month, services.clock().date()), files, month, budget=False)
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in staged_ok:
        by_file[finding.file].append(finding)
    for file_rel, group in by_file.items():
        body, revision = files.get(file_rel, ("", ""))
        fresh = []
        for finding in group:
            assert finding.change is not None
            current = [locate_exact(body, line) for line in finding.change.old]
            if None in current or line_hash([c for c in current if c]) != finding.hash:
                finding.outcome, finding.reasons = "stale", ["its lines changed since the audit; not applied"]
            elif _check_alone(services, file_rel, body, finding, run):
                fresh.append(finding)
        _land_file(services, file_rel, body, revision, fresh, run)
    counts = count_outcomes(staged)
    summary = (f"{counts.get('applied', 0)} applied, {counts.get('stale', 0)} stale, "
               f"{counts.get('rejected', 0)} rejected of {len(staged)} staged change(s)")
    meta["applied_summary"] = summary
    write_report(services, meta, findings)
    status = "noop" if not staged else "ok" if counts.get("applied", 0) == len(staged) else "partial"
    return {"status": status, "summary": summary, "month": month, "report": rel, "counts": counts,
            "changes": [f.to_dict() for f in staged]}
