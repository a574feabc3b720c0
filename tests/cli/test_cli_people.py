"""The CLI speaks to a person: free-text arguments, click-style help, plain wording, short names, first launch."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_cli


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    assert run_cli("init", "--vault", str(root)).returncode == 0
    saved = run_cli("save", "Sarah", "Chen", "is", "my", "manager.", "--type", "people", "--topic", "Sarah Chen",
                    "--vault", str(root))
    assert saved.returncode == 0, saved.stderr
    return root


def test_search_and_save_take_the_rest_of_the_line(vault: Path) -> None:
    assert "- Sarah Chen is my manager." in (vault / "knowledge" / "people.md").read_text("utf-8")
    found = run_cli("search", "who", "is", "my", "manager", "--vault", str(vault))
    assert found.returncode == 0, found.stderr
    assert "Sarah Chen is my manager." in found.stdout
    ref = found.stdout.split()[0]
    updated = run_cli("update", ref, "Sarah", "Chen", "is", "my", "skip-level", "manager.", "--vault", str(vault))
    assert updated.returncode == 0, updated.stderr
    assert "- Sarah Chen is my skip-level manager." in (vault / "knowledge" / "people.md").read_text("utf-8")


@pytest.mark.parametrize("command", ["search", "save", "log", "get", "update", "forget", "history", "restore",
                                     "service install", ""])
def test_help_uses_click_conventions(command: str) -> None:
    result = run_cli(*command.split(), "--help")
    assert result.returncode == 0, result.stderr
    assert not re.search(r"<(str|int|bool|path|list\[\w+\])>", result.stdout), result.stdout
    assert not re.search(r"\{\w+\}", result.stdout), result.stdout  # no {fact}
    for line in result.stdout.splitlines():
        if "--json" in line or "--help" in line:
            assert not re.search(r"--(json|help)\s+(-h\s+)?[A-Z]{3,}", line), line  # flags take no value


def test_usage_lines_name_the_arguments() -> None:
    assert "Usage: wolfmem search [OPTIONS] QUERY..." in run_cli("search", "--help").stdout
    assert "Usage: wolfmem save [OPTIONS] FACT..." in run_cli("save", "--help").stdout
    assert "Usage: wolfmem update [OPTIONS] REF FACT..." in run_cli("update", "--help").stdout


def test_errors_name_commands_not_tools(vault: Path) -> None:
    missing = run_cli("get", "knowledge/nope.md", "--vault", str(vault))
    assert missing.returncode == 1
    assert "use `wolfmem search` or `wolfmem map`" in missing.stderr and "memory_" not in missing.stderr
    text = run_cli("get", "notes.txt", "--vault", str(vault))
    assert "`wolfmem get` reads the vault's .md files" in text.stderr and "memory_" not in text.stderr


def test_no_match_is_advice_for_a_person(vault: Path) -> None:
    result = run_cli("search", "zeppelin", "hangar", "--vault", str(vault))
    assert result.returncode == 0
    assert result.stdout == ("Nothing found for 'zeppelin hangar'. "
                             "Try other words: a name, a synonym or a broader topic.\n")


@pytest.mark.parametrize("name", ["people", "people.md", "knowledge/people.md", "file:knowledge/people.md",
                                  "people.md#Sarah Chen", "people#L5-L7"])
def test_get_accepts_the_short_names_history_accepts(vault: Path, name: str) -> None:
    result = run_cli("get", name, "--vault", str(vault))
    assert result.returncode == 0, result.stderr
    assert "Sarah Chen is my manager." in result.stdout
    assert run_cli("history", name.split("#")[0], "--vault", str(vault)).returncode == 0


def test_forget_accepts_a_short_name_ref(vault: Path) -> None:
    ref = run_cli("search", "manager", "--vault", str(vault)).stdout.split()[0]
    short = ref.removeprefix("file:knowledge/")
    result = run_cli("forget", short, "--reason", "it was wrong", "--vault", str(vault))
    assert result.returncode == 0, result.stderr
    assert "Sarah Chen is my manager." not in (vault / "knowledge" / "people.md").read_text("utf-8")


def test_first_launch_says_where_it_created_the_default_vault(isolated_env: Path) -> None:
    default = isolated_env / "data" / "wolfmem" / "vault"
    first = run_cli("map")
    assert first.returncode == 0, first.stderr
    assert f"created the default vault at {default}" in first.stderr
    assert (default / "knowledge").is_dir()
    second = run_cli("map")
    assert second.returncode == 0 and "created" not in second.stderr


def test_no_arguments_prints_help_and_exits_0() -> None:
    result = run_cli()
    assert result.returncode == 0, result.stderr
    assert "Usage: wolfmem [OPTIONS] COMMAND [ARGS]..." in result.stdout and "search" in result.stdout
