"""memory_update, memory_forget and restoring an archived fact: through the API, the OpenAI dispatcher and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from wolfmem import Memory, UsageError
from wolfmem.storage.writer import Stage
from wolfmem.tools import call

PEOPLE = "knowledge/people.md"


def read(memory: Memory, rel: str = PEOPLE) -> str:
    return (memory.vault.root / rel).read_text("utf-8")


def texts(hits) -> list[str]:
    return [hit.text for hit in hits]


def test_update_replaces_the_line_and_archives_the_old_one(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    (hit,) = memory.search("Who is my manager?")[:1]

    correction = memory.update(hit.ref, "Tom is my manager.")

    assert correction.status == "updated" and correction.ref == hit.ref
    assert "- Tom is my manager." in read(memory) and "Sarah is my manager." not in read(memory)
    assert texts(memory.search("Who is my manager?"))[:1] == ["Tom is my manager."]
    assert "Sarah is my manager." not in texts(memory.search("manager"))
    archived = memory.search("manager", sources=["archive"])
    assert [(h.text, h.ref) for h in archived] == [("Sarah is my manager.", correction.archived)]
    assert "superseded" in archived[0].section and archived[0].source == "archive"


def test_forget_then_restore_round_trip(memory: Memory) -> None:
    memory.save("Dave likes tabs.", type="preferences", topic="Dave")
    (hit,) = memory.search("Dave tabs")[:1]

    forgotten = memory.forget(hit.ref, "the user says this was never true")

    assert forgotten.status == "forgotten" and "Dave likes tabs." not in read(memory, hit.path)
    assert memory.search("Dave tabs") == [] or "Dave likes tabs." not in texts(memory.search("Dave tabs"))
    (record,) = memory.search("Dave tabs", sources=["archive"])
    assert record.ref == forgotten.archived

    restored = memory.restore_fact(record.ref)

    assert restored.status == "restored"
    assert "- Dave likes tabs." in read(memory, hit.path)
    assert texts(memory.search("Dave tabs"))[:1] == ["Dave likes tabs."]
    assert memory.restore_fact(record.ref).status == "already-on-file"


def test_a_stale_ref_is_refused_and_the_editors_change_is_kept(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    (hit,) = memory.search("Who is my manager?")[:1]
    path = memory.vault.root / PEOPLE
    edited = path.read_text().replace("## Sarah\n", "## Sarah\n- Sarah joined in 2019.\n")
    path.write_text(edited)  # a person inserts a line above: the ref now names another fact

    with pytest.raises(UsageError, match="search again"):
        memory.update(hit.ref, "Tom is my manager.")
    with pytest.raises(UsageError, match="search again"):
        memory.forget(hit.ref, "wrong")
    assert path.read_text() == edited
    assert memory.search("manager", sources=["archive"]) == []


def test_a_ref_never_handed_out_needs_the_facts_text(memory: Memory) -> None:
    path = memory.vault.root / PEOPLE
    path.write_text("# People\n\n## Ann\n- Ann is the CTO.\n")  # a hand edit nobody searched yet

    with pytest.raises(UsageError, match="search for the fact first"):
        memory.forget("file:knowledge/people.md#L4", "wrong")
    with pytest.raises(UsageError, match="search again"):
        memory.forget("file:knowledge/people.md#L4", "wrong", expected="Ann is the CEO.")
    assert memory.forget("file:knowledge/people.md#L4", "wrong", expected="- Ann is the CTO.").status == "forgotten"
    assert "Ann" not in path.read_text().split("## Ann")[1]


def test_a_code_line_found_by_search_is_never_edited_by_an_agent(memory: Memory) -> None:
    path = memory.vault.root / "knowledge/technical.md"
    path.write_text("# Technical\n\n## Deploy\n```sh\nssh deploy@bastion.example.com\n```\n")
    before = path.read_bytes()
    (hit,) = memory.search("bastion")
    with pytest.raises(UsageError, match="code block"):
        memory.update(hit.ref, "Deploys go through bastion2.")
    with pytest.raises(UsageError, match="code block"):
        memory.forget(hit.ref, "old host")
    assert path.read_bytes() == before


def test_update_to_a_fact_already_on_file_writes_nothing_twice(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    memory.save("Tom is my manager.", type="people", topic="Sarah")
    hit = next(h for h in memory.search("Sarah manager") if h.text == "Sarah is my manager.")

    correction = memory.update(hit.ref, "Tom is my manager.")

    assert correction.status == "duplicate"
    assert read(memory).count("Tom is my manager.") == 1 and "Sarah is my manager." not in read(memory)
    assert correction.duplicate_of == correction.ref and "Tom is my manager." in memory.get(correction.ref).text


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("file:episodes/2026-11-30.md#L4", "append-only"),
        ("file:consolidated/2026-W48.md#L3", "knowledge/ files only"),
        ("file:knowledge/people.md", "not a line ref"),
        ("file:knowledge/people.md#Sarah", "not a line ref"),
        ("file:../outside.md#L1", "outside the vault"),
    ],
)
def test_forget_refuses_what_it_cannot_forget(memory: Memory, ref: str, message: str) -> None:
    before = read(memory)
    with pytest.raises(UsageError, match=message):
        memory.forget(ref, "wrong")
    assert read(memory) == before


def test_update_validates_the_new_fact_like_a_save(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    (hit,) = memory.search("Who is my manager?")[:1]
    before = read(memory)
    secret = "My key is sk-proj-a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0."
    for bad in ("", "Tom is my manager. He started in May.", secret):
        with pytest.raises(UsageError):
            memory.update(hit.ref, bad)
    assert read(memory) == before


def test_an_editor_striking_during_an_update_is_never_clobbered(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    (hit,) = memory.search("Who is my manager?")[:1]
    path = memory.vault.root / PEOPLE
    struck: list[Stage] = []

    def editor(stage: Stage, rel: str) -> None:
        if rel == PEOPLE and stage is Stage.READ and not struck:
            struck.append(stage)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write("- Sarah likes tea.\n")  # in place, after wolfmem read the file

    memory.writer.on_stage = editor
    memory.update(hit.ref, "Tom is my manager.")

    text = read(memory)
    assert struck and "- Sarah likes tea." in text and "- Tom is my manager." in text
    assert "Sarah is my manager." not in text


def test_the_openai_dispatcher_updates_and_forgets(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    hit = memory.search("Who is my manager?")[0]
    assert hit.ref in call(memory, "memory_search", {"query": "Who is my manager?"})
    updated = call(memory, "memory_update", json.dumps({"ref": hit.ref, "fact": "Tom is my manager."}))
    assert "Updated" in updated
    hit = memory.search("Who is my manager?")[0]
    forgotten = call(memory, "memory_forget", {"ref": hit.ref, "reason": "wrong"})
    assert "Forgot" in forgotten and "Tom is my manager." not in read(memory)
    refused = call(memory, "memory_forget", {"ref": hit.ref})
    assert "reason" in refused


@pytest.mark.slow
def test_cli_update_forget_and_restore(vault: Path) -> None:
    saved = run_cli("save", "Sarah is my manager.", "--type", "people", "--vault", str(vault), "--json")
    ref = json.loads(saved.stdout)["ref"]

    updated = run_cli("update", ref, "Tom is my manager.", "--vault", str(vault), "--json")
    assert updated.returncode == 0, updated.stderr
    assert json.loads(updated.stdout)["status"] == "updated"

    forgotten = run_cli("forget", ref, "--reason", "it was wrong", "--vault", str(vault), "--json")
    archived = json.loads(forgotten.stdout)["archived"]
    assert forgotten.returncode == 0 and "Tom is my manager." not in (vault / PEOPLE).read_text()

    restored = run_cli("restore", "--fact", archived, "--vault", str(vault))
    assert restored.returncode == 0 and "- Tom is my manager." in (vault / PEOPLE).read_text()

    stale = run_cli("forget", "file:knowledge/people.md#L2", "--reason", "x", "--vault", str(vault))
    assert stale.returncode == 2 and "search" in stale.stderr and "Traceback" not in stale.stderr
