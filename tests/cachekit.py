"""A knowledge file of 80 facts, the ways people write files, and the index a whole build gives (tests/search)."""

from __future__ import annotations

import os
from pathlib import Path

from wolfmem import Memory
from wolfmem.search.documents import decode_note, facts_of
from wolfmem.storage.vault import source_of

WORDS = ["alpha", "bravo", "kilo", "lima", "oscar", "papa"]
SECTIONS = 5


def people() -> str:
    """knowledge/people.md as a person keeps it: five sections of 16 facts (80, past the line-diff minimum)."""
    lines = ["# People", ""]
    for section in range(SECTIONS):
        lines += [f"## Person {section}", ""]
        lines += [f"- Person {section} likes {WORDS[k % 6]} and {WORDS[(k * 5) % 6]} as fact {section}x{k}."
                  for k in range(16)]
        lines.append("")
    return "\n".join(lines) + "\n"


def _in_place(path: Path, text: str) -> None:
    path.write_bytes(text.encode())


def _by_rename(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.new")
    temporary.write_bytes(text.encode())
    os.replace(temporary, path)


def _truncate_then_write(path: Path, text: str) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.flush()
        handle.write(text.encode())


WRITERS = (_in_place, _by_rename, _truncate_then_write)


def whole_build(memory: Memory) -> set[tuple[str, str, int, str, str, str]]:
    """What indexing every file whole gives, with the first-seen days the state holds."""
    out = set()
    for path in memory.vault.root.rglob("*.md"):
        rel = path.relative_to(memory.vault.root).as_posix()
        if source_of(rel) not in ("knowledge", "episodes", "archive") or "/." in f"/{rel}":
            continue
        text, _note = decode_note(path.read_bytes(), memory.config.index_max_file_bytes)
        seen = memory.state.first_seen(rel) if source_of(rel) == "knowledge" else {}
        out |= {(doc.doc_id, doc.path, doc.line, doc.text, doc.section, doc.date)
                for doc in facts_of(rel, text or "", seen)}
    return out


def held(memory: Memory) -> set[tuple[str, str, int, str, str, str]]:
    """What the index holds, in the shape of whole_build's."""
    return {(hit.doc_id, hit.path, hit.line, hit.text, hit.section, hit.date) for hit in memory.index.iter_facts()}
