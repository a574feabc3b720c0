"""Ctrl+C at any moment of a command: one line on stderr, exit 130, and a write under way finished first.

A real Ctrl+C lands wherever the process is; here it is sent from inside the command, at the moment
it first imports a given module (a finder on sys.meta_path), so each run strikes a known instant:
before the commands are loaded, while the search engine, the MCP SDK or the scheduler loads.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from wolfmem import Memory
from wolfmem.cancellation import completing, on_sigint
from wolfmem.storage.writer import Cause, Stage

# The console script, with a Ctrl+C (SIGINT to itself) when `target` is first imported.
STRIKE = """
import importlib.abc, os, signal, sys
target = sys.argv.pop(1)

class Strike(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, module=None):
        if name == target:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Strike())
from wolfmem.cli import main
sys.exit(main())
"""

MOMENTS = [
    ("search", "wolfmem.cli.commands"),  # the first thing main does
    ("search", "typer"),
    ("search", "whoosh"),
    ("search", "wolfmem.memory.facade"),
    ("mcp", "pydantic"),
    ("mcp", "mcp.server.lowlevel"),
    ("mcp", "anyio"),
    ("daemon", "wolfmem.ops.daemon"),
    ("daemon", "apscheduler.schedulers.background"),  # the daemon's own handler is in place by then
]


@pytest.mark.parametrize(("command", "module"), MOMENTS, ids=[f"{c}-at-{m}" for c, m in MOMENTS])
def test_ctrl_c_while_a_command_starts_exits_130_with_one_line(vault: Path, command: str, module: str) -> None:
    args = {"search": ["search", "zeppelin"], "mcp": ["mcp"], "daemon": ["daemon"]}[command]
    done = subprocess.run([sys.executable, "-c", STRIKE, module, *args, "--vault", str(vault)], cwd=REPO,
                          env=dict(os.environ), stdin=subprocess.PIPE, capture_output=True, text=True, timeout=60)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[-1] == "wolfmem: interrupted"
    if command == "search":
        assert done.stderr == "wolfmem: interrupted\n" and done.stdout == ""


def test_ctrl_c_during_a_write_takes_effect_once_it_has_landed(memory: Memory) -> None:
    rel = "knowledge/people.md"
    before = (memory.vault.root / rel).read_text("utf-8")
    after = before + "- Quentin keeps the zeppelin hangar.\n"

    def strike(stage: Stage, at: str) -> None:
        if stage is Stage.BACKED_UP and at == rel:
            os.kill(os.getpid(), signal.SIGINT)  # handled at once, here: inside the write

    previous = signal.signal(signal.SIGINT, on_sigint)
    memory.writer.on_stage = strike
    try:
        with pytest.raises(KeyboardInterrupt):
            memory.writer.put(rel, after, cause=Cause.CURATION)
    finally:
        memory.writer.on_stage = None
        signal.signal(signal.SIGINT, previous)
    # The write and its bookkeeping completed before the interrupt: file, backup, history and index agree.
    assert (memory.vault.root / rel).read_text("utf-8") == after
    assert (memory.vault.root / (rel + ".bak")).read_text("utf-8") == before
    assert memory.history.latest(rel).size == len(after.encode("utf-8"))
    assert [hit.text for hit in memory.search("zeppelin hangar")][:1] == ["Quentin keeps the zeppelin hangar."]


def test_outside_a_write_ctrl_c_interrupts_at_once_and_nested_writes_hold_it_to_the_outermost() -> None:
    previous = signal.signal(signal.SIGINT, on_sigint)
    reached = []
    try:
        with pytest.raises(KeyboardInterrupt), completing():
            with completing():
                os.kill(os.getpid(), signal.SIGINT)
                reached.append("inner")
            reached.append("outer")
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            reached.append("never")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert reached == ["inner", "outer"]
