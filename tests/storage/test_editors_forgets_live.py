"""Real vim, nano and emacs (through tmux) write a buffer loaded before an agent forgot a fact in it.

The person opens people.md and types a line; an agent forgets another fact over the CLI (it goes to the
archive); the person writes the buffer, answering the editor's "changed since reading" question with yes.
The buffer's copy of the forgotten line predates the forget and the person never typed it: the daemon
keeps it out (it stays archived), keeps the person's line, and `status` says so. Editors as `test_editors_live.py`.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli, wait_until
from test_editors_live import PERSON_LINE, Person, cli_save, daemon, file_text, open_editor  # noqa: F401 - fixtures

FORGOTTEN = "Tom lives in Berlin"


@pytest.mark.slow
@pytest.mark.parametrize("editor", ["vim", "nano", "emacs"])
def test_a_stale_buffer_written_after_a_forget_keeps_the_forget_and_the_person_line(
    editor: str, vault: Path, daemon: subprocess.Popen[bytes], open_editor: Callable[..., Person],  # noqa: F811
) -> None:
    cli_save(vault, FORGOTTEN, "Tom")
    cli_save(vault, "Dana leads the storage team", "Dana")
    person = open_editor(editor)
    person.add_line(PERSON_LINE)
    hits = json.loads(run_cli("search", "Tom Berlin", "--json", "--vault", str(vault)).stdout)
    forgot = run_cli("forget", hits[0]["ref"], "--reason", "the user moved", "--vault", str(vault))
    assert forgot.returncode == 0 and FORGOTTEN not in file_text(vault), forgot.stdout + forgot.stderr

    person.write()

    wait_until(lambda: "kept out" in run_cli("status", "--vault", str(vault)).stdout, timeout=15)
    text = file_text(vault)
    assert FORGOTTEN not in text and text.count(PERSON_LINE + "\n") == 1 and "Dana leads the storage team" in text
    archived = run_cli("search", "Tom Berlin", "--source", "archive", "--vault", str(vault)).stdout
    assert FORGOTTEN in archived
