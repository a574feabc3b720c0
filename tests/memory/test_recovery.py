"""Recovery that fits the losses: show a kept version, diff against it, bring back some of its lines."""

from __future__ import annotations

import pytest
from recoverykit import PEOPLE, forget_and_edit, saved_version

from wolfmem import Memory
from wolfmem.errors import NotFound, UsageError


def test_missing_brings_back_a_save_removed_by_hand_and_keeps_the_persons_lines(memory: Memory) -> None:
    path, version = saved_version(memory)
    # The person deletes the older save on purpose (their file still shows the newer one, so their editor
    # had read it) and adds a line of their own: the save goes to the archive as removed by hand.
    path.write_text(
        "# People\n\n## Sarah\n- [ ] Ask Sarah about the offsite\n- Sarah moved to Lisbon\n"
        "\n## Tom\n- Tom runs the data team\n"
    )
    memory.sync()
    back = memory.restore_lines("people", str(version), missing=True)
    text = path.read_text()
    assert text == (
        "# People\n\n## Sarah\n- [ ] Ask Sarah about the offsite\n- Sarah moved to Lisbon\n"
        "- Sarah likes green tea\n\n## Tom\n- Tom runs the data team\n"
    )
    assert [(line.text, line.line, line.section) for line in back.restored] == [("Sarah likes green tea", 6, "Sarah")]
    assert back.already_there == 2  # the task and Tom's line were never lost
    assert "put back 1 line(s)" in back.message and "L6 (## Sarah)" in back.message
    # One write, recorded as a restore over the hand edit it found; the line is searchable at once.
    causes = [kept.cause for kept in memory.history.versions(PEOPLE)][:2]
    assert causes == ["restore", "hand edit"]
    assert [hit.ref for hit in memory.search("green tea")][:1] == ["file:knowledge/people.md#L6"]
    # Asking again changes nothing: no line is ever there twice.
    again = memory.restore_lines("people", str(version), missing=True)
    assert again.restored == [] and again.already_there == 3
    assert path.read_text() == text


def test_lines_bring_back_only_the_lines_named_in_their_own_shape(memory: Memory) -> None:
    path, version = saved_version(memory)
    path.write_text("# People\n\n## Tom\n- Tom runs the data team\n")  # the Sarah section is gone
    kept = memory.recovery.version("people", str(version))
    assert kept.numbered().splitlines()[3:5] == ["4  - [ ] Ask Sarah about the offsite", "5  - Sarah likes green tea"]
    back = memory.restore_lines("people", str(version), lines=(3, 4))
    # The heading and the task come back, the task box kept; line 5 was not asked for.
    assert path.read_text() == (
        "# People\n\n## Tom\n- Tom runs the data team\n\n## Sarah\n- [ ] Ask Sarah about the offsite\n"
    )
    assert [(line.line, line.section) for line in back.restored] == [(7, "Sarah")]
    assert back.not_facts == 1  # the `## Sarah` heading itself


def test_the_same_fact_in_other_words_or_another_section_is_not_added_again(memory: Memory) -> None:
    path, version = saved_version(memory)
    path.write_text("# People\n\n## Unfiled\n- sarah likes green tea.\n")
    memory.sync()  # the outside write is judged first (what it dropped of wolfmem's lines comes back)
    before = path.read_text()
    assert "- sarah likes green tea.\n" in before
    back = memory.restore_lines("people", str(version), lines=(5, 5))
    assert back.restored == [] and back.already_there == 1
    assert path.read_text() == before


def test_show_and_diff_name_a_version_by_id_or_date(memory: Memory) -> None:
    path, version = saved_version(memory)
    forget_and_edit(memory, path)
    by_id = memory.recovery.version("people", str(version))
    by_day = memory.recovery.version("knowledge/people.md", memory.clock().date().isoformat())
    assert "- Tom runs the data team\n" in by_id.text
    assert by_day.version.id == memory.history.versions(PEOPLE)[0].id  # a day names its last version
    diff = memory.recovery.diff("people", str(version))
    assert diff.startswith(f"--- knowledge/people.md (version {version}, ")
    assert "\n+++ knowledge/people.md (now)\n" in diff
    assert "\n-- Tom runs the data team\n" in diff and "\n+- Sarah moved to Lisbon\n" in diff


@pytest.mark.parametrize(
    ("wanted", "options", "error", "match"),
    [
        ("999", {"missing": True}, NotFound, "no kept version"),
        ("soon", {"missing": True}, UsageError, "a version is an id"),
        ("{v}", {}, UsageError, "name the lines"),
        ("{v}", {"lines": (1, 2), "missing": True}, UsageError, "name the lines"),
        ("{v}", {"lines": (40, 41)}, UsageError, "has lines 1-"),
    ],
)
def test_bad_requests_change_nothing(memory: Memory, wanted: str, options: dict, error: type, match: str) -> None:
    path, version = saved_version(memory)
    before = forget_and_edit(memory, path)
    with pytest.raises(error, match=match):
        memory.restore_lines("people", wanted.format(v=version), **options)
    assert path.read_text() == before
