"""Conflict copies and git's conflict markers written into a real vault: merged back, archived, never indexed."""

from __future__ import annotations

from pathlib import Path

import pytest

from wolfmem import Memory

PEOPLE = "knowledge/people.md"
COPY = "knowledge/people.sync-conflict-20261201-140509-ABCDEF7.md"


def _texts(memory: Memory, query: str) -> list[str]:
    return sorted({hit.path for hit in memory.search(query)})


def test_a_conflict_copy_is_merged_into_its_file_and_archived(memory: Memory) -> None:
    root = memory.vault.root
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    common = (root / PEOPLE).read_text()
    memory.save("Sarah likes green tea.", type="people", topic="Sarah")
    # The other machine saved into the common version; Syncthing kept its side as a copy.
    other = common.replace("- Sarah is my manager.\n", "- Sarah is my manager.\n- Sarah owns a kayak.\n")
    (root / COPY).write_text(other)

    memory.sync()

    text = (root / PEOPLE).read_text()
    assert text.count("- Sarah is my manager.") == 1
    assert "- Sarah likes green tea." in text and "- Sarah owns a kayak." in text
    assert not (root / COPY).exists()
    archived = list((root / ".wolfmem" / "conflicts").rglob("*.md"))
    assert [path.read_text() for path in archived] == [other]
    assert _texts(memory, "kayak") == [PEOPLE]
    status = memory.status()
    assert status["conflict_copies"] == [] and status["repairs"][0]["kind"] == "conflict merged"


def test_a_copy_of_an_episode_log_keeps_both_machines_entries(memory: Memory) -> None:
    root = memory.vault.root
    receipt = memory.log_episode("met Ann at the station", headline="Ann")
    rel = receipt.path if hasattr(receipt, "path") else next(
        str(p.relative_to(root)) for p in (root / "episodes").glob("*.md"))
    common = (root / rel).read_text()
    memory.log_episode("met Tom at lunch", headline="Tom")
    copy = rel.replace(".md", " (conflict_on_2026-12-02).md")
    (root / copy).write_text(common + "\n## 13:00 — Bob\n\nmet Bob for coffee\n")
    memory.sync()
    text = (root / rel).read_text()
    assert "met Ann" in text and "met Tom" in text and "met Bob for coffee" in text
    assert not (root / copy).exists()


def test_markers_around_facts_are_resolved_and_never_indexed(memory: Memory) -> None:
    root = memory.vault.root
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    text = (root / PEOPLE).read_text()
    marked = text.replace("- Sarah is my manager.\n", "- Sarah is my manager.\n<<<<<<< HEAD\n- Sarah likes tea.\n"
                          "=======\n- Sarah likes coffee.\n>>>>>>> origin/main\n")
    (root / PEOPLE).write_text(marked)
    memory.sync()
    after = (root / PEOPLE).read_text()
    assert "- Sarah likes tea." in after and "- Sarah likes coffee." in after and "<<<<<<<" not in after
    assert _texts(memory, "HEAD") == [] and _texts(memory, "origin") == []
    assert memory.status()["repairs"][0]["kind"] == "markers resolved"


def test_markers_around_headings_need_a_person_and_a_save_lands_outside_them(memory: Memory) -> None:
    root = memory.vault.root
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    marked = (root / PEOPLE).read_text() + "<<<<<<< HEAD\n## Tom\n- Tom is a pilot.\n=======\n## Thomas\n" \
        "- Thomas is a pilot.\n>>>>>>> origin/main\n"
    (root / PEOPLE).write_text(marked)
    memory.sync()
    assert "<<<<<<< HEAD" in (root / PEOPLE).read_text()
    assert PEOPLE in memory.status()["needs_person"]
    assert _texts(memory, "HEAD") == [] and _texts(memory, "origin") == []
    assert not any(entry.lstrip("#").strip().startswith(("<", "=", ">")) for entry in _headings(memory))

    memory.save("Thomas flies for Lufthansa.", type="people", topic="Thomas")
    memory.save("Tom lives in Bergen.", type="people", topic="Tom")
    lines = (root / PEOPLE).read_text().splitlines()
    start, end = lines.index("<<<<<<< HEAD"), lines.index(">>>>>>> origin/main")
    for fact in ("- Thomas flies for Lufthansa.", "- Tom lives in Bergen."):
        assert not start < lines.index(fact) < end


def _headings(memory: Memory) -> list[str]:
    return [line for line in Path(memory.vault.root / PEOPLE).read_text().splitlines() if line.startswith("##")]


