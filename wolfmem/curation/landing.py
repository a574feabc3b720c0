"""The one landing path for curated rewrites, shared by nightly curation, the audit and staged applies.

validate → compare-and-exchange through the writer against the revision the curator read → `.bak`,
history, provenance and reindex (the writer's job). Nothing lands that validation refuses.
"""

from __future__ import annotations

from wolfmem.core import markdown
from wolfmem.curation.contract import FileOutcome
from wolfmem.curation.validate import hand_edited_lines, validate
from wolfmem.errors import FileChanged, WolfmemError
from wolfmem.memory.facade import Memory
from wolfmem.storage.vault import CURATED_PATHS, content_hash, template_text
from wolfmem.storage.writer import Cause, Edit


def hand_lines_of(memory: Memory, rel: str, text: str) -> frozenset[str]:
    """Lines of a curated file a person wrote since wolfmem last wrote or accepted it."""
    name = rel.rsplit("/", 1)[-1].removesuffix(".md")
    return frozenset(hand_edited_lines(text, memory.state.snapshot_lines(rel), template_text(name)))


def _title(rel: str, text: str) -> str:
    return markdown.parse(text).title or rel.rsplit("/", 1)[-1].removesuffix(".md").title()


def check_rewrite(
    memory: Memory, rel: str, old_text: str, new_text: str, changes: list[dict]
) -> tuple[FileOutcome, str]:
    """Validate without writing: ("proposed", repaired text), ("unchanged", old) or ("rejected", old)."""
    if rel not in CURATED_PATHS:
        reason = f"{rel} is not one of the five curated files; curation never touches it"
        return FileOutcome("rejected", [reason]), old_text
    verdict = validate(
        old_text, new_text, changes, hand_lines=hand_lines_of(memory, rel, old_text), title=_title(rel, old_text)
    )
    if not verdict.ok:
        return FileOutcome("rejected", verdict.reasons, verdict.changes), old_text
    if verdict.text == old_text:
        return FileOutcome("unchanged", [], verdict.changes), old_text
    return FileOutcome("proposed", verdict.repairs, verdict.changes), verdict.text


def apply_rewrite(
    memory: Memory,
    rel: str,
    old_text: str,
    new_text: str,
    changes: list[dict],
    *,
    base_revision: str,
    cause: Cause = Cause.CURATION,
) -> FileOutcome:
    """Validate a rewrite, then land it through the writer only if the file is still at base_revision."""
    checked, text = check_rewrite(memory, rel, old_text, new_text, changes)
    if checked.status != "proposed":
        return checked

    def land(current: str) -> Edit[None]:
        if content_hash(current.encode("utf-8")) != base_revision:
            raise FileChanged(rel)
        return Edit(text)

    try:
        written = memory.writer.edit(rel, land, cause=cause, backup=True)
    except FileChanged:
        return FileOutcome(
            "skipped-cas", [f"{rel} changed while the curator was working; left as it is for the next run"],
            checked.changes,
        )
    except WolfmemError as exc:
        return FileOutcome("failed", [f"could not write {rel}: {exc}"], checked.changes)
    return FileOutcome("written", checked.reasons, checked.changes, written.revision)
