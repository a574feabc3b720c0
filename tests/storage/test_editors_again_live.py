"""Real vim, nano and emacs (through tmux) write the same stale buffer again after wolfmem put a save back.

The person types a line into a buffer loaded before an agent's save and writes it (answering the editor's
"changed since reading" question with yes); the daemon puts the save back. The person never reloads: vim and
nano write that buffer again byte for byte (vim's `:w`, nano's ^O, each after the same question), and every
editor writes it again with another line typed. Each time the save comes back, every line the person typed
stays, nothing is doubled and nothing is archived as removed by hand. Editors as `test_editors_live.py`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli, wait_until
from test_editors_live import PERSON_LINE, Person, cli_save, daemon, file_text, open_editor  # noqa: F401 - fixtures

SAVED = "Dana leads the storage team"


def _type_line(person: Person, line: str) -> None:
    """Type a line at the end of a buffer the file on disk has moved past (emacs asks before the first change)."""
    editor = person.editor
    if editor.name != "emacs":
        person.add_line(line)
        return
    editor.keys("M->")
    editor.type(line[0])
    found = editor.wait_for(r"really edit the buffer\? \(y, n, r or C-h\)|" + f"^{line[0]}$")
    if "really edit" in found.group(0):
        editor.type("y")
    editor.type(line[1:])
    editor.keys("Enter")
    editor.wait_for(line)


def _written_back(vault: Path, typed: list[str]) -> str:
    """The file once the daemon has put the save back over the buffer just written, checked line by line."""
    wait_until(lambda: SAVED in file_text(vault), timeout=15)
    text = file_text(vault)
    for line in (f"- {SAVED}", *typed):
        assert text.count(line + "\n") == 1, (line, text)
    return text


@pytest.mark.slow
@pytest.mark.parametrize("editor", ["vim", "nano", "emacs"])
def test_a_stale_buffer_written_again_keeps_the_save_it_never_showed(
    editor: str, vault: Path, daemon: subprocess.Popen[bytes], open_editor: Callable[..., Person],  # noqa: F811
) -> None:
    person = open_editor(editor)
    typed = [PERSON_LINE]
    person.add_line(PERSON_LINE)
    cli_save(vault, SAVED, "Dana")
    person.write()
    _written_back(vault, typed)
    for round_ in range(3):
        if editor == "emacs" or round_ == 1:  # emacs writes only a changed buffer
            typed.append(f"- Nadia note {round_} typed in the stale buffer")
            _type_line(person, typed[-1])
        person.write()
        _written_back(vault, typed)
    status = run_cli("status", "--vault", str(vault)).stdout
    assert "removed by hand" not in status, status
