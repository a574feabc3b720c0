"""The watcher with a real watchdog observer: every way an editor saves a file reaches the index.

The checks read the index through a separate reader and never call sync, so a change can only
become visible through the watcher (Memory.search would sync by itself and prove nothing).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import wait_until
from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedNoWriteEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileOpenedEvent,
    FileSystemEvent,
)

from wolfmem import Memory
from wolfmem.search.index import FactIndex
from wolfmem.search.schema import Filters
from wolfmem.search.watcher import Watcher, _Handler, is_relevant
from wolfmem.storage.vault import Vault

PEOPLE = "# People\n\n## Sarah (Manager)\n\n- Sarah is my manager at Acme.\n"


@pytest.fixture
def watched(memory: Memory) -> Iterator[Memory]:
    """A memory whose index is kept fresh only by a running watcher (no periodic reconcile)."""
    (memory.vault.root / "knowledge/people.md").write_text(PEOPLE)
    memory.sync()
    watcher = Watcher(memory.vault, memory.sync, debounce_seconds=0.05, reconcile_seconds=300)
    watcher.start()
    memory.watcher = watcher  # type: ignore[attr-defined]
    try:
        yield memory
    finally:
        watcher.stop()


@pytest.fixture
def reader(watched: Memory) -> Iterator[FactIndex]:
    index = FactIndex(watched.vault.index_dir)
    yield index
    index.close()


def paths(reader: FactIndex, word: str) -> set[str]:
    """Where the index (as last committed, without syncing) holds a word."""
    return {hit.path for hit in reader.search({term: 1.0 for term in reader.analyse(word)}, Filters(), 50)}


def indexed(reader: FactIndex, word: str, rel: str) -> None:
    wait_until(lambda: rel in paths(reader, word), timeout=10)


def gone(reader: FactIndex, word: str, rel: str | None = None) -> None:
    wait_until(lambda: (rel not in paths(reader, word)) if rel else not paths(reader, word), timeout=10)


def test_in_place_write(watched: Memory, reader: FactIndex) -> None:
    with open(watched.vault.root / "knowledge/people.md", "a", encoding="utf-8") as handle:
        handle.write("- Sarah's favourite tea is oolong.\n")
    indexed(reader, "oolong", "knowledge/people.md")


def test_temp_file_and_replace(watched: Memory, reader: FactIndex) -> None:
    """VS Code / atomic-save style: write a temp file next to it, then os.replace over the original."""
    folder = watched.vault.root / "knowledge"
    tmp = folder / ".people.md.4f2a.tmp"
    tmp.write_text(PEOPLE + "- Sarah moved to the Berlin office.\n")
    os.replace(tmp, folder / "people.md")
    indexed(reader, "Berlin", "knowledge/people.md")


def test_jetbrains_safe_write(watched: Memory, reader: FactIndex) -> None:
    """JetBrains: write `x___jb_tmp___`, rename the original to `x___jb_old___`, rename tmp in, delete old."""
    folder = watched.vault.root / "knowledge"
    (folder / "people.md___jb_tmp___").write_text(PEOPLE + "- Sarah speaks Portuguese.\n")
    os.rename(folder / "people.md", folder / "people.md___jb_old___")
    os.rename(folder / "people.md___jb_tmp___", folder / "people.md")
    (folder / "people.md___jb_old___").unlink()
    indexed(reader, "Portuguese", "knowledge/people.md")


def test_vim_backup_rename_create(watched: Memory, reader: FactIndex) -> None:
    """vim (backupcopy=no): rename original to `file.md~`, write a new file, delete the backup."""
    folder = watched.vault.root / "knowledge"
    os.rename(folder / "people.md", folder / "people.md~")
    (folder / "people.md").write_text(PEOPLE + "- Sarah runs the quarterly planning.\n")
    (folder / "people.md~").unlink()
    indexed(reader, "quarterly", "knowledge/people.md")
    assert paths(reader, "Acme") == {"knowledge/people.md"}


def test_emacs_lock_autosave_and_save(watched: Memory, reader: FactIndex) -> None:
    """Emacs: `.#file.md` lock symlink, `#file.md#` autosave, backup rename, write, then cleanup."""
    folder = watched.vault.root / "knowledge"
    lock = folder / ".#people.md"
    lock.symlink_to("user@host.1234:1700000000")
    autosave = folder / "#people.md#"
    autosave.write_text(PEOPLE + "- Sarah draft line about kayaking.\n")
    os.rename(folder / "people.md", folder / "people.md~")
    (folder / "people.md").write_text(PEOPLE + "- Sarah goes kayaking on weekends.\n")
    autosave.unlink()
    lock.unlink()
    indexed(reader, "kayaking", "knowledge/people.md")
    assert paths(reader, "kayaking") == {"knowledge/people.md"}  # the autosave and backup are not notes


def test_delete(watched: Memory, reader: FactIndex) -> None:
    assert paths(reader, "Acme") == {"knowledge/people.md"}
    (watched.vault.root / "knowledge/people.md").unlink()
    gone(reader, "Acme")


def test_rename(watched: Memory, reader: FactIndex) -> None:
    root = watched.vault.root
    (root / "knowledge/recipes.md").write_text("# Recipes\n\n- Pancakes need buttermilk.\n")
    indexed(reader, "buttermilk", "knowledge/recipes.md")
    os.rename(root / "knowledge/recipes.md", root / "knowledge/cooking.md")
    wait_until(lambda: paths(reader, "buttermilk") == {"knowledge/cooking.md"})


def test_new_custom_file(watched: Memory, reader: FactIndex) -> None:
    (watched.vault.root / "knowledge/recipes.md").write_text("# Recipes\n\n## Bread\n\n- Sourdough needs a starter.\n")
    indexed(reader, "sourdough", "knowledge/recipes.md")


def test_new_subfolder_with_a_note(watched: Memory, reader: FactIndex) -> None:
    folder = watched.vault.root / "knowledge/work/clients"
    folder.mkdir(parents=True)
    (folder / "acme.md").write_text("# Acme\n\n- Acme renews its contract in June.\n")
    indexed(reader, "renews", "knowledge/work/clients/acme.md")


def test_folder_moved_into_the_vault(watched: Memory, reader: FactIndex, tmp_path: Path) -> None:
    outside = tmp_path / "import"
    outside.mkdir()
    (outside / "travel.md").write_text("# Travel\n\n- Passport expires in 2031.\n")
    shutil.move(str(outside), str(watched.vault.root / "knowledge/import"))
    indexed(reader, "passport", "knowledge/import/travel.md")


def test_folder_deleted(watched: Memory, reader: FactIndex) -> None:
    folder = watched.vault.root / "knowledge/old"
    folder.mkdir()
    (folder / "notes.md").write_text("- The old wiki lives on Confluence.\n")
    indexed(reader, "Confluence", "knowledge/old/notes.md")
    shutil.rmtree(folder)
    gone(reader, "Confluence")


def test_new_episode_file(watched: Memory, reader: FactIndex) -> None:
    (watched.vault.root / "episodes/2026-03-04.md").write_text(
        "# 2026-03-04\n\n## 09:15 — standup\n\n- Decided to ship the Orion beta.\n"
    )
    indexed(reader, "Orion", "episodes/2026-03-04.md")
    (hit,) = reader.search({"orion": 1.0}, Filters(), 5)
    assert hit.date == "2026-03-04"


@pytest.mark.parametrize(
    ("event", "wakes"),
    [
        (FileModifiedEvent("knowledge/people.md"), True),
        (FileCreatedEvent("knowledge/work/new.md"), True),
        (FileDeletedEvent("episodes/2026-03-04.md"), True),
        (FileMovedEvent("knowledge/people.md", "knowledge/people.md~"), True),
        (FileMovedEvent("knowledge/.people.md.tmp", "knowledge/people.md"), True),
        (DirCreatedEvent("knowledge/work"), True),
        (DirMovedEvent("knowledge/old", "knowledge/new"), True),
        (DirDeletedEvent("knowledge/old.md"), True),
        (FileModifiedEvent("knowledge/.people.md.swp"), False),
        (FileCreatedEvent("knowledge/people.md~"), False),
        (FileCreatedEvent("knowledge/#people.md#"), False),
        (FileCreatedEvent("knowledge/.#people.md"), False),
        (FileModifiedEvent("knowledge/people.md.bak"), False),
        (FileCreatedEvent("knowledge/people.md___jb_tmp___"), False),
        (FileModifiedEvent("notes/x.md"), False),
        (DirCreatedEvent(".obsidian"), False),
        (FileOpenedEvent("knowledge/people.md"), False),
        (FileClosedNoWriteEvent("knowledge/people.md"), False),
    ],
)
def test_handler_filters_events(vault: Path, event: FileSystemEvent, wakes: bool) -> None:
    woken: list[int] = []
    handler = _Handler(Vault(vault, vault.parent / "state"), lambda: woken.append(1))
    event.src_path = str(vault / event.src_path)
    if event.dest_path:
        event.dest_path = str(vault / event.dest_path)
    handler.on_any_event(event)
    assert bool(woken) is wakes


def test_reconcile_catches_a_replaced_vault_folder(memory: Memory, tmp_path: Path) -> None:
    """A deleted-and-recreated vault root loses the inotify watch; the periodic reconcile re-arms it."""
    root = memory.vault.root
    (root / "knowledge/people.md").write_text(PEOPLE)
    memory.sync()
    watcher = Watcher(memory.vault, memory.sync, debounce_seconds=0.05, reconcile_seconds=0.2)
    watcher.start()
    reader = FactIndex(memory.vault.index_dir)
    try:
        moved = tmp_path / "vault-old"
        os.rename(root, moved)
        shutil.copytree(moved, root)
        shutil.rmtree(moved)
        (root / "knowledge/people.md").write_text(PEOPLE + "- Sarah collects vinyl records.\n")
        indexed(reader, "vinyl", "knowledge/people.md")
        (root / "knowledge/later.md").write_text("- Written after the re-arm, about tulips.\n")
        indexed(reader, "tulips", "knowledge/later.md")
    finally:
        watcher.stop()
        reader.close()


def test_a_failed_sync_is_logged_and_retried(vault: Path, caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []
    done = threading.Event()

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk hiccup")
        done.set()

    watcher = Watcher(Vault(vault, vault.parent / "state"), flaky, debounce_seconds=0.01, reconcile_seconds=300)
    watcher.start()
    try:
        watcher.notify()
        assert done.wait(10)
        assert "disk hiccup" in caplog.text
        assert watcher.last_error is None
    finally:
        watcher.stop()


def test_stop_is_prompt_and_idempotent(vault: Path) -> None:
    watcher = Watcher(Vault(vault, vault.parent / "state"), lambda: None, debounce_seconds=0.01, reconcile_seconds=300)
    watcher.start()
    watcher.start()
    watcher.stop()
    watcher.stop()


@pytest.mark.parametrize(
    ("rel", "is_dir", "relevant"),
    [
        ("knowledge/people.md", False, True),
        ("knowledge/work", True, True),
        ("knowledge/work/clients.md", False, True),
        ("episodes/2026-03-04.md", False, True),
        ("knowledge", True, True),
        ("knowledge", False, True),
        (".", True, True),
        ("knowledge/work", False, False),
        ("knowledge/.people.md.swp", False, False),
        ("knowledge/people.md~", False, False),
        ("knowledge/#people.md#", False, False),
        ("knowledge/.#people.md", False, False),
        ("knowledge/.obsidian", True, False),
        ("notes.txt", False, False),
        (".obsidian/workspace.json", False, False),
    ],
)
def test_is_relevant(vault: Path, rel: str, is_dir: bool, relevant: bool) -> None:
    v = Vault(vault, vault.parent / "state")
    assert is_relevant(v, str(vault / rel), is_dir) is relevant
    assert not is_relevant(v, str(vault.parent / "elsewhere.md"))
