"""Never stale: a search sees every write that completed before it began, from any process or editor.

A watching Memory drains its inotify queue before each search and re-reads the files it names;
without inotify it stats every file. Either way no write that returned before the search is missed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from editor_loop import EDITS

from wolfmem import Config, Memory
from wolfmem.search import changes
from wolfmem.search.changes import InotifyChanges, Pending

pytestmark = pytest.mark.skipif(not InotifyChanges.available(), reason="inotify is Linux-only")


@pytest.fixture
def watching(memory: Memory) -> Memory:
    assert memory.watch()
    memory.search("anything")  # the first sync after watching scans everything
    return memory


def texts(memory: Memory, query: str) -> list[str]:
    return [hit.text for hit in memory.search(query)]


def spy_scans(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    scans: list[object] = []
    real_scan = memory.vault.scan
    monkeypatch.setattr(memory.vault, "scan", lambda only=None: scans.append(only) or real_scan(only))
    return scans


def test_a_quiet_vault_is_not_scanned_and_a_changed_file_alone_is_read(
    watching: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans = spy_scans(watching, monkeypatch)
    watching.search("manager")
    assert scans == [], "nothing changed: no stat of any file"
    with open(vault / "knowledge" / "people.md", "a", encoding="utf-8") as handle:
        handle.write("- Zelda is the new intern.\n")
    # No waiting: the event was queued before write() returned.
    assert texts(watching, "Zelda") == ["Zelda is the new intern."]
    assert scans == [["knowledge/people.md"]]


def test_a_rewrite_that_keeps_size_and_mtime_is_still_seen(watching: Memory, vault: Path) -> None:
    path = vault / "knowledge" / "same.md"
    path.write_text("- the code word is alpha\n", "utf-8")
    assert texts(watching, "alpha") == ["the code word is alpha"]
    stat = path.stat()
    path.write_text("- the code word is omega\n", "utf-8")  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the same mtime: a stat scan could miss it
    assert texts(watching, "omega") == ["the code word is omega"]
    assert texts(watching, "alpha") == []


@pytest.mark.parametrize("how", ["rename", "delete", "new-folder", "folder-moved-in", "folder-removed"])
def test_renames_deletes_and_folders(watching: Memory, vault: Path, tmp_path: Path, how: str) -> None:
    note = vault / "knowledge" / "note.md"
    note.write_text("- the quokka lives here\n", "utf-8")
    assert texts(watching, "quokka") == ["the quokka lives here"]
    if how == "rename":
        note.rename(vault / "knowledge" / "renamed.md")
        assert [hit.path for hit in watching.search("quokka")] == ["knowledge/renamed.md"]
    elif how == "delete":
        note.unlink()
        assert texts(watching, "quokka") == []
    elif how == "new-folder":
        (vault / "knowledge" / "deep" / "deeper").mkdir(parents=True)
        (vault / "knowledge" / "deep" / "deeper" / "n.md").write_text("- a wombat too\n", "utf-8")
        assert texts(watching, "wombat") == ["a wombat too"]
        # The new folder is watched from now on.
        (vault / "knowledge" / "deep" / "deeper" / "n.md").write_text("- a numbat now\n", "utf-8")
        assert texts(watching, "numbat") == ["a numbat now"]
    elif how == "folder-moved-in":
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "m.md").write_text("- a bilby arrives\n", "utf-8")
        outside.rename(vault / "knowledge" / "moved")
        assert texts(watching, "bilby") == ["a bilby arrives"]
    else:
        (vault / "knowledge" / "gone").mkdir()
        (vault / "knowledge" / "gone" / "g.md").write_text("- a dingo\n", "utf-8")
        assert texts(watching, "dingo") == ["a dingo"]
        (vault / "knowledge" / "gone" / "g.md").unlink()
        (vault / "knowledge" / "gone").rmdir()
        assert texts(watching, "dingo") == []


def test_a_replaced_vault_folder_is_watched_again(watching: Memory, vault: Path, tmp_path: Path) -> None:
    vault.rename(tmp_path / "old-vault")
    (vault / "knowledge").mkdir(parents=True)
    (vault / "episodes").mkdir()
    (vault / "knowledge" / "people.md").write_text("# People\n\n- Quinn runs the new vault.\n", "utf-8")
    assert texts(watching, "Quinn") == ["Quinn runs the new vault."]
    with open(vault / "knowledge" / "people.md", "a", encoding="utf-8") as handle:
        handle.write("- Quinn likes kites.\n")
    assert "Quinn likes kites." in texts(watching, "kites")


def test_an_overflowed_queue_means_a_full_scan(vault: Path) -> None:
    from inotify_simple import Event, flags

    feed = InotifyChanges(Memory(vault).vault)
    pending = Pending()
    feed._note(Event(-1, flags.Q_OVERFLOW, 0, ""), pending)
    assert pending.rescan
    feed.failed(Pending({"knowledge/a.md"}))
    assert feed.start() and feed.drain().rescan  # a failed sync is retried as a full scan
    assert not feed.drain()
    feed.close()


def test_without_inotify_every_search_stats_every_file(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changes, "inotify_simple", None)
    assert memory.watch() is False
    scans = spy_scans(memory, monkeypatch)
    with open(vault / "knowledge" / "people.md", "a", encoding="utf-8") as handle:
        handle.write("- Yara fixed the printer.\n")
    assert texts(memory, "Yara printer") == ["Yara fixed the printer."]
    assert None in scans


_SAVER = """
import sys
from wolfmem import Config, Memory
vault, state, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Memory(vault, Config(state_dir=state)) as memory:
    for n in range(rounds):
        memory.save(f"Saver fact round{n}zq was recorded", type="technical")
        print(n, flush=True)
        sys.stdin.readline()
"""

ROUNDS = 60


@pytest.mark.parametrize("writer", ["editor", "wolfmem"])
@pytest.mark.slow
def test_write_then_search_across_processes_never_reads_stale(
    vault: Path, config: Config, tmp_path: Path, writer: str
) -> None:
    script, args = (EDITS, [str(vault)]) if writer == "editor" else (_SAVER, [str(vault), config.state_dir])
    with Memory(vault, config) as reader:
        assert reader.watch()
        reader.search("warm up")
        proc = subprocess.Popen(
            [sys.executable, "-c", script, *args, str(ROUNDS)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO, env=dict(os.environ),
        )
        stale = []
        try:
            for n in range(ROUNDS):
                assert proc.stdout.readline().strip() == str(n)
                # The write has returned in the other process; the very next search must see it.
                if not any(f"round{n}zq" in hit.text for hit in reader.search(f"round{n}zq")):
                    stale.append(n)
                proc.stdin.write("next\n")
                proc.stdin.flush()
        finally:
            proc.stdin.close()
            proc.wait(timeout=60)
        assert proc.returncode == 0
        assert stale == []
