"""The human-readable curation log: a `## Curation YYYY-MM-DD` section in `consolidated/YYYY-WNN.md`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

from wolfmem.core.credentials import find_secret
from wolfmem.core.untrusted import WITHHELD_SECRET, quote_untrusted
from wolfmem.curation.contract import Change, FileOutcome
from wolfmem.storage.writer import Cause, VaultWriter

MAX_ITEM_CHARS = 200


def log_rel(day: date) -> str:
    """The vault-relative log file of a day's ISO week, e.g. consolidated/2026-W48.md."""
    year, week, _ = day.isocalendar()
    return f"consolidated/{year}-W{week:02d}.md"


def _item(text: str) -> str:
    """A change-list item, quoted as untrusted model output (the log is indexed and searched by agents)."""
    return quote_untrusted(text, MAX_ITEM_CHARS)


def _paragraph(text: str) -> str:
    flat = " ".join(text.split())
    return WITHHELD_SECRET if find_secret(flat) else flat


def _change_line(change: Change) -> str:
    kind = change.kind.value
    old = ", ".join(f"“{_item(line)}”" for line in change.old)
    new = f"“{_item(change.new)}”" if change.new else ""
    reason = f" ({_item(change.reason)})" if change.reason else ""
    source = f" [from {_item(change.source)}]" if change.source else ""
    if kind == "added":
        return f"- added {new}{source}{reason}"
    if kind == "removed":
        return f"- removed {old}{reason}"
    if kind == "filed":
        return f"- filed {old}{reason}"
    if kind == "section":  # a heading added, renamed or removed, or a fact under another heading
        return f"- section {old or '(new)'} → {new or '(removed)'}{reason}"
    return f"- {kind} {old} → {new}{reason}"


def render_entry(
    day: str,
    curator_label: str,
    status: str,
    summary: str,
    files: Mapping[str, FileOutcome],
    conflicts: list[str],
) -> str:
    """The markdown section for one run; a no-op run is the heading and one line."""
    lines = [f"## Curation {day}", ""]
    if status == "noop" and not any(o.status != "unchanged" for o in files.values()):
        lines.append(_paragraph(summary))
    else:
        lines += [_paragraph(f"{summary} Curator: {curator_label}."), ""]
        for rel, outcome in files.items():
            lines.append(f"### {rel}: {outcome.status}")
            if outcome.status in ("written", "proposed", "staged"):
                lines += [_change_line(change) for change in outcome.changes] or ["- (no change list)"]
            if outcome.archived:
                lines.append(f"- archived {len(outcome.archived)} fact(s) that left the file "
                             f"(search with sources=['archive']; `wolfmem restore --fact REF` puts one back)")
            lines += [f"- {_item(reason)}" for reason in outcome.reasons]
            lines.append("")
    if conflicts:
        lines += ["", "Sync conflicts (conflict copies are never curated; each is merged into its file):", ""]
        lines += [f"- {_item(item)}" for item in conflicts]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def append_log(writer: VaultWriter, day: date, entry: str) -> str:
    """Append an entry to the week's log through the writer (which indexes it); return its path."""
    rel = log_rel(day)

    def block(old: str) -> str:
        head = "" if old.strip() else f"# Curation log {rel.rsplit('/', 1)[-1].removesuffix('.md')}\n"
        if old and not old.endswith("\n"):
            head = "\n"
        return f"{head}\n{entry}"

    writer.append(rel, block, cause=Cause.LOG)
    return rel
