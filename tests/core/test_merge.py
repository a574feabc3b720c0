"""merge3 and choose_base: the cases a person's editor and wolfmem's saves produce."""

from __future__ import annotations

import pytest

from wolfmem.core.merge import Conflict, choose_base, merge3, merge_copy

V1 = "# People\n\n## Sarah\n\n- Sarah is my manager.\n\n## Tom\n\n- Tom lives in Berlin.\n"
# wolfmem saved a fact under Sarah after V1.
V2 = V1.replace("- Sarah is my manager.\n", "- Sarah is my manager.\n- Sarah likes tea.\n")
# ... and another under Tom after V2.
V3 = V2 + "- Tom plays chess.\n"


def lines(text: str) -> list[str]:
    return text.splitlines()


@pytest.mark.parametrize(
    ("name", "base", "ours", "theirs", "merged"),
    [
        (
            "stale buffer + person line: the saves come back at their sections, the person's line stays",
            V1, V3, V1 + "- Tom has a cat.\n",
            V2 + "- Tom has a cat.\n- Tom plays chess.\n",
        ),
        (
            "person deletes an old saved line from the newest version: obeyed",
            V3, V3, V3.replace("- Sarah likes tea.\n", ""),
            V3.replace("- Sarah likes tea.\n", ""),
        ),
        (
            "a checkout of exactly an old version: every later save comes back",
            V1, V3, V1, V3,
        ),
        (
            "section-local additions on both sides, far apart, need no conflict",
            V2, V3, V2.replace("- Sarah likes tea.\n", "- Sarah likes tea.\n- Sarah runs the Lisbon office.\n"),
            V3.replace("- Sarah likes tea.\n", "- Sarah likes tea.\n- Sarah runs the Lisbon office.\n"),
        ),
        (
            "nothing changed on our side: theirs as written",
            V2, V2, V2.replace("Berlin", "Paris"), V2.replace("Berlin", "Paris"),
        ),
        (
            "the same change on both sides is taken once",
            V1, V2, V2, V2,
        ),
    ],
)
def test_merge3_cases(name: str, base: str, ours: str, theirs: str, merged: str) -> None:
    assert merge3(base, ours, theirs).text == merged, name


def test_conflict_keeps_theirs_then_ours_additions_without_markers() -> None:
    base = "## Tom\n\n- Tom lives in Berlin.\n"
    ours = "## Tom\n\n- Tom lives in Berlin.\n- Tom plays chess.\n"
    theirs = "## Tom\n\n- Tom lives in Paris now.\n"
    result = merge3(base, ours, theirs)
    assert lines(result.text) == ["## Tom", "", "- Tom lives in Paris now.", "- Tom plays chess."]
    assert result.conflicts == [Conflict(line=3, length=2)]
    assert not any(marker in result.text for marker in ("<<<<<<<", "=======", ">>>>>>>"))


def test_conflict_never_drops_a_line_of_either_side() -> None:
    base = "a\nb\nc\n"
    ours = "a\nB1\nB2\nc\n"
    theirs = "a\nX\nc\n"
    merged = lines(merge3(base, ours, theirs).text)
    assert merged == ["a", "X", "B1", "B2", "c"]


def test_curation_rewrite_overwritten_by_a_stale_buffer_keeps_the_rewrite_and_the_person_line() -> None:
    before = "## Tom\n\n- Tom lives in Berlin.\n- Tom moved to Berlin in 2020.\n\n## Ana\n\n- Ana is a designer.\n"
    curated = "## Tom\n\n- Tom has lived in Berlin since 2020.\n\n## Ana\n\n- Ana is a designer.\n"
    stale = before + "- Ana works from Porto.\n"
    merged = merge3(before, curated, stale).text
    assert merged == curated + "- Ana works from Porto.\n"


def test_repeated_and_blank_lines_keep_their_counts() -> None:
    base = "- x\n\n- x\n\n"
    ours = "- x\n\n- x\n\n- y\n"
    theirs = "- x\n\n- x\n\n- x\n"
    merged = merge3(base, ours, theirs)
    # Both appended at the end: a conflict, resolved as theirs then ours' addition; no "- x" is lost or doubled.
    assert lines(merged.text) == ["- x", "", "- x", "", "- x", "- y"]


def test_line_endings_follow_theirs() -> None:
    base = "a\nb\n"
    ours = "a\nb\nc\n"
    theirs = "a\r\nb\r\nd\r\n"
    assert merge3(base, ours, theirs).text == "a\r\nb\r\nd\r\nc\r\n"


