"""The monthly adversarial audit: find what curation got wrong, report it, and land fixes safely.

`run_audit(memory, config, "2026-10", now)` audits each curated file against the month's episodes and
curation logs. Findings go to `consolidated/audit-2026-10.md` with their evidence and proposed change.
A proposed change is line-level (remove lines, or replace them with one line) and lands through
`curate.apply_rewrite` — the same validation, compare-and-swap and `.bak` as curation — so an audit can
never delete a hand edit or drop a fact without saying why.

With `audit.apply = false` the changes are only staged in the report; `wolfmem audit apply` lands them
later. Each staged change carries a hash of the lines it touches, and one whose lines have changed since
is marked stale instead of applied. With no LLM configured the audit reports mechanical findings only
(duplicates, empty sections, past dates marked upcoming, sections untouched for 90 days) and changes
nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from wolfmem.config import Config
from wolfmem.core import markdown, tokens
from wolfmem.core.credentials import find_secret
from wolfmem.core.facts import Relation, fact_key, normalise, relate
from wolfmem.core.untrusted import quote_untrusted
from wolfmem.curation.audit import prompting
from wolfmem.curation.contract import FileInput
from wolfmem.curation.landing import apply_rewrite, check_rewrite, hand_lines_of
from wolfmem.curation.prompting import annotate
from wolfmem.errors import LLMError, OutsideVault, UsageError
from wolfmem.memory.facade import Memory
from wolfmem.storage.vault import CURATED_PATHS, content_hash, episode_date
from wolfmem.storage.writer import Cause

log = logging.getLogger(__name__)

UNTOUCHED_DAYS = 90
MAX_ITEM_CHARS = 240
_DATA_OPEN = "<!-- wolfmem-audit-data"
_DATA_BLOCK = re.compile(r"<!-- wolfmem-audit-data\n(.*?)\n-->", re.DOTALL)
_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
_UPCOMING = re.compile(
    r"\b(upcoming|scheduled|planned|plans? to|will|next|due|deadline|coming up|expected|starts?|"
    r"begins?|launch(?:es)?|on track for|until)\b",
    re.IGNORECASE,
)
_MONTH_NAMES = {m.lower(): n for n, m in enumerate(
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"], 1)}
_MONTH_RE = "|".join(sorted({*(_MONTH_NAMES), *(m[:3] for m in _MONTH_NAMES)}, key=len, reverse=True))
_DATES = (
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b"),
    re.compile(rf"\b(?P<mn>{_MONTH_RE})\.? (?P<d>\d{{1,2}})(?:st|nd|rd|th)?,? (?P<y>\d{{4}})\b", re.IGNORECASE),
    re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)? (?P<mn>{_MONTH_RE})\.?,? (?P<y>\d{{4}})\b", re.IGNORECASE),
)


@dataclass
class Finding:
    """One thing the audit found in a curated file, and what became of its proposed change."""

    kind: str  # stale | over-general | contradicted | duplicate | empty-section | past-upcoming | untouched
    file: str
    lines: list[str]
    detail: str
    evidence: list[str] = field(default_factory=list)
    source: str = "mechanical"  # or "llm"
    change: dict[str, Any] | None = None  # validate's change form: kind, old, new, reason, source
    hash: str = ""  # of the lines the change touches, to tell a stale staged change
    outcome: str = "reported"  # reported | staged | applied | rejected | stale | not-found | skipped-cas | failed
    reasons: list[str] = field(default_factory=list)


def line_hash(lines: list[str]) -> str:
    """The content hash of the lines a change touches."""
    return hashlib.sha256("\n".join(line.rstrip() for line in lines).encode()).hexdigest()[:16]


# -- mechanical findings (pure) -----------------------------------------------------------------------------
def mechanical_findings(rel: str, file_text: str, first_seen: dict[str, str], today: date) -> list[Finding]:
    """Duplicates, empty sections, past dates marked upcoming and sections untouched for 90 days."""
    parsed = markdown.parse(file_text)
    lines = file_text.splitlines()
    raw = {fact.line: lines[fact.line - 1].rstrip() for fact in parsed.facts if fact.line <= len(lines)}
    found: list[Finding] = []
    found += _duplicates(rel, parsed, raw)
    for section in parsed.sections:
        facts = [f for f in parsed.facts if section.line < f.line <= section.end]
        if not facts:
            found.append(Finding("empty-section", rel, [f"## {section.heading}"], "the section has no facts"))
            continue
        days = [first_seen.get(fact_key(f.text)) for f in facts]
        if all(days) and max(days) < (today - timedelta(days=UNTOUCHED_DAYS)).isoformat():  # type: ignore[type-var]
            found.append(Finding(
                "untouched", rel, [f"## {section.heading}"],
                f"nothing in this section is newer than {max(days)} ({UNTOUCHED_DAYS}+ days); is it still current?",
                [f"first seen {max(days)}"]))
    for fact in parsed.facts:
        past = _past_date(fact.text, today)
        if past is not None and _UPCOMING.search(fact.text):
            found.append(Finding("past-upcoming", rel, [raw.get(fact.line, fact.text)],
                                 f"says it is upcoming, but {past.isoformat()} has passed"))
    return found


def _duplicates(rel: str, parsed: markdown.ParsedFile, raw: dict[int, str]) -> list[Finding]:
    found = []
    seen: list[markdown.Fact] = []
    by_stem: dict[str, set[int]] = defaultdict(set)
    for fact in parsed.facts:
        stems = set(tokens.content_stems(fact.text))
        # Only facts sharing a content word can be paraphrases; this keeps the pairs few.
        candidates = sorted(set().union(*(by_stem[s] for s in stems))) if stems else []
        for k in candidates:
            other = seen[k]
            if normalise(fact.text) == normalise(other.text) or relate(fact.text, other.text) is Relation.DUPLICATE:
                pair = [raw.get(other.line, other.text), raw.get(fact.line, fact.text)]
                found.append(Finding("duplicate", rel, pair, "these lines say the same thing"))
                break
        for stem in stems:
            by_stem[stem].add(len(seen))
        seen.append(fact)
    return found


def _past_date(fact: str, today: date) -> date | None:
    """The latest full date in the fact, if every date it names is before today."""
    dates = []
    for pattern in _DATES:
        for match in pattern.finditer(fact):
            parts = match.groupdict()
            month = int(parts["m"]) if parts.get("m") else _MONTH_NAMES.get(_full_month(parts["mn"]), 0)
            try:
                dates.append(date(int(parts["y"]), month, int(parts["d"])))
            except ValueError:
                continue
    return max(dates) if dates and max(dates) < today else None


def _full_month(name: str) -> str:
    name = name.lower().rstrip(".")
    return next((full for full in _MONTH_NAMES if full.startswith(name)), name)


# -- line edits (pure) ------------------------------------------------------------------------------------------
def locate(file_text: str, wanted: str) -> str | None:
    """The file's own line that `wanted` names: verbatim, or the same fact by its normalised text."""
    lines = [line.rstrip() for line in file_text.splitlines()]
    wanted = audit_strip(wanted)
    if wanted in lines:
        return wanted
    key = normalise(wanted)
    return next((line for line in lines if line.strip() and normalise(line) == key), None)


