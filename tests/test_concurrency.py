"""Many processes, one vault: writers and readers never see errors, and the final index is complete."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import REPO

from wolfmem import Config, Memory

ROUNDS = 25

# Appends one fact per round to its own file and syncs the index after each append.
_WRITER = """
import sys
from wolfmem import Config, Memory
vault, state, name, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with Memory(vault, Config(state_dir=state)) as memory:
    path = memory.vault.root / "knowledge" / f"{name}.md"
    for n in range(rounds):
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"- {name} fact number{n} is recorded.\\n")
        memory.sync()
print("done", flush=True)
"""

# Searches in a loop until told to stop; any error fails the process.
_READER = """
import sys
from pathlib import Path
from wolfmem import Config, Memory
vault, state, stop = sys.argv[1], sys.argv[2], Path(sys.argv[3])
searches = 0
with Memory(vault, Config(state_dir=state)) as memory:
    while not stop.exists():
        memory.search("recorded fact number0")
        memory.memory_map()
        searches += 1
print(searches, flush=True)
"""


def spawn(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=dict(os.environ),
    )


@pytest.mark.slow
def test_two_writers_and_a_reader(vault: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "wolfmem-state")
    stop = tmp_path / "stop"
    reader = spawn(_READER, str(vault), state, str(stop))
    writers = [spawn(_WRITER, str(vault), state, name, str(ROUNDS)) for name in ("alpha", "bravo")]
    try:
        results = [w.communicate(timeout=120) for w in writers]
    finally:
        stop.touch()
    searches, reader_err = reader.communicate(timeout=60)
    for proc, (out, err) in zip(writers, results, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == "done"
        assert "Traceback" not in err and "WARNING" not in err
    assert reader.returncode == 0, reader_err
    assert "Traceback" not in reader_err
    assert int(searches) > 0
    with Memory(vault, Config(state_dir=state)) as memory:
        assert memory.sync().indexed == []  # the writers left the index complete
        for name in ("alpha", "bravo"):
            for n in range(ROUNDS):
                hits = memory.search(f"number{n}", limit=5)
                assert f"knowledge/{name}.md" in {h.path for h in hits}, (name, n)
        assert memory.index.count() == 2 * ROUNDS


def test_threads_share_one_memory(memory: Memory) -> None:
    errors: list[BaseException] = []
    done = threading.Event()

    def write() -> None:
        try:
            for n in range(20):
                with open(memory.vault.root / "knowledge/threads.md", "a", encoding="utf-8") as handle:
                    handle.write(f"- thread fact item{n} is here.\n")
                memory.sync()
        except BaseException as exc:  # collected and re-raised by the test
            errors.append(exc)
        finally:
            done.set()

    def read() -> None:
        try:
            while not done.is_set():
                memory.search("thread fact")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write), threading.Thread(target=read), threading.Thread(target=read)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert len(memory.search("thread fact", limit=50)) == 20


def test_a_rebuild_in_one_process_does_not_break_another(vault: Path, config: Config) -> None:
    (vault / "knowledge/people.md").write_text("# People\n\n- Sarah is my manager.\n")
    with Memory(vault, config) as first, Memory(vault, config) as second:
        assert first.search("Sarah")
        second.reindex()
        assert [h.text for h in first.search("Sarah")] == ["Sarah is my manager."]
        with open(vault / "knowledge/people.md", "a", encoding="utf-8") as handle:
            handle.write("- Tom is on call.\n")
        second.reindex()
        assert first.search("Tom")[0].text == "Tom is on call."
        assert first.index.count() == 2
