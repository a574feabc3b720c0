"""Every code block in the README runs as written: python and sh in real subprocesses, TOML and JSON parsed.

Each block runs in a home folder of its own (HOME, no XDG_* or WOLFMEM_* variables), so `~/notes/agent`
and the default vault land in tmp_path, with the installed `wolfmem` first on PATH and the `openai`
client pointed at the fake server. A block that cannot run here (it starts the daemon for good, needs
another program, or installs into the user account) is preceded by `<!-- not run by tests/test_readme.py:
REASON -->`, and that is the only way to leave one out.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO
from fakellm import FakeLLM, Reply
from markdown_it import MarkdownIt

from wolfmem.config import load_config

README = REPO / "README.md"
SKIP = re.compile(r"<!--\s*not run by tests/test_readme\.py:\s*(?P<reason>.+?)\s*-->")
RUNNERS = {"python", "sh", "toml", "json"}


@dataclass(frozen=True)
class Block:
    """One fenced code block of the README."""

    language: str
    code: str
    line: int
    skip_reason: str | None

    @property
    def id(self) -> str:
        return f"{self.language}@L{self.line}"


def readme_blocks() -> list[Block]:
    """The fenced blocks in order, each with the skip reason of an HTML comment just before it."""
    tokens = MarkdownIt("commonmark").parse(README.read_text("utf-8"))
    blocks, previous = [], None
    for token in tokens:
        if token.type == "fence":
            match = SKIP.search(previous.content) if previous is not None and previous.type == "html_block" else None
            blocks.append(Block(token.info.strip(), token.content, token.map[0] + 1,
                                match.group("reason") if match else None))
        previous = token
    return blocks


BLOCKS = readme_blocks()
RUN = [block for block in BLOCKS if block.language in RUNNERS and block.skip_reason is None]


def test_every_code_block_is_run_or_says_why_not() -> None:
    for block in BLOCKS:
        assert block.language in RUNNERS | {""}, f"README line {block.line}: unknown block language {block.language!r}"
    skipped = [block for block in BLOCKS if block.skip_reason is not None]
    assert all(block.language == "sh" for block in skipped), "only shell commands may be left unrun"
    assert {block.language for block in RUN} == RUNNERS
    assert len(RUN) >= 8


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """The environment of a fresh user account whose home is tmp_path/home."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("XDG_", "WOLFMEM_", "OPENAI_"))}
    env["HOME"] = str(tmp_path / "home")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    (tmp_path / "home").mkdir()
    return env


def tool_call_reply() -> Reply:
    """A first model turn that calls memory_search, as OpenAI shapes it."""
    reply = FakeLLM.text(None, "tool_calls")
    reply.body["choices"][0]["message"]["tool_calls"] = [{
        "id": "call_1", "type": "function",
        "function": {"name": "memory_search", "arguments": json.dumps({"query": "Who is my manager?"})},
    }]
    return reply


@pytest.mark.parametrize("block", RUN, ids=lambda block: block.id)
@pytest.mark.slow
def test_block_runs(block: Block, home: dict[str, str], tmp_path: Path) -> None:
    if block.language == "json":
        json.loads(block.code)
        return
    if block.language == "toml":
        path = tmp_path / "config.toml"
        path.write_text(block.code)
        tomllib.loads(block.code)
        load_config(environ={}, config_file=path)
        return
    script = tmp_path / ("block.py" if block.language == "python" else "block.sh")
    script.write_text(block.code)
    command = [sys.executable, str(script)] if block.language == "python" else ["bash", "-euo", "pipefail", str(script)]
    with FakeLLM(default=FakeLLM.text("Sarah is your manager.")) as fake:
        fake.push(tool_call_reply())
        env = {**home, "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-test-not-a-key"}
        result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
        assert result.returncode == 0, f"README line {block.line}:\n{result.stdout}\n{result.stderr}"
        if "openai" in block.code:
            assert [m["role"] for m in fake.requests[-1]["messages"]] == ["system", "user", "assistant", "tool"]
            assert result.stdout.strip() == "Sarah is your manager."