def audit_strip(line: str) -> str:
    """A line as the model quoted it, without the prompt's [first seen …] / [hand-edited] marks."""
    return re.sub(r"\s*\[(?:first seen [^\]]*|hand-edited[^\]]*)\]\s*$", "", line.rstrip())


def edit(file_text: str, old: list[str], new: str) -> str | None:
    """Remove the old lines (or replace them with the one new line); None if any old line is missing."""
    if not old:
        return None  # a change that names no line has nothing to act on
    lines = file_text.splitlines(keepends=True)
    stripped = [line.rstrip() for line in lines]
    positions = []
    for line in old:
        spots = [i for i, s in enumerate(stripped) if s == line.rstrip() and i not in positions]
        if not spots:
            return None
        positions.append(spots[0])
    first = min(positions)
    out = []
    for i, line in enumerate(lines):
        if i == first and new:
            ending = line[len(line.rstrip("\r\n")):]
            indent = line[: len(line) - len(line.lstrip())]
            body = new.strip() if new.strip().startswith("- ") else f"- {new.strip()}"
            out.append(indent + body + ending)
        elif i not in positions:
            out.append(line)
    return "".join(out)


def _change(item: prompting.AuditItem, old: list[str]) -> dict[str, Any] | None:
    """The validate-form change for a finding's action, or None for report-only."""
    reason = f"audit ({item.kind}): {item.explanation}" if item.explanation else f"audit: {item.kind}"
    if item.action == "remove":
        return {"kind": "removed", "old": old, "new": "", "reason": reason, "source": ""}
    if item.action == "replace" and item.new:
        new = item.new if item.new.startswith("- ") else f"- {item.new}"
        kind = "merged" if len(old) > 1 else "superseded"
        return {"kind": kind, "old": old, "new": new, "reason": reason, "source": ", ".join(item.evidence)}
    return None


