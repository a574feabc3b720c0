"""An editor and wolfmem share a knowledge file: every acknowledged save and every line the person wrote survives.

The "editors" here are plain Python that write the way real ones do (a stale buffer written in place or
by rename, vim's rename window, nano's truncate-then-write, a `git checkout`); the real-editor tests
drive vim, nano and emacs through tmux.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli, wait_until

from wolfmem import Memory
from wolfmem.storage.writer import SETTLE_DELAYS, Stage

PEOPLE = "knowledge/people.md"


def _path(memory: Memory, rel: str = PEOPLE) -> Path:
    return memory.vault.root / rel


def _in_place(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:  # nano, vim without a backup, emacs after its first save
        handle.write(text)


def _by_rename(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.swp-new")  # most editors: a new file renamed over the old one
    tmp.write_text(text, "utf-8")
    os.replace(tmp, path)


class StaleEditor(threading.Thread):
    """Reads the file, waits for `go`, then writes what it read plus the person's new line."""

    def __init__(self, path: Path, line: str, write: Callable[[Path, str], None]) -> None:
        super().__init__(daemon=True)
        self.path, self.line, self.write = path, line, write
        self.loaded = threading.Event()
        self.go = threading.Event()
        self.wrote = threading.Event()

    def run(self) -> None:
        buffer = self.path.read_text("utf-8")
        self.loaded.set()
        self.go.wait(10)
        self.write(self.path, buffer + self.line + "\n")
        self.wrote.set()


def _stale_write(memory: Memory, line: str, write: Callable[[Path, str], None], *saves: tuple[str, str]) -> None:
    editor = StaleEditor(_path(memory), line, write)
    editor.start()
    assert editor.loaded.wait(10)
    for fact, topic in saves:
        memory.save(fact, type="people", topic=topic)
    editor.go.set()
    assert editor.wrote.wait(10)
    editor.join(10)


@pytest.mark.parametrize("write", [_in_place, _by_rename], ids=["in-place", "rename"])
def test_a_stale_buffer_gets_the_saves_put_back_and_keeps_the_person_line(memory: Memory, write) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    _stale_write(memory, "- Ana works from Porto.", write,
                 ("Sarah likes green tea.", "Sarah"), ("Tom lives in Berlin.", "Tom"))

    hits = memory.search("Who likes green tea?")  # the pre-search sync notices the overwrite

    text = _path(memory).read_text()
    for fact in ("Sarah is my manager.", "Sarah likes green tea.", "Tom lives in Berlin.", "Ana works from Porto."):
        assert text.count(f"- {fact}\n") == 1, (fact, text)
    assert text.index("- Sarah likes green tea.") < text.index("## Tom") < text.index("- Tom lives in Berlin.")
    assert any("green tea" in hit.text for hit in hits)
    assert memory.history.versions(PEOPLE)[0].cause == "put back"
    repair = memory.status()["repairs"][0]
    assert repair["kind"] == "put back" and repair["path"] == PEOPLE and repair["count"] >= 2


