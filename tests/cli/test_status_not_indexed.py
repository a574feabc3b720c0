"""`wolfmem status` names what is not indexed, in its text and in --json."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

from wolfmem.storage.vault import NOT_MARKDOWN, OUTSIDE_INDEXED


def test_status_names_what_is_not_indexed(vault: Path) -> None:
    (vault / "knowledge/todo.txt").write_text("call the plumber\n")
    (vault / "README.md").write_text("# My vault\n")
    as_json = run_cli("status", "--json", "--vault", str(vault))
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["not_indexed"] == [
        {"path": "README.md", "reason": OUTSIDE_INDEXED},
        {"path": "knowledge/todo.txt", "reason": NOT_MARKDOWN},
    ]
    text = run_cli("status", "--vault", str(vault)).stdout
    assert f"not indexed: knowledge/todo.txt ({NOT_MARKDOWN})" in text
    assert f"not indexed: README.md ({OUTSIDE_INDEXED})" in text
