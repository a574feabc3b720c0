"""Real vim, nano and emacs (through tmux) share knowledge/people.md with agents saving over the CLI and MCP.

The person opens the file and types a line without saving; agents save facts (a real `wolfmem save`
subprocess and a real MCP client); the person writes the stale buffer and answers the editor's
"changed since reading" prompt with yes. Within a few seconds the daemon has the file hold both
saves and the person's line, and `wolfmem status` says what it put back. Editors are configured
from nothing (`vim -u NONE`, `nano --ignorercfiles`, `emacs -Q`), so each run sees the same prompts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import tmuxeditor
from conftest import REPO, run_cli, wait_until
from mcpclient import spawn

from wolfmem import Config, Memory
from wolfmem.storage.exchange import DISPLACED_MARK

PEOPLE = "knowledge/people.md"
PERSON_LINE = "- Nadia prefers morning meetings"


class Person:
    """What a person does in one editor: wait for the file, type a line at the end, write, answer yes."""

    def __init__(self, editor: tmuxeditor.Editor) -> None:
        self.editor = editor
        self.writes = 0

    def ready(self) -> None:
        """Wait until the editor shows the file."""
        self.editor.wait_for(r"people\.md")

    def add_line(self, line: str) -> None:
        """Type a line at the end of the buffer, unsaved."""
        editor = self.editor
        if editor.name == "vim":
            editor.keys("G", "o")
            editor.type(line)
            editor.keys("Escape")
        elif editor.name == "nano":
            editor.keys("M-/")  # the last line: after the final newline
            editor.type(line)
            editor.keys("Enter")
        else:
            editor.keys("M->")
            editor.type(line)
            editor.keys("Enter")
        editor.wait_for(line)

    def write(self) -> None:
        """Write the buffer, answering the editor's "changed since you read it" question with yes."""
        editor, self.writes = self.editor, self.writes + 1
        if editor.name == "vim":
            # vim refuses a write that a save raced ("E949: File changed while writing"): a person
            # presses Enter and writes again, as here.
            for _attempt in range(5):
                editor.keys("C-l")  # a redrawn screen: the last write's prompt and message are gone
                editor.wait_gone(r"\(y/n\)|written|E949")
                editor.type(":w")
                editor.keys("Enter")
                found = editor.wait_for(r"\(y/n\)|written|E949")
                if found.group(0) == "(y/n)":
                    editor.type("y")
                    found = editor.wait_for(r"written|E949")
                if found.group(0) == "written":
                    break
                editor.keys("Enter")
            else:
                raise AssertionError(f"vim kept refusing the write:\n{editor.screen()}")
        elif editor.name == "nano":
            editor.keys("C-o")
            editor.wait_for("File Name to Write")
            editor.keys("Enter")
            found = editor.wait_for(r"continue saving|Wrote \d+ line")
            if found.group(0) == "continue saving":
                editor.type("y")
            editor.wait_for(r"Wrote \d+ line")
        else:
            editor.keys("C-x", "C-s")
            found = editor.wait_for(r"Save anyway\? \(yes or no\)|Wrote ")
            if found.group(0) != "Wrote ":
                editor.type("yes")
                editor.keys("Enter")
            editor.wait_for("Wrote ")
            editor.keys("C-l")  # clears the echo area, so the next write's "Wrote" is its own