def test_the_notice_reaches_the_next_call_once_and_status_keeps_it(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    _stale_write(memory, "- Ana works from Porto.", _in_place, ("Sarah likes green tea.", "Sarah"))

    receipt = memory.save("Tom lives in Berlin.", type="people", topic="Tom")
    again = memory.save("Tom plays chess.", type="people", topic="Tom")

    lines = _path(memory).read_text().splitlines()
    number = lines.index("- Sarah likes green tea.") + 1
    assert receipt.notices == [
        f"1 line wolfmem wrote was overwritten by an editor and put back at file:{PEOPLE}#L{number}"
    ]
    assert again.notices == []
    assert "- Ana works from Porto." in lines
    result = run_cli("status", "--vault", str(memory.vault.root), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["repairs"][0]["where"] == f"file:{PEOPLE}#L{number}"
    shown = run_cli("status", "--vault", str(memory.vault.root))
    assert f"put back at file:{PEOPLE}#L{number}" in shown.stdout


def test_a_notice_rides_on_a_search_through_the_tools(memory: Memory) -> None:
    from wolfmem.tools.calls import run_search

    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    _stale_write(memory, "- Ana works from Porto.", _by_rename, ("Sarah likes green tea.", "Sarah"))

    result = run_search(memory, {"query": "Sarah manager"})

    assert result.data is not None and result.data["notices"][0].endswith(f"put back at file:{PEOPLE}#L8")
    assert "Notice: 1 line wolfmem wrote was overwritten by an editor" in result.text


def test_a_save_into_another_file_simply_survives(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    editor = StaleEditor(_path(memory), "- Ana works from Porto.", _in_place)
    editor.start()
    assert editor.loaded.wait(10)
    memory.save("The build server runs Debian 12.", type="technical", topic="Servers")
    editor.go.set()
    editor.join(10)

    memory.search("Debian")

    assert "- Ana works from Porto." in _path(memory).read_text()
    assert "- The build server runs Debian 12." in _path(memory, "knowledge/technical.md").read_text()
    assert memory.status()["repairs"] == []
    assert memory.history.versions(PEOPLE)[0].cause == "hand edit"


def test_deleting_an_old_saved_line_on_purpose_is_obeyed_and_archived(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    memory.save("Sarah likes green tea.", type="people", topic="Sarah")
    path = _path(memory)
    _by_rename(path, path.read_text().replace("- Sarah is my manager.\n", ""))

    memory.search("Sarah")

    assert "Sarah is my manager." not in path.read_text()
    assert "- Sarah likes green tea." in path.read_text()
    repair = memory.status()["repairs"][0]
    assert repair["kind"] == "removed by hand" and repair["count"] == 1
    archived = memory.search("manager", sources=["archive"])
    assert archived and archived[0].text == "Sarah is my manager."
    assert "removed" in archived[0].section
    assert "- Sarah is my manager." not in memory.state.snapshot_lines(PEOPLE)


def test_a_line_put_back_once_and_removed_again_is_obeyed(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    path = _path(memory)
    before = path.read_text()
    memory.save("Sarah likes green tea.", type="people", topic="Sarah")
    # Deleting only the newest save reads exactly like a stale buffer of the version before it:
    _in_place(path, before)
    memory.search("Sarah")
    assert "- Sarah likes green tea." in path.read_text()  # put back, and the person is told

    _in_place(path, path.read_text().replace("- Sarah likes green tea.\n", ""))  # the person insists
    memory.search("Sarah")

    assert "green tea" not in path.read_text()
    kinds = [repair["kind"] for repair in memory.status()["repairs"]]
    assert kinds[:2] == ["removed by hand", "put back"]
    assert [hit.text for hit in memory.search("green tea", sources=["archive"])] == ["Sarah likes green tea."]
    # A later save of the same fact is a new save, protected again.
    memory.save("Sarah likes green tea.", type="people", topic="Sarah")
    _in_place(path, before)
    memory.search("Sarah")
    assert "- Sarah likes green tea." in path.read_text()


def test_a_stale_buffer_written_again_with_new_lines_keeps_what_was_put_back(memory: Memory) -> None:
    # The person never reloads: each write is the buffer they opened plus the lines they typed since.
    path = _path(memory)
    opened = path.read_text()
    memory.save("Sarah likes green tea.", type="people", topic="Sarah")
    _in_place(path, opened + "- Nadia prefers morning meetings.\n")
    memory.search("Sarah")
    assert "- Sarah likes green tea." in path.read_text()  # put back once

    _in_place(path, opened + "- Nadia prefers morning meetings.\n- Nadia leads the offsite.\n")
    memory.search("Sarah")

    text = path.read_text()
    assert "- Sarah likes green tea." in text and "- Nadia leads the offsite." in text
    assert [repair["kind"] for repair in memory.status()["repairs"]][:2] == ["put back", "put back"]
    assert memory.search("green tea", sources=["archive"]) == []


def test_a_git_checkout_of_an_old_version_puts_later_saves_back(memory: Memory) -> None:
    root = memory.vault.root
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "knowledge"], check=True)
    subprocess.run([*git, "commit", "-qm", "vault"], check=True)
    memory.save("Sarah likes green tea.", type="people", topic="Sarah")
    memory.save("Tom lives in Berlin.", type="people", topic="Tom")

    subprocess.run([*git, "checkout", "--", PEOPLE], check=True)
    assert "green tea" not in _path(memory).read_text()
    memory.search("Tom")

    text = _path(memory).read_text()
    assert "- Sarah likes green tea." in text and "- Tom lives in Berlin." in text
    assert memory.status()["repairs"][0]["kind"] == "put back"


def test_the_watcher_puts_lines_back_with_no_command_run(memory: Memory) -> None:
    from wolfmem.search.watcher import Watcher

    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    stale = _path(memory).read_text()
    memory.save("Sarah likes green tea.", type="people", topic="Sarah")
    watcher = Watcher(memory.vault, memory.sync, debounce_seconds=0.05, reconcile_seconds=300)
    watcher.start()
    try:
        wait_until(lambda: watcher.syncs >= 1)
        _by_rename(_path(memory), stale + "- Ana works from Porto.\n")
        wait_until(lambda: "green tea" in _path(memory).read_text())
    finally:
        watcher.stop()
    assert "- Ana works from Porto." in _path(memory).read_text()


# -- a file an editor has away for a moment -------------------------------------------------------
def test_vim_rename_window_a_save_waits_for_the_new_file(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    path = _path(memory)
    buffer = path.read_text() + "- Ana works from Porto.\n"
    os.rename(path, path.with_name("people.md~"))  # vim's backup rename; the new file comes next
    polls = []

    def pause(delay: float) -> None:
        polls.append(delay)
        if len(polls) == 3:
            path.write_text(buffer)  # vim writes its buffer

    memory.writer.pause = pause
    receipt = memory.save("Sarah likes green tea.", type="people", topic="Sarah")

    text = path.read_text()
    assert len(polls) == 3
    assert receipt.status == "saved"
    assert "- Ana works from Porto." in text and "- Sarah likes green tea." in text
    assert text.count("# People") == 1 and "- Sarah is my manager." in text


def test_a_save_whose_exchange_meets_the_renamed_file_waits_and_redoes_it(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    path = _path(memory)
    buffer = path.read_text() + "- Ana works from Porto.\n"
    moved = []

    def editor(stage: Stage, rel: str) -> None:
        if stage is Stage.READ and rel == PEOPLE and not moved:
            moved.append(True)
            os.rename(path, path.with_name("people.md~"))  # after the save read it, before its exchange

    polls = []

    def pause(delay: float) -> None:
        polls.append(delay)
        if len(polls) == 2:
            path.write_text(buffer)

    memory.writer.on_stage, memory.writer.pause = editor, pause
    receipt = memory.save("Sarah likes green tea.", type="people", topic="Sarah")

    assert receipt.status == "saved" and len(polls) == 2
    text = path.read_text()
    assert "- Ana works from Porto." in text and "- Sarah likes green tea." in text


def test_nano_truncate_then_write_never_turns_the_file_into_the_template(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    path = _path(memory)
    buffer = path.read_text() + "- Ana works from Porto.\n"
    polls = []
    with open(path, "w", encoding="utf-8") as handle:  # nano's O_TRUNC open; the write comes after a pause

        def pause(delay: float) -> None:
            polls.append(delay)
            if len(polls) == 4:
                handle.write(buffer)
                handle.flush()

        memory.writer.pause = pause
        memory.save("Sarah likes green tea.", type="people", topic="Sarah")

    text = path.read_text()
    assert len(polls) == 4
    assert "- Sarah is my manager." in text and "- Ana works from Porto." in text and "green tea" in text


def test_a_file_that_stays_missing_gets_the_template_after_the_wait(memory: Memory) -> None:
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    _path(memory).unlink()
    polls: list[float] = []
    memory.writer.pause = polls.append

    memory.save("Sarah likes green tea.", type="people", topic="Sarah")

    assert len(polls) == len(SETTLE_DELAYS)
    assert "- Sarah likes green tea." in _path(memory).read_text()


def test_a_new_file_is_not_waited_for(memory: Memory) -> None:
    polls: list[float] = []
    memory.writer.pause = polls.append
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    assert polls == []


# -- a replayed request_id tells the truth ------------------------------------------------------------
def test_a_replay_after_a_deliberate_removal_says_it_is_gone(memory: Memory) -> None:
    memory.save("Sarah likes green tea.", type="people", topic="Sarah", request_id="r-1")
    memory.save("Sarah is my manager.", type="people", topic="Sarah")
    path = _path(memory)
    _in_place(path, path.read_text().replace("- Sarah likes green tea.\n", ""))

    replay = memory.save("Sarah likes green tea.", type="people", topic="Sarah", request_id="r-1")

    assert replay.status == "gone" and replay.replayed
    assert "removed by hand" in replay.message and "Saved" not in replay.message
    assert "green tea" not in path.read_text()


def test_a_replay_of_a_fact_no_longer_on_file_saves_it_again(memory: Memory) -> None:
    memory.save("Sarah likes green tea.", type="people", topic="Sarah", request_id="r-1")
    path = _path(memory)
    # History and state were lost (a damaged database starts empty), so nothing could put it back.
    memory.history.close()
    (memory.vault.state_dir / "history.sqlite").unlink()
    _in_place(path, path.read_text().replace("- Sarah likes green tea.\n", ""))

    replay = memory.save("Sarah likes green tea.", type="people", topic="Sarah", request_id="r-1")

    assert replay.status == "restored" and replay.replayed
    assert "saved again" in replay.message
    assert "- Sarah likes green tea." in path.read_text()
    assert memory.save("Sarah likes green tea.", type="people", topic="Sarah", request_id="r-1").status == "saved"


def test_a_replay_of_a_fact_on_file_points_at_its_line_now(memory: Memory) -> None:
    first = memory.save("Sarah likes green tea.", type="people", topic="Sarah", request_id="r-1")
    path = _path(memory)
    _in_place(path, path.read_text().replace("## Sarah\n", "## Sarah\n- Sarah lives in Lisbon.\n"))

    replay = memory.save("Sarah likes green tea.", type="people", topic="Sarah", request_id="r-1")

    assert replay.status == "saved" and replay.replayed
    assert replay.line == first.line + 1


def test_a_dropped_episode_block_is_put_back_at_the_end_of_its_day(memory: Memory) -> None:
    first = memory.log_episode("Deployed v1 to staging.", headline="Deploy")
    path = memory.vault.root / first.path
    stale = path.read_text()
    memory.log_episode("Rolled back v1 after the smoke test failed.", headline="Rollback")
    _in_place(path, stale + "- Note by hand: the staging database was full.\n")

    memory.search("rollback")

    text = path.read_text()
    assert "- Note by hand: the staging database was full." in text
    assert text.rstrip().endswith("- Rolled back v1 after the smoke test failed.")
    assert text.count("Deployed v1 to staging.") == 1


def test_an_ordinary_hand_edit_reads_no_bases(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    for number in range(5):
        memory.save(f"Server {number} runs Debian {number + 10}.", type="technical", topic="Servers")
    path = _path(memory, "knowledge/technical.md")
    read = []
    monkeypatch.setattr(type(memory.history), "texts", lambda self, rel, limit: read.append(rel) or [])
    _in_place(path, path.read_text() + "- The rack is in Lisbon.\n")

    memory.search("rack")

    assert read == []  # no base was looked for: no line of wolfmem's went missing
    assert memory.history.versions("knowledge/technical.md")[0].cause == "hand edit"