# -- the run ------------------------------------------------------------------------------------------------------
def run_audit(
    memory: Memory, config: Config, month: str, now: datetime, *, apply: bool | None = None
) -> dict[str, Any]:
    """Audit the five curated files for `month` (YYYY-MM), write the report, apply or stage the changes."""
    if not _MONTH.match(month or ""):
        raise UsageError(f"month must look like 2026-10, not {month!r}")
    apply = config.audit_apply if apply is None else apply
    _check_report_path(memory, month)
    today = now.date()
    files = _read_files(memory)
    findings: list[Finding] = []
    for rel, (body, _) in files.items():
        findings += mechanical_findings(rel, body, memory.state.first_seen(rel), today)
    errors: dict[str, str] = {}
    usage: dict[str, int] = {}
    summaries: list[str] = []
    auditor = "offline (mechanical checks only; no LLM configured)"
    if config.llm_model:
        from wolfmem.llm import LLMClient, LLMSettings

        settings = LLMSettings.from_config(config)
        auditor = f"LLM auditor ({settings.model} at {settings.endpoint})"
        evidence = _evidence(memory, month, today)
        with LLMClient(settings) as client:
            for rel, (body, _) in files.items():
                if not markdown.parse(body).facts:
                    continue
                try:
                    summary, found = _ask(memory, client, rel, body, evidence, usage)
                except LLMError as exc:
                    errors[rel] = str(exc)
                    continue
                if summary:
                    summaries.append(f"{rel}: {summary}")
                findings += found
        _land_all(memory, files, [f for f in findings if f.change is not None], apply)
    audited = sum(1 for body, _ in files.values() if markdown.parse(body).facts) if config.llm_model else 0
    status = "ok" if not errors else "failed" if len(errors) >= audited else "partial"
    counts = _counts(findings)
    summary = _summary(auditor, findings, counts, errors)
    meta = {"month": month, "run_at": now.isoformat(timespec="seconds"), "auditor": auditor,
            "mode": "apply" if apply else "stage", "summary": summary, "model_summaries": summaries,
            "errors": errors, "llm": bool(config.llm_model)}
    report = _write_report(memory, meta, findings)
    return {"status": status, "summary": summary, "month": month, "report": report, "usage": usage,
            "counts": counts, "errors": errors, "findings": [asdict(f) for f in findings]}


def _read_files(memory: Memory) -> dict[str, tuple[str, str]]:
    files = {}
    for rel in CURATED_PATHS:
        try:
            data = memory.vault.read_or_empty(rel)
            files[rel] = (data.decode("utf-8"), content_hash(data))
        except (OSError, UnicodeDecodeError, OutsideVault) as exc:
            log.warning("audit skipped %s: %s", rel, exc)
    return files


def _evidence(memory: Memory, month: str, today: date) -> prompting.Evidence:
    episodes = []
    for rel, data in memory.vault.notes("episodes", f"{month}-*.md"):
        day = episode_date(rel)
        if day and day.startswith(month):
            episodes.append((rel, data.decode("utf-8", errors="replace")))
    logs = []
    for rel, data in memory.vault.notes("consolidated", "*-W*.md"):
        if rel.startswith(("consolidated/digest-", "consolidated/audit-")):
            continue
        section = prompting.curation_sections(data.decode("utf-8", errors="replace"), month)
        if section:
            logs.append((rel, section))
    return prompting.Evidence(month, today.isoformat(), tuple(episodes), tuple(logs))