@pytest.fixture
def daemon(vault: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real `wolfmem daemon` on the vault (its watcher merges outside writes), stopped after the test."""
    log = vault.parent / "daemon.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "wolfmem", "daemon", "--vault", str(vault)],
                                env=dict(os.environ), cwd=REPO, stdout=out, stderr=out)
    try:
        wait_until(lambda: b"daemon watching" in log.read_bytes() or proc.poll() is not None, timeout=60)
        assert proc.poll() is None, log.read_text(errors="replace")
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def open_editor(vault: Path) -> Iterator[Callable[..., Person]]:
    """Open knowledge/people.md in a named editor (skipped if not installed); every session is ended after."""
    opened: list[tmuxeditor.Editor] = []

    def open_(name: str, *extra: str, file: str = PEOPLE) -> Person:
        tmuxeditor.need(name)
        opened.append(tmuxeditor.Editor(name, vault / file, *extra))
        person = Person(opened[-1])
        person.ready()
        return person

    yield open_
    for editor in opened:
        editor.close()


def cli_save(vault: Path, fact: str, topic: str, kind: str = "people") -> None:
    """A save by an agent over the CLI, in its own process."""
    done = run_cli("save", fact, "--type", kind, "--topic", topic, "--vault", str(vault))
    assert done.returncode == 0, done.stderr


def file_text(vault: Path, rel: str = PEOPLE) -> str:
    return (vault / rel).read_text("utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("editor", ["vim", "nano", "emacs"])
def test_a_stale_buffer_written_over_two_saves_keeps_both_and_the_person_line(
    editor: str, vault: Path, tmp_path: Path, daemon: subprocess.Popen[bytes], open_editor: Callable[..., Person],
) -> None:
    person = open_editor(editor)
    person.add_line(PERSON_LINE)
    cli_save(vault, "Dana leads the storage team", "Dana")
    with spawn(vault, tmp_path / "wolfmem-state", tmp_path / "mcp.log") as client:
        client.text("memory_save", {"fact": "Omar runs the Friday demo", "type": "people", "topic": "Omar"})
    assert "Omar runs the Friday demo" in file_text(vault)
    person.write()  # the buffer has neither save: the editor asks, the person says yes
    wait_until(lambda: all(text in file_text(vault) for text in
                           ("Dana leads the storage team", "Omar runs the Friday demo", PERSON_LINE)), timeout=10)
    assert file_text(vault).count(PERSON_LINE) == 1
    status = run_cli("status", "--vault", str(vault))
    assert "put back" in status.stdout, status.stdout


@pytest.mark.parametrize("editor", ["vim", "nano", "emacs"])
def test_a_save_into_another_file_while_people_md_is_open_simply_survives(
    editor: str, vault: Path, daemon: subprocess.Popen[bytes], open_editor: Callable[..., Person],
) -> None:
    person = open_editor(editor)
    person.add_line(PERSON_LINE)
    cli_save(vault, "The billing rewrite ships in May", "Billing", kind="projects")
    person.write()
    wait_until(lambda: PERSON_LINE in file_text(vault))
    assert "The billing rewrite ships in May" in file_text(vault, "knowledge/projects.md")
    assert "put back" not in run_cli("status", "--vault", str(vault)).stdout


@pytest.mark.slow
def test_vim_rename_window_racing_saves_loses_nothing(
    vault: Path, tmp_path: Path, daemon: subprocess.Popen[bytes], open_editor: Callable[..., Person],
) -> None:
    # backupcopy=no + writebackup: every :w renames people.md away and writes a new file in its place.
    person = open_editor("vim", "-c", "set backupcopy=no writebackup nobackup")
    saved: list[str] = []
    stop = threading.Event()

    def agent() -> None:
        with Memory(vault, Config(state_dir=str(tmp_path / "wolfmem-state"))) as memory:
            n = 0
            while not stop.is_set():
                fact = f"Racer {n} keeps the rename window honest"
                receipt = memory.save(fact, type="people", topic="Racers")
                assert receipt.status == "saved", receipt
                saved.append(fact)
                n += 1
                # vim refuses (E949) when the file changes again while it asks whether to write over a
                # changed file: saves back to back (30 a second, now that a save parses and indexes only
                # its lines) would leave no person a moment to write. A busy tool loop: 20 a second.
                stop.wait(0.05)

    thread = threading.Thread(target=agent)
    thread.start()
    try:
        lines = [f"- Person line {k} typed in vim" for k in range(6)]
        for line in lines:
            person.add_line(line)
            person.write()
    finally:
        stop.set()
        thread.join(timeout=60)
    assert saved, "the agent saved nothing"
    wait_until(lambda: all(text in file_text(vault) for text in [*saved, *lines]), timeout=15)


@pytest.mark.slow
def test_no_kept_version_outlives_the_grace_period_with_the_daemon(
    vault: Path, daemon: subprocess.Popen[bytes],
) -> None:
    cli_save(vault, "Dana leads the storage team", "Dana")
    cli_save(vault, "Omar runs the Friday demo", "Omar")
    wait_until(lambda: not list((vault / "knowledge").glob(f".*{DISPLACED_MARK}*")), timeout=10)


# An in-place writer that opened the file before a save and writes after it, as a slow disk makes any editor.
PAUSED_WRITER = """
import os, sys
path, mode = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_WRONLY | (os.O_APPEND if mode == "append" else os.O_TRUNC))
print("opened", flush=True)
text = sys.stdin.read()
os.write(fd, text.encode("utf-8"))
os.close(fd)
"""


@pytest.mark.slow
def test_a_writer_paused_between_truncating_open_and_write_loses_nothing(
    vault: Path, daemon: subprocess.Popen[bytes],
) -> None:
    path = vault / PEOPLE
    buffer = path.read_text("utf-8") + PERSON_LINE + "\n"  # nano's buffer: the file as opened, one line typed
    writer = subprocess.Popen([sys.executable, "-c", PAUSED_WRITER, str(path), "truncate"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline() == "opened\n"
    assert path.read_bytes() == b""  # truncated, not yet written: the save must not make this the template
    cli_save(vault, "Dana leads the storage team", "Dana")
    writer.communicate(buffer, timeout=30)  # the write lands in the version the save swapped out
    wait_until(lambda: PERSON_LINE in file_text(vault) and "Dana leads the storage team" in file_text(vault))
    assert file_text(vault).count("# People") == 1
    wait_until(lambda: "merged back" in run_cli("status", "--vault", str(vault)).stdout)


@pytest.mark.slow
def test_cmd_appending_to_the_file_during_a_save_loses_nothing(
    vault: Path, daemon: subprocess.Popen[bytes],
) -> None:
    # `cmd >> people.md`: the shell opens the file for append, then the command writes when it is ready.
    shell = subprocess.Popen(["sh", "-c", 'exec >> people.md; echo opened >&2; read line; echo "$line"'],
                             cwd=vault / "knowledge", stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert shell.stderr is not None and shell.stderr.readline() == "opened\n"
    cli_save(vault, "Dana leads the storage team", "Dana")
    shell.communicate(PERSON_LINE + "\n", timeout=30)
    wait_until(lambda: PERSON_LINE in file_text(vault) and "Dana leads the storage team" in file_text(vault))
    assert not list((vault / "knowledge").glob(f".*{DISPLACED_MARK}*")) or wait_until(
        lambda: not list((vault / "knowledge").glob(f".*{DISPLACED_MARK}*")), timeout=10)
