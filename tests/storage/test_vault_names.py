"""Which files are notes: `.md` in any case is indexed, and what is not indexed is named with why."""

from __future__ import annotations

from pathlib import Path

import pytest

from wolfmem import Memory
from wolfmem.storage.vault import NOT_MARKDOWN, OUTSIDE_INDEXED, episode_date, is_indexable


@pytest.mark.parametrize(
    ("rel", "indexed"),
    [
        ("knowledge/NOTES.MD", True),
        ("knowledge/Notes.Md", True),
        ("episodes/2026-11-20.MD", True),
        ("knowledge/notes.txt", False),
        ("knowledge/notes.markdown", False),
        ("knowledge/NOTES.MD.bak", False),
        ("knowledge/.NOTES.MD.swp", False),
        ("NOTES.MD", False),
    ],
)
def test_md_in_any_case_is_a_note(rel: str, indexed: bool) -> None:
    assert is_indexable(rel) is indexed


def test_an_upper_case_episode_name_still_has_its_day() -> None:
    assert episode_date("episodes/2026-11-20.MD") == "2026-11-20"


def test_upper_case_notes_are_found_and_what_is_left_out_is_named(memory: Memory, vault: Path) -> None:
    (vault / "knowledge/NOTES.MD").write_text("# Notes\n\n- The espresso machine is descaled monthly.\n")
    (vault / "knowledge/todo.txt").write_text("call the plumber\n")
    (vault / "knowledge/people.md.bak").write_text("# old\n")  # a backup: never a note, never named
    (vault / "knowledge/.obsidian").mkdir()
    (vault / "knowledge/.obsidian/app.json").write_text("{}")
    (vault / "README.md").write_text("# My vault\n")
    (vault / "ideas").mkdir()
    (vault / "ideas/garden.md").write_text("- Plant tomatoes in May.\n")
    (vault / "ideas/deeper").mkdir()
    (vault / "ideas/deeper/far.md").write_text("- Not looked for.\n")
    assert [hit.path for hit in memory.search("espresso descaled")] == ["knowledge/NOTES.MD"]
    assert memory.vault.not_indexed() == [
        ("README.md", OUTSIDE_INDEXED),
        ("ideas/garden.md", OUTSIDE_INDEXED),
        ("knowledge/todo.txt", NOT_MARKDOWN),
    ]

