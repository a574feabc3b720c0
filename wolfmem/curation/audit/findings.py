"""What an audit finds: mechanical checks, findings matched to a file's own lines, and line-level edits."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from typing import Any

from wolfmem.core import markdown
from wolfmem.core.credentials import find_secret
from wolfmem.core.facts import fact_key, normalise
from wolfmem.core.untrusted import quote_untrusted
from wolfmem.curation.audit import prompting
from wolfmem.curation.audit.support import WITHHELD_REF, unsupported
from wolfmem.curation.candidates import DuplicateFinder
from wolfmem.curation.contract import Change, ChangeKind

UNTOUCHED_DAYS = 90

MAX_ITEM_CHARS = 240

_UPCOMING = re.compile(
    r"\b(upcoming|scheduled|planned|plans? to|will|next|due|deadline|coming up|expected|starts?|"
    r"begins?|launch(?:es)?|on track for|until)\b",
    re.IGNORECASE,
)

_MONTH_NAMES = {m.lower(): n for n, m in enumerate(
    ["January", "February", "March", "April", "May", "June",
     "July", "August", "September", "October", "November", "December"], 1)}

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
    change: Change | None = None  # the line-level change it proposes, in curation's form
    hash: str = ""  # of the lines the change touches, to tell a stale staged change
    outcome: str = "reported"  # reported | staged | applied | rejected | stale | not-found | skipped-cas | failed
    reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {**asdict(self), "change": self.change.to_dict() if self.change else None}


# The kinds of change an audit proposes: a removal, or lines replaced by one line.
AUDIT_CHANGE_KINDS = (ChangeKind.REMOVED, ChangeKind.MERGED, ChangeKind.SUPERSEDED)


def staged_change(raw: Any) -> Change | None:
    """A change read back from a report's data block (a file in the vault, so maybe edited); None if malformed."""
    if not isinstance(raw, dict) or raw.get("kind") not in AUDIT_CHANGE_KINDS:
        return None
    old, new = raw.get("old"), raw.get("new")
    if not isinstance(old, list) or not old or not isinstance(new, str):
        return None
    if not all(isinstance(line, str) for line in old):
        return None
    return Change(ChangeKind(raw["kind"]), tuple(old), new, str(raw.get("reason") or ""), str(raw.get("source") or ""))


def line_hash(lines: list[str]) -> str:
    """The content hash of the lines a change touches."""
    return hashlib.sha256("\n".join(line.rstrip() for line in lines).encode()).hexdigest()[:16]


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
        days = [day for f in facts if (day := first_seen.get(fact_key(f.text)))]
        if len(days) == len(facts) and max(days) < (today - timedelta(days=UNTOUCHED_DAYS)).isoformat():
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
    # Each fact meets only the earlier facts that could be its duplicate (candidates.DuplicateFinder).
    finder = DuplicateFinder([fact.text for fact in parsed.facts])
    for number, fact in enumerate(parsed.facts):
        match = finder.find(fact.text)
        if match is not None:
            other = parsed.facts[match]
            pair = [raw.get(other.line, other.text), raw.get(fact.line, fact.text)]
            found.append(Finding("duplicate", rel, pair, "these lines say the same thing"))
        finder.keep(fact.text, number)
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


def locate(file_text: str, wanted: str) -> str | None:
    """The file's own line that `wanted` names: verbatim, or the same fact by its normalised text."""
    lines = [line.rstrip() for line in file_text.splitlines()]
    wanted = audit_strip(wanted)
    if wanted in lines:
        return wanted
    key = normalise(wanted)
    return next((line for line in lines if line.strip() and normalise(line) == key), None)


def locate_exact(file_text: str, line: str) -> str | None:
    """The line itself if the file still holds it verbatim."""
    wanted = line.rstrip()
    return wanted if wanted in (x.rstrip() for x in file_text.splitlines()) else None


def audit_strip(line: str) -> str:
    """A line as the model quoted it, without the prompt's [first seen …] / [hand-edited] marks."""
    return re.sub(r"\s*\[(?:first seen [^\]]*|hand-edited[^\]]*)\]\s*$", "", line.rstrip())


def edit(file_text: str, old: Sequence[str], new: str) -> str | None:
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


def change_of(item: prompting.AuditItem, old: list[str]) -> Change | None:
    """The curation-form change for a finding's action, or None for report-only."""
    # The reason travels into the archive and the report: quoted like everything else the model wrote.
    reason = f"audit ({item.kind}): {safe_text(item.explanation)}" if item.explanation else f"audit: {item.kind}"
    if item.action == "remove":
        return Change(ChangeKind.REMOVED, tuple(old), reason=reason)
    if item.action == "replace" and item.new:
        new = item.new if item.new.startswith("- ") else f"- {item.new}"
        kind = ChangeKind.MERGED if len(old) > 1 else ChangeKind.SUPERSEDED
        return Change(kind, tuple(old), new, reason, ", ".join(item.evidence))
    return None


_REF_TOKEN = re.compile(r"[^\s,;()\[\]<>\"']+")


def confine_refs(evidence: list[str], inside: Callable[[str], bool]) -> list[str]:
    """Evidence with every ref that names no file inside the vault withheld ("first seen …" stays).

    A token is a ref when it holds a slash or names a markdown file; `inside` says whether it
    resolves to a file in the vault (no `..`, no absolute path, no symlink out).
    """
    out = []
    for item in evidence:
        refs = [token for token in _REF_TOKEN.findall(item) if "/" in token or "\\" in token or token.endswith(".md")]
        out.append(item if all(inside(ref) for ref in refs) else WITHHELD_REF)
    return out


def fact_lines(body: str) -> set[str]:
    """The raw (right-stripped) lines of a file that hold facts."""
    lines = body.splitlines()
    return {lines[f.line - 1].rstrip() for f in markdown.parse(body).facts if f.line <= len(lines)}


def count_outcomes(findings: list[Finding]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for finding in findings:
        counts[finding.outcome] += 1
    return dict(counts)


def safe_text(value: str) -> str:
    return quote_untrusted(value, MAX_ITEM_CHARS)


def quote_line(line: str) -> str:
    return "“" + safe_text(line) + "”"


def matched(rel: str, body: str, items: list[prompting.AuditItem]) -> list[Finding]:
    """An auditor's claims matched to the file's own lines; a claim that names no real fact line changes nothing."""
    found = []
    facts = fact_lines(body)
    for item in items:
        located = [locate(body, line) for line in item.lines]
        lines = [line for line in located if line is not None]
        finding = Finding(item.kind, rel, lines or [audit_strip(x) for x in item.lines], safe_text(item.explanation),
                          [safe_text(e) for e in item.evidence], source="llm")
        if not item.lines or None in located:
            finding.outcome, finding.reasons = "not-found", ["the lines it names are not in the file"]
        elif item.action != "keep" and not set(lines) <= facts:
            # Removing a heading would silently move its facts under the section above.
            finding.outcome, finding.reasons = "rejected", ["it would change a title or heading, not a fact"]
        elif find_secret(item.new):
            finding.outcome, finding.reasons = "rejected", ["the replacement looks like a secret; never written"]
        elif item.action != "keep" and (why := unsupported(finding.detail, finding.evidence)):
            finding.outcome, finding.reasons = "rejected", [why]
        else:
            finding.change = change_of(item, lines)
            finding.hash = line_hash(lines) if finding.change else ""
        found.append(finding)
    return found