def _ask(memory: Memory, client: Any, rel: str, body: str, evidence: prompting.Evidence,
         usage: dict[str, int]) -> tuple[str, list[Finding]]:
    """One LLM request auditing one file; its findings matched to the file's own lines."""

    annotated = annotate(FileInput(rel, body, memory.state.first_seen(rel), hand_lines_of(memory, rel, body)))
    system, user = prompting.build_prompt(rel, annotated, evidence)
    try:
        reply = client.complete_json(system, user, prompting.SCHEMA, "audit")
    except (RecursionError, ValueError) as exc:
        # json.loads raises these, not JSONDecodeError, for absurd nesting or huge numbers.
        raise LLMError(f"the model's audit reply is not usable JSON ({type(exc).__name__})") from None
    for key, value in reply.usage.items():
        usage[key] = usage.get(key, 0) + value
    summary, items = prompting.parse_reply(reply.data)
    found = []
    fact_lines = _fact_lines(body)
    for item in items:
        located = [locate(body, line) for line in item.lines]
        lines = [line for line in located if line is not None]
        finding = Finding(item.kind, rel, lines or [audit_strip(x) for x in item.lines], _safe(item.explanation),
                          [_safe(e) for e in item.evidence], source="llm")
        if not item.lines or None in located:
            finding.outcome, finding.reasons = "not-found", ["the lines it names are not in the file"]
        elif item.action != "keep" and not set(lines) <= fact_lines:
            # Removing a heading would silently move its facts under the section above.
            finding.outcome, finding.reasons = "rejected", ["it would change a title or heading, not a fact"]
        elif find_secret(item.new):
            finding.outcome, finding.reasons = "rejected", ["the replacement looks like a secret; never written"]
        else:
            finding.change = _change(item, lines)
            finding.hash = line_hash(lines) if finding.change else ""
        found.append(finding)
    return _safe(summary), found


def _fact_lines(body: str) -> set[str]:
    """The raw (right-stripped) lines of a file that hold facts."""
    lines = body.splitlines()
    return {lines[f.line - 1].rstrip() for f in markdown.parse(body).facts if f.line <= len(lines)}


def _land_all(memory: Memory, files: dict[str, tuple[str, str]], changed: list[Finding], apply: bool) -> None:
    """Check each change alone, then land (or stage) the good ones file by file."""
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in changed:
        by_file[finding.file].append(finding)
    for rel, group in by_file.items():
        body, revision = files[rel]
        good = [f for f in group if _check_alone(memory, rel, body, f)]
        if not apply:
            for finding in good:
                finding.outcome = "staged"
            continue
        _land_file(memory, rel, body, revision, good)


def _check_alone(memory: Memory, rel: str, body: str, finding: Finding) -> bool:
    """Validate one change on its own, so one bad change does not sink the others."""

    assert finding.change is not None
    candidate = edit(body, finding.change["old"], finding.change["new"])
    if candidate is None:
        finding.outcome, finding.reasons = "stale", ["its lines are no longer in the file"]
        return False
    outcome, _ = check_rewrite(memory, rel, body, candidate, [finding.change])
    if outcome.status == "rejected":
        finding.outcome, finding.reasons = "rejected", outcome.reasons
        return False
    if outcome.status == "unchanged":
        finding.outcome = "reported"
        return False
    return True


def _land_file(memory: Memory, rel: str, body: str, revision: str, good: list[Finding]) -> None:
    """Combine a file's checked changes into one rewrite and land it through curation's path."""

    new_text, changes, landing = body, [], []
    for finding in good:
        assert finding.change is not None
        candidate = edit(new_text, finding.change["old"], finding.change["new"])
        if candidate is None:
            finding.outcome, finding.reasons = "rejected", ["overlaps another change to the same lines"]
            continue
        new_text = candidate
        changes.append(finding.change)
        landing.append(finding)
    if not landing:
        return
    outcome = apply_rewrite(memory, rel, body, new_text, changes, base_revision=revision, cause=Cause.AUDIT)
    for finding in landing:
        if outcome.status == "written":
            finding.outcome = "applied"
        else:
            finding.outcome, finding.reasons = outcome.status, outcome.reasons


