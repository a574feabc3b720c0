"""The audit report `consolidated/audit-YYYY-MM.md`: rendered for people, with the data `audit apply` reads back."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from typing import Any

from wolfmem.curation.audit.findings import Finding, quote_line, safe_text
from wolfmem.errors import UsageError, WolfmemError
from wolfmem.memory.facade import Memory
from wolfmem.storage.writer import Cause

_DATA_OPEN = "<!-- wolfmem-audit-data"

_DATA_BLOCK = re.compile(r"<!-- wolfmem-audit-data\n(.*?)\n-->", re.DOTALL)

MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


def report_rel(month: str) -> str:
    """The vault-relative audit report of a month."""
    if not MONTH.match(month or ""):
        raise UsageError(f"month must look like 2026-10, not {month!r}")
    return f"consolidated/audit-{month}.md"


def latest_report_month(memory: Memory) -> str | None:
    """The month of the newest audit report in the vault, if any."""
    months = sorted(
        month
        for rel in memory.vault.names("consolidated", "audit-*.md")
        if MONTH.match(month := rel.removeprefix("consolidated/audit-").removesuffix(".md"))
    )
    return months[-1] if months else None


def check_report_path(memory: Memory, month: str) -> None:
    """Refuse to overwrite a file at the report's path that is not an audit report (a person's own note)."""
    rel = report_rel(month)
    try:
        existing = memory.vault.read_or_empty(rel).decode("utf-8")
    except (OSError, UnicodeDecodeError, WolfmemError):
        existing = "?"  # unreadable: certainly not one of ours
    if existing.strip() and _DATA_BLOCK.search(existing) is None:
        raise UsageError(f"{rel} exists and is not a wolfmem audit report; rename it, then run the audit again")


def write_report(memory: Memory, meta: dict[str, Any], findings: list[Finding]) -> str:
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
             safe_text(meta["summary"])]
    if meta.get("applied_summary"):
        lines += ["", f"`wolfmem audit apply`: {meta['applied_summary']}."]
    for rel, error in sorted(meta.get("errors", {}).items()):
        lines += ["", f"{rel} was not audited: {safe_text(error)}"]
    for title, chosen in (("Findings", [f for f in findings if f.source == "llm"]),
                          ("Mechanical findings", [f for f in findings if f.source != "llm"])):
        if not chosen:
            continue
        lines += ["", f"## {title}"]
        for number, finding in enumerate(chosen, 1):
            lines += ["", f"### {number}. {safe_text(finding.kind)} in {safe_text(finding.file)}"]
            lines += [f"- Line: {quote_line(line)}" for line in finding.lines]
            lines.append(f"- Why: {safe_text(finding.detail)}")
            if finding.evidence:
                lines.append("- Evidence: " + "; ".join(safe_text(e) for e in finding.evidence))
            if finding.change:
                new = finding.change["new"]
                lines.append(f"- Proposed: {finding.change['kind']}" + (f" → {quote_line(new)}" if new else ""))
            lines.append(f"- Outcome: {finding.outcome}"
                         + (" (" + "; ".join(safe_text(r) for r in finding.reasons) + ")" if finding.reasons else ""))
    data = json.dumps({"meta": _meta_data(meta), "findings": [_finding_data(f) for f in findings]}, indent=1,
                      ensure_ascii=False)
    # An HTML comment may not contain "--"; JSON allows the escape inside strings, where it can only occur.
    data = data.replace("--", "-\\u002d")
    lines += ["", f"{_DATA_OPEN}\n{data}\n-->"]
    return "\n".join(lines) + "\n"


def _meta_data(meta: dict[str, Any]) -> dict[str, Any]:
    """The run's facts for the data block, with the text a model or a server wrote quoted."""
    data = dict(meta)
    for key in ("summary", "applied_summary"):
        if isinstance(data.get(key), str):
            data[key] = safe_text(data[key])
    data["model_summaries"] = [safe_text(str(text)) for text in data.get("model_summaries") or []]
    data["errors"] = {str(rel): safe_text(str(error)) for rel, error in (data.get("errors") or {}).items()}
    return data


def _finding_data(finding: Finding) -> dict[str, Any]:
    """A finding for the data block: a staged change verbatim (`audit apply` needs it), all other text quoted.

    A staged change quotes no secret and no instruction: the audit refuses to stage one that would.
    """
    data = asdict(finding)
    data["detail"] = safe_text(finding.detail)
    data["evidence"] = [safe_text(item) for item in finding.evidence]
    data["reasons"] = [safe_text(reason) for reason in finding.reasons]
    change = dict(finding.change) if finding.change else None
    if change is not None:
        change["reason"] = safe_text(str(change.get("reason", "")))
        change["source"] = safe_text(str(change.get("source", "")))
    if finding.outcome != "staged":
        data["lines"] = [safe_text(line) for line in finding.lines]
        if change is not None:
            change["old"] = [safe_text(str(line)) for line in change.get("old") or []]
            change["new"] = safe_text(str(change.get("new", "")))
    data["change"] = change
    return data


def load_report(report: str, rel: str) -> tuple[dict[str, Any], list[Finding]]:
    match = _DATA_BLOCK.search(report)
    if match is None:
        raise UsageError(f"{rel} holds no audit data (was it edited by hand?); run `wolfmem audit --now` again")
    try:
        data = json.loads(match.group(1))
        return data["meta"], [Finding(**item) for item in data["findings"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{rel}: the audit data is damaged ({exc}); run `wolfmem audit --now` again") from None


def summarise(auditor: str, findings: list[Finding], counts: dict[str, int], errors: dict[str, str]) -> str:
    llm = [f for f in findings if f.source == "llm"]
    mechanical = len(findings) - len(llm)
    if auditor.startswith("offline"):
        return f"Offline audit: {mechanical} mechanical finding(s), reported only; nothing was changed."
    outcome = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()) if state != "reported")
    failed = f"; {len(errors)} file(s) not audited ({next(iter(errors.values()))})" if errors else ""
    return (f"Audit: {len(llm)} finding(s) from the model ({outcome or 'no changes proposed'}) and "
            f"{mechanical} mechanical finding(s){failed}.")
