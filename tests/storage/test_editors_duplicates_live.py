"""Real vim, nano and emacs (through tmux): the person deletes a line, an agent saves that fact, the buffer is written.

The agent's save is answered "duplicate" (the line is still on disk), so it counts on that line; the person's
buffer, loaded before the save, is written without it. The daemon puts the line back and `status` says so
(deleting it again is obeyed: tests/memory/test_outside_write_duplicates.py). Editors as `test_editors_live.py`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli, wait_until
from test_editors_live import Person, daemon, file_text, open_editor  # noqa: F401 - the fixtures

PEOPLE = "knowledge/people.md"
FACT = "Dana leads the storage team."
OTHER = "Dana keeps bees on the roof."


def _delete_line(person: Person, number: int, text: str) -> None:
    """Delete line `number` of the buffer (unsaved), as a person does in each editor."""
    editor = person.editor
    if editor.name == "vim":
        editor.type(f"{number}Gdd")
    elif editor.name == "nano":
        editor.keys("C-_")  # go to line
        editor.wait_for("Enter line number")
        editor.type(str(number))
        editor.keys("Enter", "C-k")
    else:
        editor.keys("M-g", "g")
        editor.wait_for("Goto line")
        editor.type(str(number))
        editor.keys("Enter", "C-a", "C-k", "C-k")
    editor.wait_gone(text)


@pytest.mark.slow
@pytest.mark.parametrize("editor", ["vim", "nano", "emacs"])
def test_a_line_a_duplicate_save_counts_on_comes_back_once_after_the_editor_drops_it(
    editor: str, vault: Path, daemon: subprocess.Popen[bytes], open_editor: Callable[..., Person],  # noqa: F811
) -> None:
    path = vault / PEOPLE
    path.write_text(path.read_text("utf-8") + f"\n## Dana\n- {FACT}\n- {OTHER}\n", "utf-8")  # typed by the person
    number = path.read_text("utf-8").splitlines().index(f"- {FACT}") + 1
    assert FACT in run_cli("search", "storage team", "--vault", str(vault)).stdout
    person = open_editor(editor)
    _delete_line(person, number, FACT)
    saved = run_cli("save", FACT, "--type", "people", "--topic", "Dana", "--vault", str(vault))
    assert saved.returncode == 0 and "Already on file" in saved.stdout, saved.stdout + saved.stderr
    person.write()
    wait_until(lambda: FACT in file_text(vault) and OTHER in file_text(vault), timeout=15)
    assert file_text(vault).count(f"- {FACT}\n") == 1
    wait_until(lambda: "put back" in run_cli("status", "--vault", str(vault)).stdout, timeout=15)
