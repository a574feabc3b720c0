"""Sync engines' conflict-copy names and git's conflict markers, read without any engine running."""

from __future__ import annotations

import pytest

from wolfmem.core import markdown
from wolfmem.core.markers import hunks, resolve, without_markers
from wolfmem.core.merge import merge_copy
from wolfmem.core.syncnames import Engine, conflict_name


@pytest.mark.parametrize(("rel", "engine", "original"), [
    ("knowledge/people.sync-conflict-20261201-140509-ABCDEF7.md", Engine.SYNCTHING, "knowledge/people.md"),
    ("episodes/2026-12-01.sync-conflict-20261201-140509-ABCDEF7.md", Engine.SYNCTHING, "episodes/2026-12-01.md"),
    ("knowledge/people (conflicted copy 2026-12-01).md", Engine.DROPBOX, "knowledge/people.md"),
    ("knowledge/people (Alice's conflicted copy 2026-12-01 1).md", Engine.DROPBOX, "knowledge/people.md"),
    ("knowledge/people (conflict_on_2026-12-02).md", Engine.UNISON, "knowledge/people.md"),
    ("knowledge/people (conflict #1_on_2026-12-02).md", Engine.UNISON, "knowledge/people.md"),
    ("knowledge/people 2.md", Engine.ICLOUD, "knowledge/people.md"),
    ("episodes/2026-12-01 3.md", Engine.ICLOUD, "episodes/2026-12-01.md"),
    ("knowledge/people.md.orig", Engine.GIT, "knowledge/people.md"),
    (".wolfmem/lease.sync-conflict-20261201-140509-ABCDEF7.json", Engine.SYNCTHING, ".wolfmem/lease.json"),
])
def test_each_engines_conflict_copy_names_its_file(rel: str, engine: Engine, original: str) -> None:
    name = conflict_name(rel)
    assert name is not None and (name.engine, name.original) == (engine, original)


@pytest.mark.parametrize("rel", ["knowledge/people.md", "knowledge/chapter 2.md", "knowledge/notes/week 2.md",
                                 "knowledge/sync-conflict.md", "episodes/2026-12-01.md"])
def test_a_persons_own_note_is_no_conflict_copy(rel: str) -> None:
    assert conflict_name(rel) is None


PEOPLE = """# People

## Ann
- Ann is a nurse.
<<<<<<< HEAD
- Ann plays chess.
=======
- Ann lives in Oslo.
- Ann plays chess.
>>>>>>> origin/main

## Bob
<<<<<<< HEAD
## Bobby
=======
## Robert
>>>>>>> origin/main
- Bob is a pilot.
"""


def test_a_hunk_of_facts_keeps_both_sides_lines_once_and_no_markers() -> None:
    result = resolve(PEOPLE)
    assert result.resolved == 1 and [hunk.start for hunk in result.unresolved] == [13]
    ann = result.text.split("## Bob")[0]
    assert ann.count("- Ann plays chess.") == 1 and "- Ann lives in Oslo." in ann
    assert "<<<<<<<" not in ann and "=======" not in ann and ">>>>>>>" not in ann
    assert "<<<<<<< HEAD\n## Bobby" in result.text  # headings on both sides need a person


def test_a_diff3_hunk_keeps_what_one_side_removed_removed() -> None:
    text = "<<<<<<< a\n- one\n- two\n||||||| base\n- one\n- old\n=======\n- one\n- old\n- three\n>>>>>>> b\n"
    assert resolve(text).text == "- one\n- two\n- three\n"


def test_an_episode_hunk_resolves_whole_blocks() -> None:
    text = "# 2026-12-01\n<<<<<<< HEAD\n## 09:00 — a\nmet Ann\n=======\n## 09:05 — b\nmet Bob\n>>>>>>> o\n"
    assert resolve(text).unresolved and not resolve(text, facts_only=False).unresolved
    assert resolve(text, facts_only=False).text == "# 2026-12-01\n## 09:00 — a\nmet Ann\n## 09:05 — b\nmet Bob\n"


def test_marker_lines_are_never_facts_or_sections() -> None:
    parsed = markdown.parse(PEOPLE)
    assert not any(fact.text.startswith(("<<<<<<<", ">>>>>>>", "=======")) for fact in parsed.facts)
    assert all("=" not in section.heading for section in parsed.sections)
    assert len(markdown.split_lines(without_markers(PEOPLE))) == len(markdown.split_lines(PEOPLE))


