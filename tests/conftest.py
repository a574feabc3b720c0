"""Shared fixtures: every test gets its own vault, state folder and user dirs on real disk."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from fakellm import FakeLLM

from wolfmem import Config, Memory
from wolfmem.search.watcher import Watcher

REPO = Path(__file__).resolve().parent.parent
_CLEARED = (
    "WOLFMEM_CONFIG",
    "WOLFMEM_VAULT",
    "WOLFMEM_LLM_BASE_URL",
    "WOLFMEM_LLM_MODEL",
    "WOLFMEM_LLM_API_KEY",
    "WOLFMEM_EMBEDDINGS_BASE_URL",
    "WOLFMEM_EMBEDDINGS_MODEL",
    "WOLFMEM_EMBEDDINGS_API_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every user dir, config file and state dir at tmp_path, for this process and its children."""
    home = tmp_path / "home"
    for name, sub in (
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        monkeypatch.setenv(name, str(home / sub))
    monkeypatch.setenv("WOLFMEM_STATE_DIR", str(tmp_path / "wolfmem-state"))
    monkeypatch.setenv("WOLFMEM_LOG_DIR", str(tmp_path / "wolfmem-logs"))
    for name in _CLEARED:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def config(tmp_path: Path) -> Config:
    """Default settings with a private state dir."""
    return Config(state_dir=str(tmp_path / "wolfmem-state"), log_dir=str(tmp_path / "wolfmem-logs"))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A vault folder laid out by `init` (via Memory)."""
    root = tmp_path / "vault"
    with Memory(root, Config(state_dir=str(tmp_path / "wolfmem-state"))):
        pass
    return root


@pytest.fixture
def memory(vault: Path, config: Config) -> Iterator[Memory]:
    """A Memory over the vault fixture."""
    with Memory(vault, config) as mem:
        yield mem


class Clock:
    """A clock a test moves by hand (pass it as `clock=` to Memory)."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def watched(memory: Memory) -> Iterator[Memory]:
    """The memory with its watcher running, as under the daemon (its first sync done)."""
    watcher = Watcher(memory.vault, memory.sync, debounce_seconds=0.05, reconcile_seconds=300)
    watcher.start()
    try:
        wait_until(lambda: watcher.syncs >= 1)
        yield memory
    finally:
        watcher.stop()


def wait_until(predicate: Callable[[], object], timeout: float = 10.0, interval: float = 0.02) -> object:
    """Poll predicate until it returns something truthy; fail the test after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


def run_cli(*args: str, input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run `python -m wolfmem ARGS` in a real subprocess with this test's environment."""
    return subprocess.run(
        [sys.executable, "-m", "wolfmem", *args],
        capture_output=True,
        text=True,
        input=input,
        timeout=timeout,
        env=dict(os.environ),
        cwd=REPO,
    )


# For the `wolfmem service` commands: a real systemd user manager cannot run here (no user bus).
# The script records each call and fails those named in $FAKE_SYSTEMCTL_FAIL.
FAKE_SYSTEMCTL = """#!/bin/sh
echo "$*" >> "$FAKE_SYSTEMCTL_CALLS"
for word in $FAKE_SYSTEMCTL_FAIL; do
    case " $* " in *" $word "*) echo "Failed to connect to bus: No medium found" >&2; exit 1;; esac
done
case "$*" in
    *is-active*) echo "${FAKE_SYSTEMCTL_ACTIVE:-active}"; [ "${FAKE_SYSTEMCTL_ACTIVE:-active}" = active ] || exit 3;;
    *is-enabled*) echo enabled;;
esac
exit 0
"""


@pytest.fixture
def systemctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `systemctl` first on PATH; returns the file its calls are recorded in."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    script = bin_dir / "systemctl"
    script.write_text(FAKE_SYSTEMCTL)
    script.chmod(0o755)
    # The unit's ExecStart needs the installed `wolfmem` command, which sits beside this Python.
    venv_bin = Path(sys.executable).parent
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{venv_bin}{os.pathsep}{os.environ['PATH']}")
    calls = tmp_path / "systemctl-calls"
    monkeypatch.setenv("FAKE_SYSTEMCTL_CALLS", str(calls))
    return calls


UNCHANGED = {"status": "unchanged", "summary": "", "content": "", "changes": []}


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    """A fake OpenAI-compatible server on 127.0.0.1 whose unscripted replies say "unchanged"."""
    with FakeLLM(default=UNCHANGED) as server:
        yield server


@pytest.fixture
def llm_config(tmp_path: Path, fake: FakeLLM) -> Config:
    """Settings that point the LLM curator at the fake server, with short timeouts and no retries."""
    return Config(
        state_dir=str(tmp_path / "state"),
        llm_base_url=fake.base_url,
        llm_model="fake-model",
        llm_api_key_env="WOLFMEM_TEST_NO_SUCH_KEY",
        llm_timeout=2.0,
        llm_max_retries=0,
    )


@pytest.fixture
def curator(llm_config: Config):
    """Build LLM curators (settings may be overridden per call), closed after the test."""
    from dataclasses import replace

    from wolfmem.curation.run import make_curator

    made = []

    def make(**settings):
        made.append(make_curator(replace(llm_config, **settings)))
        return made[-1]

    yield make
    for item in made:
        item.close()


@pytest.fixture
def embed_server():
    """A deterministic fake embeddings server on 127.0.0.1 (tests/fakeembed.py)."""
    from fakeembed import FakeEmbed

    with FakeEmbed() as server:
        yield server


@pytest.fixture
def hybrid_config(tmp_path: Path, embed_server) -> Config:
    """Settings that turn hybrid search on, pointed at the fake embeddings server."""
    return Config(
        state_dir=str(tmp_path / "wolfmem-state"),
        log_dir=str(tmp_path / "wolfmem-logs"),
        embeddings_base_url=embed_server.base_url,
        embeddings_model="fake-embed",
        embeddings_api_key_env="WOLFMEM_TEST_NO_SUCH_KEY",
        embeddings_timeout=5.0,
        embeddings_batch=4,
    )
