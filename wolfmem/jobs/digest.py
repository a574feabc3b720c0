"""The weekly digest (no LLM): a few lines on the week's episodes, saves, new sections and conflict copies."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.errors import WolfmemError
from wolfmem.storage.services import VaultServices
from wolfmem.storage.vault import CURATED_PATHS
from wolfmem.storage.writer import Cause


def write_digest(services: VaultServices, week: str, last_day: date, *, dry_run: bool = False) -> dict[str, Any]:
    """Write `consolidated/digest-<week>.md`: the week's episodes, saves and new sections, in a few lines."""
    first_day = last_day - timedelta(days=6)
    days = {(first_day + timedelta(days=n)).isoformat() for n in range(7)}
    entries = 0
    for day in sorted(days):
        try:
            data = services.vault.read_bytes(f"episodes/{day}.md")
        except (OSError, WolfmemError):
            continue
        entries += len(markdown.parse(data.decode("utf-8", errors="replace")).sections)
    saves = 0
    new_sections: list[str] = []
    for rel in CURATED_PATHS:
        seen = services.state.first_seen(rel)
        saves += sum(1 for day in seen.values() if day in days)
        try:
            parsed = markdown.parse(services.vault.read_bytes(rel).decode("utf-8", errors="replace"))
        except (OSError, WolfmemError):
            continue
        for section in parsed.sections:
            firsts = [seen.get(fact_key(f.text)) for f in parsed.facts if f.section == section.heading]
            dated = [d for d in firsts if d]
            if dated and min(dated) in days:
                new_sections.append(f"{rel.rsplit('/', 1)[-1]}: {section.heading}")
    lines = [
        f"# Digest {week}",
        "",
        f"{first_day.isoformat()} – {last_day.isoformat()}",
        "",
        f"- Episode entries: {entries}",
        f"- Facts saved: {saves}",
        f"- New sections: {len(new_sections)}",
    ]
    lines += [f"  - {name}" for name in new_sections]
    conflicts = services.vault.conflict_copies()
    if conflicts:
        lines += ["", "## Conflict copies (never curated; merge them by hand)"]
        lines += [f"- {rel}" for rel in conflicts]
    text = "\n".join(lines) + "\n"
    rel = f"consolidated/digest-{week}.md"
    summary = f"{entries} episode entries, {saves} facts saved, {len(new_sections)} new sections"
    if not dry_run:
        services.writer.put(rel, text, cause=Cause.DIGEST)
    return {"status": "ok", "summary": summary, "path": rel}