def test_a_stray_marker_is_no_hunk() -> None:
    assert hunks("<<<<<<< not closed\n- a\n") == []
    assert hunks("- a\n=======\n") == []


def test_a_conflict_copy_merges_as_the_union_of_both_machines_saves() -> None:
    merged = merge_copy("# P\n- x\n- a1\n- a2\n", "# P\n- x\n- b1\n").text
    assert merged.splitlines() == ["# P", "- x", "- a1", "- a2", "- b1"]


def test_a_line_removed_on_purpose_stays_removed_and_nothing_else_is_lost() -> None:
    merged = merge_copy("# P\n- x\n- a1\n- a2\n", "# P\n- x\n- y\n- b1\n", gone={"- y"}.__contains__)
    assert merged.text.splitlines() == ["# P", "- x", "- a1", "- a2", "- b1"]


def test_a_line_both_sides_hold_is_kept_once_even_if_archived_before() -> None:
    merged = merge_copy("# P\n- x\n- a0\n", "# P\n- x\n- a0\n- b0\n", gone={"- a0"}.__contains__)
    assert merged.text.splitlines() == ["# P", "- x", "- a0", "- b0"]


def test_a_copy_from_a_machine_that_never_saw_a_save_keeps_it() -> None:
    merged = merge_copy("# P\n- b0\n", "# P\n- a0\n").text.splitlines()
    assert sorted(merged) == sorted(["# P", "- b0", "- a0"])


def test_a_copys_lines_go_to_their_own_section_and_no_section_is_doubled() -> None:
    current = "# P\n\n## Ann\n- a1\n\n## Bob\n- b1\n"
    copy = "# P\n\n## Bob\n- b1\n- b2\n\n## Ann\n- a1\n- a2\n\n## Cy\n- c1\n"
    merged = merge_copy(current, copy).text
    assert merged == "# P\n\n## Ann\n- a1\n- a2\n\n## Bob\n- b1\n- b2\n\n## Cy\n- c1\n"


@pytest.mark.parametrize(("current", "copy"), [("# P\n- x\n", "\ufeff# P\n- x\n- b1\n"),
                                               ("\ufeff# P\n- x\n", "# P\n- x\n- b1\n")],
                         ids=["copy from a machine that wrote a BOM", "file with a BOM, copy without"])
def test_a_byte_order_mark_on_one_side_adds_no_second_title(current: str, copy: str) -> None:
    merged = merge_copy(current, copy).text
    assert merged == current + "- b1\n"  # the file keeps its own start: a BOM only if it had one


def _union(current: str, copy: str, gone) -> str:
    return merge_copy(current, copy, gone).text


def test_a_hunk_of_new_sections_from_both_machines_is_merged_section_by_section() -> None:
    # Both machines saved into "## Dana" and "## Tom", new at the end of the file: git matched Dana's heading.
    text = ("# People\n\n## Dana\n<<<<<<< HEAD\n- Dana B keeps bees.\n\n## Tom\n- Tom B sails.\n=======\n"
            "- Dana A keeps bees.\n\n## Tom\n- Tom A sails.\n>>>>>>> 8a22af2\n")
    assert resolve(text).unresolved  # without a section merge, it needs a person (as any heading hunk)
    result = resolve(text, union=_union)
    assert not result.unresolved
    assert result.text == ("# People\n\n## Dana\n- Dana B keeps bees.\n- Dana A keeps bees.\n\n## Tom\n"
                           "- Tom B sails.\n- Tom A sails.\n")


def test_a_hunk_with_a_title_prose_or_a_renamed_heading_still_needs_a_person() -> None:
    for side in ("# People again\n", "Sarah's notes, in prose.\n", "### Details\n"):
        text = f"# P\n<<<<<<< HEAD\n- one\n=======\n{side}- two\n>>>>>>> o\n"
        assert resolve(text, union=_union).unresolved, side
    renamed = "# P\n<<<<<<< HEAD\n## Tom\n- Tom is a pilot.\n=======\n## Thomas\n- Thomas is a pilot.\n>>>>>>> o\n"
    assert resolve(renamed, union=_union).unresolved
