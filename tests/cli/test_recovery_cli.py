"""`wolfmem history --show`, `diff --to` and `restore --to --lines/--missing` as a person types them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from recoverykit import forget_and_edit, saved_version

from wolfmem import Memory


@pytest.mark.slow
def test_the_cli_shows_diffs_and_brings_back_lines(vault: Path) -> None:
    with Memory(vault) as memory:
        path, version = saved_version(memory)
        forget_and_edit(memory, path)
    shown = run_cli("history", "people", "--show", str(version), "--vault", str(vault))
    assert shown.returncode == 0, shown.stderr
    assert "5  - Sarah likes green tea\n" in shown.stdout
    plain = run_cli("history", "people", "--show", str(version), "--plain", "--vault", str(vault))
    assert plain.stdout.startswith("# People\n\n## Sarah\n")
    as_json = json.loads(run_cli("history", "people", "--show", str(version), "--json", "--vault", str(vault)).stdout)
    assert as_json["id"] == version and as_json["text"] == plain.stdout
    diff = run_cli("diff", "people", "--to", str(version), "--vault", str(vault))
    assert diff.returncode == 0 and "-- Tom runs the data team\n" in diff.stdout
    back = run_cli("restore", "people", "--to", str(version), "--lines", "7-8", "--vault", str(vault))
    assert back.returncode == 0, back.stderr
    assert back.stdout.startswith("put back 1 line(s)")
    assert path.read_text().endswith("- Sarah moved to Lisbon\n\n## Tom\n- Tom runs the data team\n")
    rest = json.loads(run_cli("restore", "people", "--to", str(version), "--missing", "--json",
                              "--vault", str(vault)).stdout)
    assert [line["text"] for line in rest["restored"]] == ["Sarah likes green tea"]
    misuse = run_cli("restore", "people", "--lines", "8", "--vault", str(vault))
    assert misuse.returncode == 2 and "add --to ID" in misuse.stderr
    bad = run_cli("restore", "people", "--to", str(version), "--lines", "eight", "--vault", str(vault))
    assert bad.returncode == 2 and "range like 12-14" in bad.stderr


def test_history_of_a_name_that_is_no_file_is_an_error_not_an_empty_list(vault: Path) -> None:
    for args in (["history", "peple"], ["history", "peple", "--json"]):
        typo = run_cli(*args, "--vault", str(vault))
        assert typo.returncode == 1 and typo.stdout == "", typo.stdout
        assert "peple is not a file in the vault" in typo.stderr and len(typo.stderr.splitlines()) == 1
    # A real file with nothing kept yet is an empty list, as before.
    (vault / "knowledge" / "todo.md").write_text("# Todo\n", "utf-8")
    assert json.loads(run_cli("history", "knowledge/todo.md", "--json", "--vault", str(vault)).stdout) == []
