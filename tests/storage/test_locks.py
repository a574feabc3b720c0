"""The vault's locks: one per file, one for the index, shared by processes and taken in turn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wolfmem.errors import VaultBusy
from wolfmem.storage import locks

REPO = Path(__file__).resolve().parents[2]

# Takes the lock again and again, as a sync loop or a busy saver does, counting each time it got it.
_HOT = """
import sys, time
from pathlib import Path
from wolfmem.storage import locks
path, counter = Path(sys.argv[1]), Path(sys.argv[2])
taken = 0
while True:
    with locks.hold(path, 30, "the test lock"):
        taken += 1
        counter.write_text(str(taken))
        if taken == 1:
            print("holding", flush=True)
        time.sleep(0.005)
"""


def test_a_holder_that_takes_the_lock_again_at_once_lets_a_waiter_in_first(tmp_path: Path) -> None:
    path, counter = tmp_path / "locks" / "file.lock", tmp_path / "count"
    hot = subprocess.Popen([sys.executable, "-c", _HOT, str(path), str(counter)], stdout=subprocess.PIPE,
                           text=True, cwd=REPO)
    try:
        assert hot.stdout is not None and hot.stdout.readline().strip() == "holding"
        before = int(counter.read_text())
        with locks.hold(path, 10, "the test lock"):
            during = int(counter.read_text())
        # The waiter holds the door, so the holder gets the lock at most once more before it: without
        # the door it wins nearly every race against a waiter that polls.
        assert during - before <= 2
    finally:
        hot.kill()
        hot.wait()


_HOLD = """
import sys
from pathlib import Path
from wolfmem.storage.vault import Vault
vault = Vault(Path(sys.argv[1]), Path(sys.argv[2]))
with vault.lock(sys.argv[3]):
    print("locked", flush=True)
    sys.stdin.read()
"""


def holding(vault_root: Path, state: Path, rel: str) -> subprocess.Popen[str]:
    """A process that holds one file's lock of the vault until killed."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(vault_root), str(state), rel],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_each_file_has_its_own_lock_and_a_wait_for_one_is_bounded(memory) -> None:
    holder = holding(memory.vault.root, memory.config.state_root(), "knowledge/people.md")
    try:
        with memory.vault.lock("knowledge/technical.md", timeout=0.5), memory.vault.index_lock(timeout=0.5):
            pass
        busy = r"knowledge/people\.md was held by another process .* try again"
        with pytest.raises(VaultBusy, match=busy), memory.vault.lock("knowledge/people.md", timeout=0.2):
            pass
    finally:
        holder.kill()
        holder.wait()
    with memory.vault.lock("knowledge/people.md", timeout=5):  # freed when its holder died
        pass


def test_a_thread_that_holds_a_lock_can_take_it_again(memory) -> None:
    people = "knowledge/people.md"
    with memory.vault.lock(people), memory.vault.lock(people, timeout=0.1), memory.vault.index_lock(), \
            memory.vault.index_lock(timeout=0.1):
        pass