# -- staged changes -------------------------------------------------------------------------------------------------
def apply_staged(memory: Memory, month: str) -> dict[str, Any]:
    """Apply the changes a staged audit report proposes; a change whose lines changed since is marked stale."""
    rel = report_rel(month)
    try:
        report = memory.vault.read_bytes(rel).decode("utf-8")
    except FileNotFoundError:
        others = [name.rsplit("/", 1)[-1] for name in memory.vault.names("consolidated", "audit-*.md")]
        hint = f"; audit reports here: {', '.join(others)}" if others else "; run `wolfmem audit --now` first"
        raise UsageError(f"there is no audit report for {month} ({rel}){hint}") from None
    meta, findings = _load_report(report, rel)
    staged = [f for f in findings if f.outcome == "staged" and f.change is not None]
    for finding in staged:
        if finding.file not in CURATED_PATHS or not _well_formed(finding.change):
            # The report is a file in the vault: someone may have edited its data block.
            finding.outcome, finding.reasons = "rejected", ["the staged change is malformed; not applied"]
            finding.change = finding.change if _well_formed(finding.change) else None
    staged_ok = [f for f in staged if f.outcome == "staged"]
    files = _read_files(memory)
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in staged_ok:
        by_file[finding.file].append(finding)
    for file_rel, group in by_file.items():
        body, revision = files.get(file_rel, ("", ""))
        fresh = []
        for finding in group:
            current = [locate_exact(body, line) for line in finding.change["old"]]  # type: ignore[index]
            if None in current or line_hash([c for c in current if c]) != finding.hash:
                finding.outcome, finding.reasons = "stale", ["its lines changed since the audit; not applied"]
            elif _check_alone(memory, file_rel, body, finding):
                fresh.append(finding)
        _land_file(memory, file_rel, body, revision, fresh)
    counts = _counts(staged)
    summary = (f"{counts.get('applied', 0)} applied, {counts.get('stale', 0)} stale, "
               f"{counts.get('rejected', 0)} rejected of {len(staged)} staged change(s)")
    meta["applied_summary"] = summary
    _write_report(memory, meta, findings)
    status = "noop" if not staged else "ok" if counts.get("applied", 0) == len(staged) else "partial"
    return {"status": status, "summary": summary, "month": month, "report": rel, "counts": counts,
            "changes": [asdict(f) for f in staged]}


def _well_formed(change: Any) -> bool:
    return (
        isinstance(change, dict)
        and change.get("kind") in ("removed", "merged", "superseded")
        and isinstance(change.get("old"), list)
        and bool(change["old"])
        and all(isinstance(line, str) for line in change["old"])
        and isinstance(change.get("new"), str)
    )


def locate_exact(file_text: str, line: str) -> str | None:
    """The line itself if the file still holds it verbatim."""
    wanted = line.rstrip()
    return wanted if wanted in (x.rstrip() for x in file_text.splitlines()) else None


# -- the report --------------------------------------------------------------------------------------------------------
def latest_report_month(memory: Memory) -> str | None:
    """The month of the newest audit report in the vault, if any."""
    months = sorted(
        month
        for rel in memory.vault.names("consolidated", "audit-*.md")
        if _MONTH.match(month := rel.removeprefix("consolidated/audit-").removesuffix(".md"))
    )
    return months[-1] if months else None


def report_rel(month: str) -> str:
    """The vault-relative audit report of a month."""
    if not _MONTH.match(month or ""):
        raise UsageError(f"month must look like 2026-10, not {month!r}")
    return f"consolidated/audit-{month}.md"


def _check_report_path(memory: Memory, month: str) -> None:
    """Refuse to overwrite a file at the report's path that is not an audit report (a person's own note)."""
    rel = report_rel(month)
    try:
        existing = memory.vault.read_or_empty(rel).decode("utf-8")
    except (OSError, UnicodeDecodeError, OutsideVault):
        existing = "?"  # unreadable: certainly not one of ours
    if existing.strip() and _DATA_BLOCK.search(existing) is None:
        raise UsageError(f"{rel} exists and is not a wolfmem audit report; rename it, then run the audit again")


