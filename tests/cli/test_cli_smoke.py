"""Every registered command of `wolfmem`: its `--help`, and one harmless real call in a scratch vault.

The commands are read from the typer app itself, so a command added without a row in CALLS fails
`test_every_command_has_a_call`. Each run is a real `python -m wolfmem` subprocess: this is the test
that catches a command whose own imports are broken, which no test of the library below it sees.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
from conftest import REPO, run_cli, wait_until

from wolfmem import Config, Memory
from wolfmem.cli import app
from wolfmem.storage.writer import Cause, Edit

FACT = "Sarah is my manager."
ADDED = "- Sarah prefers written updates."  # an edit kept with a .bak, so `diff` and `restore` have one


def _paths(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every command under `command` (itself first), walking command groups."""
    yield path
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _paths(sub, (*path, name))


COMMANDS = list(_paths(typer.main.get_command(app)))


@dataclass(frozen=True)
class Call:
    """A harmless call: its arguments ({vault}, {scratch} and {ref} filled in), exit code and a line it prints."""

    args: tuple[str, ...]
    says: str
    code: int = 0
    until: str = ""  # a command that runs until stopped: the log line that says it is up, then SIGTERM


V = ("--vault", "{vault}")
CALLS: dict[tuple[str, ...], Call] = {
    (): Call(("--version",), "wolfmem "),
    ("init",): Call(("init", "--vault", "{scratch}/fresh"), "Created in"),
    ("search",): Call(("search", "Sarah", *V), FACT),
    ("get",): Call(("get", "knowledge/people.md", *V), "## Sarah"),
    ("map",): Call(("map", *V), "people.md: Sarah"),
    ("reindex",): Call(("reindex", *V), "Indexed 2 facts"),
    ("status",): Call(("status", *V), "daemon:   not running"),
    ("curator",): Call(("curator", *V), "curates: "),
    ("config",): Call(("config", *V), "# wolfmem settings as resolved now"),
    ("doctor",): Call(("doctor", *V), "ok       vault"),
    ("save",): Call(("save", "Tom leads the data team.", "-t", "people", "--topic", "Tom", *V),
                    "Saved to knowledge/people.md under '## Tom'"),
    ("log",): Call(("log", "Ran the CLI smoke test", *V), "Logged to file:episodes/"),
    ("update",): Call(("update", "{ref}", "Sarah is my manager at Acme.", "--expected", FACT, *V), "Updated {ref}"),
    ("forget",): Call(("forget", "{ref}", "--reason", "a smoke test", "--expected", FACT, *V), "archived"),
    ("diff",): Call(("diff", "people", *V), "+" + ADDED),
    ("restore",): Call(("restore", "people", *V), "restored knowledge/people.md from knowledge/people.md.bak"),
    ("history",): Call(("history", "people", *V), "save"),
    ("curate",): Call(("curate", "--dry-run", *V), "dry-run: offline curator"),
    ("curate", "apply"): Call(("curate", "apply", *V), "nothing is staged"),
    ("audit",): Call(("audit", "--now", *V), "Offline audit"),
    ("audit", "apply"): Call(("audit", "apply", *V), "there is no audit report yet", code=2),
    ("daemon",): Call(("daemon", *V), "stopped", until="daemon watching"),
    ("mcp",): Call(("mcp", *V), "stdin closed"),  # stdin is empty: the client is gone at once
    ("service",): Call(("service",), "Missing command", code=2),
    ("service", "install"): Call(("service", "install", *V), "ran `systemctl --user enable --now wolfmem.service`"),
    ("service", "uninstall"): Call(("service", "uninstall"), "no wolfmem service installed"),
    ("service", "status"): Call(("service", "status"), "not installed", code=1),
}
def _name(path: tuple[str, ...]) -> str:
    return " ".join(path) or "wolfmem"


def _cases() -> list[Any]:
    return [pytest.param(path, id=_name(path)) for path in COMMANDS]


def test_every_command_has_a_call() -> None:
    assert {"audit apply", "curate apply", "service status"} <= {_name(path) for path in COMMANDS}
    missing = [_name(path) for path in COMMANDS if path not in CALLS]
    assert not missing, f"add a harmless call to CALLS for: {', '.join(missing)}"
    assert not set(CALLS) - set(COMMANDS), "CALLS names commands that are no longer registered"


@pytest.mark.parametrize("path", COMMANDS, ids=_name)
def test_help(path: tuple[str, ...]) -> None:
    result = run_cli(*path, "--help")
    assert result.returncode == 0, result.stderr
    assert f"Usage: wolfmem {' '.join(path)}".rstrip() in result.stdout


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, systemctl: Path) -> dict[str, str]:
    """A vault with one saved fact and a kept `.bak`, a fake systemctl and a home of its own."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "vault"
    with Memory(root, Config(state_dir=str(tmp_path / "wolfmem-state"))) as memory:
        ref = memory.save(FACT, "people", "Sarah").ref
        memory.writer.edit("knowledge/people.md", lambda text: Edit(f"{text}{ADDED}\n"), cause=Cause.SAVE, backup=True)
    return {"vault": str(root), "scratch": str(tmp_path), "ref": ref}


@pytest.mark.parametrize("path", _cases())
def test_a_harmless_call(path: tuple[str, ...], scratch: dict[str, str], tmp_path: Path) -> None:
    call = CALLS[path]
    args = [arg.format(**scratch) for arg in call.args]
    if call.until:
        code, out = _run_until_up(args, call.until, tmp_path / "output")
    else:
        result = run_cli(*args, input="")
        code, out = result.returncode, result.stdout + result.stderr
    assert code == call.code and call.says.format(**scratch) in out, out
    assert "Traceback" not in out, out


def _run_until_up(args: list[str], ready: str, log: Path) -> tuple[int, str]:
    """Start a command that runs until stopped, stop it (SIGTERM) once it logs `ready`: (exit code, output)."""
    with log.open("w") as output:
        proc = subprocess.Popen([sys.executable, "-m", "wolfmem", *args], stdin=subprocess.DEVNULL,
                                stdout=output, stderr=subprocess.STDOUT, cwd=REPO)
    try:
        wait_until(lambda: ready in log.read_text() or proc.poll() is not None, timeout=60)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, log.read_text()