def test_status_and_doctor_name_what_needs_a_person(memory: Memory) -> None:
    from conftest import run_cli

    root = memory.vault.root
    (root / PEOPLE).write_text("# People\n<<<<<<< HEAD\n## Tom\n=======\n## Thomas\n>>>>>>> o\n")
    memory.sync()
    status = run_cli("status", "--vault", str(root))
    assert "needs you: knowledge/people.md: git conflict markers" in status.stdout
    doctor = run_cli("doctor", "--vault", str(root))
    assert "git conflict markers" in doctor.stdout


def _in_place(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:  # git checkout/pull rewrites a file in place
        handle.write(text)


def _rename(path: Path, text: str) -> None:
    tmp = path.with_name(f".syncthing.{path.name}.tmp")  # Syncthing writes a temp file and renames it over
    tmp.write_text(text, "utf-8")
    tmp.replace(path)


def _unlink_create(path: Path, text: str) -> None:
    path.unlink()  # unison, Dropbox: delete, then create
    path.write_text(text, "utf-8")



@pytest.mark.parametrize("write", [_in_place, _rename, _unlink_create], ids=["in-place", "rename", "unlink+create"])
def test_a_save_an_engine_overwrites_is_put_back_whatever_its_write_pattern(memory: Memory, write) -> None:
    root = memory.vault.root
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    older = (root / PEOPLE).read_text()
    memory.save("Sarah likes green tea.", type="people", topic="Sarah")
    write(root / PEOPLE, older.replace("- Sarah is my manager.\n", "- Sarah is my manager.\n- Sarah owns a kayak.\n"))
    memory.sync()
    text = (root / PEOPLE).read_text()
    assert "- Sarah likes green tea." in text and "- Sarah owns a kayak." in text


def test_a_fact_saved_again_after_it_was_forgotten_survives_a_conflict_copy(memory: Memory) -> None:
    root = memory.vault.root
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    memory.save("Sarah likes green tea.", type="people", topic="Sarah")
    memory.forget(memory.search("green tea")[0].ref, "she switched to coffee")
    other = (root / PEOPLE).read_text() + "\n## Tom\n- Tom owns a kayak.\n"  # the other machine, meanwhile
    receipt = memory.save("Sarah likes green tea.", type="people", topic="Sarah")  # she is back on tea
    assert receipt.status == "saved"
    (root / COPY).write_text(other)

    memory.sync()

    text = (root / PEOPLE).read_text()
    assert text.count("- Sarah likes green tea.") == 1 and "- Tom owns a kayak." in text
    assert [hit.text for hit in memory.search("green tea", sources=["archive"])] == ["Sarah likes green tea."] * 2


def test_a_fact_that_left_another_file_survives_a_conflict_copy_of_its_own(memory: Memory) -> None:
    from wolfmem.storage.archive import ArchivedFact, Reason

    root = memory.vault.root
    memory.save("The billing rewrite ships in May.", type="projects", topic="Billing")
    projects = "knowledge/projects.md"
    older = (root / projects).read_text()
    memory.save("Dana leads the billing rewrite.", type="projects", topic="Billing")
    # The same words left people.md (curation moved them here, say): a fact gone from that file only.
    memory.archive.add([ArchivedFact("Dana leads the billing rewrite.", PEOPLE, "Dana", "2026-12-01", Reason.MOVED,
                                     into="file:knowledge/projects.md", by="curation")])
    copy = root / projects.replace(".md", ".sync-conflict-20261201-140509-ABCDEF7.md")
    copy.write_text(older + "- Tom tests it.\n")

    memory.sync()

    text = (root / projects).read_text()
    assert "- Dana leads the billing rewrite." in text and "- Tom tests it." in text


def test_a_conflict_copy_of_an_archive_file_keeps_both_machines_records(memory: Memory) -> None:
    root = memory.vault.root
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    memory.save("Sarah likes green tea.", type="people", topic="Sarah")
    memory.forget(memory.search("green tea")[0].ref, "she switched to coffee")
    archive = next((root / "consolidated").glob("archive-*.md"))
    common = archive.read_text()
    memory.forget(memory.search("manager")[0].ref, "she changed teams")
    # The other machine archived a fact into the same month's file meanwhile; Syncthing kept its side as a copy.
    other = common + ('- Tom lives in Berlin. <!-- wolfmem-archive {"day": "2026-12-01", '
                      '"file": "knowledge/people.md", "reason": "forgotten", "section": "Tom"} -->\n')
    copy = archive.with_name(archive.name.replace(".md", ".sync-conflict-20261201-140509-ABCDEF7.md"))
    copy.write_text(other)

    memory.sync()

    assert not copy.exists()
    found = sorted(hit.text for hit in memory.search("Sarah Tom tea manager Berlin", sources=["archive"]))
    assert found == ["Sarah is my manager.", "Sarah likes green tea.", "Tom lives in Berlin."]
    assert archive.read_text().count("Sarah likes green tea.") == 1
