"""A first sync that fills an empty index with a big job shows a bar on a terminal: for `wolfmem search`
in a real pty, never when stderr is a pipe, never for MCP, never for a small job or a filled index."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from wolfmem import Config, Memory
from wolfmem.cli import common, processes
from wolfmem.search import parallel


def write_vault(root: Path, days: int, lines: int = 40) -> None:
    (root / "knowledge").mkdir(parents=True, exist_ok=True)
    (root / "episodes").mkdir(exist_ok=True)
    for day in range(days):
        text = [f"# 2025-{day // 28 + 1:02d}-{day % 28 + 1:02d}", "", "## 09:00 — chat"]
        text += [f"- Sarah said the harbour budget item{day}x{k} moved to the depot by the river" for k in range(lines)]
        (root / "episodes" / f"2025-{day // 28 + 1:02d}-{day % 28 + 1:02d}.md").write_text("\n".join(text) + "\n")


class Recorder:
    """A bulk_progress factory that records each bar opened and the calls it got."""

    def __init__(self) -> None:
        self.bars: list[list[tuple[int, int]]] = []

    @contextlib.contextmanager
    def __call__(self) -> Iterator[Callable[[int, int], None]]:
        calls: list[tuple[int, int]] = []
        self.bars.append(calls)
        yield lambda done, total: calls.append((done, total))


def test_a_big_first_sync_shows_progress_once_and_a_later_or_small_one_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_vault(tmp_path / "vault", 12)
    monkeypatch.setattr(parallel, "MIN_BYTES", 10**12)  # a small job, however many bytes
    recorder = Recorder()
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "small"))) as memory:
        memory.syncer.bulk_progress = recorder
        memory.search("harbour budget")
    assert recorder.bars == []  # a small job: no bar
    monkeypatch.setattr(parallel, "MIN_BYTES", 1_000)
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "big"))) as memory:
        memory.syncer.bulk_progress = recorder
        memory.search("harbour budget")
        done, total = recorder.bars[0][-1]
        assert len(recorder.bars) == 1 and done == total >= 12  # every file, the vault's own ones too
        write_vault(tmp_path / "vault", 30)  # 18 new files, but the index is no longer empty
        memory.search("harbour budget")
        assert len(recorder.bars) == 1 and memory.index.count() >= 30 * 40


def test_the_cli_wires_a_bar_only_on_a_terminal_and_never_for_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_vault(tmp_path / "vault", 1)
    for tty in (False, True):
        monkeypatch.setattr(sys.stderr, "isatty", lambda tty=tty: tty)
        with common.open_memory(tmp_path / "vault") as memory:
            assert (memory.syncer.bulk_progress is not None) == tty
    served: list[Memory] = []
    monkeypatch.setattr("wolfmem.mcp.server.serve", served.append)
    processes.mcp(tmp_path / "vault")
    assert served and served[0].syncer.bulk_progress is None


def run_in_pty(args: list[str], stderr_tty: bool) -> tuple[int, bytes]:
    """Run `python -m wolfmem ARGS` with stdout a pipe and stderr a pty (or a pipe); (exit code, stderr)."""
    parent, child = pty.openpty() if stderr_tty else os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "wolfmem", *args], stdout=subprocess.DEVNULL, stderr=child,
                            stdin=subprocess.DEVNULL, env=dict(os.environ, COLUMNS="100"), cwd=REPO)
    os.close(child)
    seen = b""
    while True:
        ready, _, _ = select.select([parent], [], [], 120)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(parent, 65536)
        except OSError:  # the pty's other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(parent)
    return proc.wait(timeout=60), seen


@pytest.mark.slow
@pytest.mark.parametrize("stderr_tty", [True, False])
def test_wolfmem_search_on_a_fresh_big_vault_shows_a_bar_on_a_terminal_only(tmp_path: Path, stderr_tty: bool) -> None:
    write_vault(tmp_path / "vault", 90, lines=80)  # about 530 kB: a big job
    assert sum(path.stat().st_size for path in (tmp_path / "vault").rglob("*.md")) >= parallel.MIN_BYTES
    code, stderr = run_in_pty(["search", "harbour", "budget", "--vault", str(tmp_path / "vault")], stderr_tty)
    assert code == 0, stderr
    assert (b"Indexing" in stderr) == stderr_tty, stderr


def test_the_daemon_shows_its_first_sync_with_the_bar_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wolfmem.ops.daemon import Daemon

    write_vault(tmp_path / "vault", 12)
    monkeypatch.setattr(parallel, "MIN_BYTES", 1_000)
    recorder = Recorder()
    daemon = Daemon(Config(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state")), bulk_progress=recorder)
    try:
        daemon.start()
    finally:
        daemon.stop()
    assert len(recorder.bars) == 1 and recorder.bars[0][-1][0] >= 12