# Some lines CRLF, some LF: a person's editor on Windows wrote part of the file, or a Windows machine synced it.
MIXED = ("# People\r\n\r\n## Sarah\n- Sarah is my manager.\r\n- Sarah lives in Porto.\n"
         "\n## Tom\r\n- Tom lives in Berlin.\n")


@pytest.mark.parametrize(("last", "tail"), [
    ("\n", "Berlin.\n- Tom plays chess.\r\n"),
    ("\r\n", "Berlin.\r\n- Tom plays chess.\r\n"),
    ("", "Berlin.\r\n- Tom plays chess."),  # the file ended without a line ending, and still does
], ids=["lf", "crlf", "none"])
def test_every_line_of_a_mixed_file_keeps_its_own_ending(last: str, tail: str) -> None:
    theirs = MIXED.removesuffix("\n") + last  # a stale buffer: it lacks the two saves
    ours = MIXED.replace("- Sarah lives in Porto.\n", "- Sarah lives in Porto.\n- Sarah likes tea.\r\n")
    ours += "- Tom plays chess.\n"
    merged = merge3(MIXED, ours, theirs).text
    # A line only ours gives takes theirs' first line ending, as a save's line does.
    head = MIXED.replace("- Sarah lives in Porto.\n", "- Sarah lives in Porto.\n- Sarah likes tea.\r\n")
    assert merged == head.removesuffix("Berlin.\n") + tail


def test_a_conflict_copy_merged_into_a_mixed_file_keeps_its_lines_endings() -> None:
    copy = MIXED.replace("\r\n", "\n").replace("- Tom lives in Berlin.\n", "- Tom lives in Berlin.\n- Tom has a cat.\n")
    merged = merge_copy(MIXED, copy).text
    assert merged == MIXED + "- Tom has a cat.\r\n"


def test_deleting_everything_of_ours_in_an_unchanged_region() -> None:
    # Person deleted Tom's section in a version that had it: obeyed (what ours added elsewhere stays).
    theirs = V2.split("## Tom")[0]
    merged = merge3(V2, V3, theirs).text
    assert "Tom lives in Berlin" not in merged
    assert "Tom plays chess" in merged  # ours added it after the person's base: kept


@pytest.mark.parametrize(
    ("name", "theirs", "base"),
    [
        ("stale buffer of V1 plus a person line", V1 + "- Tom has a cat.\n", "v1"),
        ("person deleted an old saved line from V3", V3.replace("- Sarah likes tea.\n", ""), "v3"),
        # Indistinguishable from a stale V2 buffer: the newest save comes back once (then a second
        # deletion of it is obeyed, see the reconcile tests).
        ("person deleted only the newest saved line", V2, "v2"),
        ("git checkout of exactly V1", V1, "v1"),
    ],
)
def test_choose_base(name: str, theirs: str, base: str) -> None:
    assert choose_base(theirs, [("v3", V3), ("v2", V2), ("v1", V1)]) == base, name


def test_choose_base_ties_go_to_the_newest() -> None:
    # V1 + one line differs by one from V1 and by one from V2 (V2 has "Sarah likes tea" instead).
    theirs = V1 + "- Tom has a cat.\n"
    assert choose_base(theirs, [("v2", V2), ("v1", V1)]) == "v1"  # distance 1 vs 2
    assert choose_base(V2, [("later", V2), ("earlier", V2)]) == "later"


def test_choose_base_ignores_blank_lines_and_handles_no_versions() -> None:
    assert choose_base("a\n\n\nb\n", [("new", "a\nb\nc\n"), ("old", "a\n\nb\n")]) == "old"
    assert choose_base("a\n", []) is None


def test_a_fact_ours_took_out_next_to_a_line_theirs_typed_stays_out() -> None:
    # The agent updated Tom's city while a stale buffer typed a line right under the old wording.
    ours = V3.replace("- Tom lives in Berlin.\n", "- Tom lives in Munich.\n")
    theirs = V3.replace("- Tom lives in Berlin.\n", "- Tom lives in Berlin.\n- Tom has a cat.\n")
    merged = merge3(V3, ours, theirs)
    assert merged.text == V3.replace("- Tom lives in Berlin.\n", "- Tom has a cat.\n- Tom lives in Munich.\n")
    # A line the person changed in that region is theirs, and stays; so do headings.
    theirs = V3.replace("## Tom\n\n- Tom lives in Berlin.\n", "## Tom\n\n- Tom lives in Berlin (Kreuzberg).\n")
    assert "- Tom lives in Berlin (Kreuzberg).\n" in merge3(V3, ours, theirs).text