def _write_report(memory: Memory, meta: dict[str, Any], findings: list[Finding]) -> str:
    rel = report_rel(meta["month"])
    body = render_report(meta, findings)
    memory.writer.put(rel, body, cause=Cause.REPORT)
    return rel


def render_report(meta: dict[str, Any], findings: list[Finding]) -> str:
    """The report: a header, each finding with its evidence and change, and the data `audit apply` reads."""
    mode = ("changes applied" if meta["mode"] == "apply" else
            f"changes staged: run `wolfmem audit apply --month {meta['month']}` to apply them")
    if not meta.get("llm"):
        mode = "report only: nothing was changed"
    lines = [f"# Audit {meta['month']}", "", f"Run {meta['run_at']} by the {meta['auditor']}; {mode}.", "",
             _safe(meta["summary"])]
    if meta.get("applied_summary"):
        lines += ["", f"`wolfmem audit apply`: {meta['applied_summary']}."]
    for rel, error in sorted(meta.get("errors", {}).items()):
        lines += ["", f"{rel} was not audited: {_safe(error)}"]
    for title, chosen in (("Findings", [f for f in findings if f.source == "llm"]),
                          ("Mechanical findings", [f for f in findings if f.source != "llm"])):
        if not chosen:
            continue
        lines += ["", f"## {title}"]
        for number, finding in enumerate(chosen, 1):
            lines += ["", f"### {number}. {_safe(finding.kind)} in {_safe(finding.file)}"]
            lines += [f"- Line: {_quote(line)}" for line in finding.lines]
            lines.append(f"- Why: {_safe(finding.detail)}")
            if finding.evidence:
                lines.append("- Evidence: " + "; ".join(_safe(e) for e in finding.evidence))
            if finding.change:
                new = finding.change["new"]
                lines.append(f"- Proposed: {finding.change['kind']}" + (f" → {_quote(new)}" if new else ""))
            lines.append(f"- Outcome: {finding.outcome}"
                         + (" (" + "; ".join(_safe(r) for r in finding.reasons) + ")" if finding.reasons else ""))
    data = json.dumps({"meta": meta, "findings": [asdict(f) for f in findings]}, indent=1, ensure_ascii=False)
    # An HTML comment may not contain "--"; JSON allows the escape inside strings, where it can only occur.
    data = data.replace("--", "-\\u002d")
    lines += ["", f"{_DATA_OPEN}\n{data}\n-->"]
    return "\n".join(lines) + "\n"


def _load_report(report: str, rel: str) -> tuple[dict[str, Any], list[Finding]]:
    match = _DATA_BLOCK.search(report)
    if match is None:
        raise UsageError(f"{rel} holds no audit data (was it edited by hand?); run `wolfmem audit --now` again")
    try:
        data = json.loads(match.group(1))
        return data["meta"], [Finding(**item) for item in data["findings"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{rel}: the audit data is damaged ({exc}); run `wolfmem audit --now` again") from None


def _counts(findings: list[Finding]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for finding in findings:
        counts[finding.outcome] += 1
    return dict(counts)


def _summary(auditor: str, findings: list[Finding], counts: dict[str, int], errors: dict[str, str]) -> str:
    llm = [f for f in findings if f.source == "llm"]
    mechanical = len(findings) - len(llm)
    if auditor.startswith("offline"):
        return f"Offline audit: {mechanical} mechanical finding(s), reported only; nothing was changed."
    outcome = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()) if state != "reported")
    failed = f"; {len(errors)} file(s) not audited ({next(iter(errors.values()))})" if errors else ""
    return (f"Audit: {len(llm)} finding(s) from the model ({outcome or 'no changes proposed'}) and "
            f"{mechanical} mechanical finding(s){failed}.")


def _safe(value: str) -> str:
    return quote_untrusted(value, MAX_ITEM_CHARS)


def _quote(line: str) -> str:
    return "“" + _safe(line) + "”"
