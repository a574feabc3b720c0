"""Load scenarios of scripts/bench.py, in real processes: writers racing an editor, and stale reads.

- `writers_and_editor`: N writer processes each save their share of distinct facts (all five
  types) while an editor process rewrites one curated file every `every` seconds, changing a line
  of its own — alternately in place (as vim does) and the VS Code way (temp file, compare,
  rename). Counted at the end: saves that returned a receipt, errors, facts missing from the
  files, editor lines missing, how often the editor's rename displaced a version it had not
  checked (it overwrote a save that landed between its check and its rename: a race no program
  the editor does not lock against can prevent), and the save latencies to the file the editor
  rewrites and to the others (a busy file must slow only its own).
- `stale_reads`: one process edits files (tests/editor_loop.py: in place, by rename, by append)
  and says when each write has returned; a watching Memory in this process searches for it at
  once. Any miss is a stale read.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from editor_loop import EDITS  # tests/, on the bench's path

from wolfmem import Memory
from wolfmem.core.markdown import parse
from wolfmem.storage.vault import CURATED

EDITED = "people"

_WRITER = f"""
import json, sys, time
from wolfmem import Memory
vault, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
kinds = {CURATED!r}
out = []
with Memory(vault) as memory:
    memory.search("warm up")
    print("ready", flush=True)
    sys.stdin.readline()
    for n in range(count):
        kind = kinds[n % len(kinds)]
        fact = f"Writer {{worker}} logged load item w{{worker}}n{{n}} for {{kind}}"
        start = time.perf_counter()
        try:
            status = memory.save(fact, type=kind).status
        except Exception as exc:
            status = f"error: {{type(exc).__name__}}: {{exc}}"
        out.append([fact, kind, status, (time.perf_counter() - start) * 1000])
print(json.dumps(out), flush=True)
"""

_EDITOR = """
import ctypes, os, re, sys, time
path, every, stop = sys.argv[1], float(sys.argv[2]), sys.argv[3]
marker = re.compile(rb"- editor revision \\d+ saved by hand\\n")
rename = ctypes.CDLL(None, use_errno=True).renameat2


def replace(tmp, path, seen):
    # os.replace, but say whether it displaced a version other than the one checked a moment ago
    # (another writer landed between the check and the rename: this editor just overwrote it).
    if rename(-100, tmp.encode(), -100, path.encode(), 2) != 0:  # RENAME_EXCHANGE
        os.replace(tmp, path)
        return 0
    with open(tmp, "rb") as handle:
        displaced = handle.read()
    os.unlink(tmp)
    return int(displaced != seen)


n = clobbered = 0
while not os.path.exists(stop):
    line = f"- editor revision {n} saved by hand\\n".encode()
    while True:
        with open(path, "rb") as handle:
            seen = handle.read()
        new = marker.sub(line, seen, count=1) if marker.search(seen) else seen + line
        if n % 2:  # in place, as vim does by default
            with open(path, "r+b") as handle:
                if handle.read() != seen:
                    continue
                handle.seek(0)
                handle.write(new)
                handle.truncate()
            break
        # VS Code: write a temp file, check the file did not change, rename over it
        with open(path + ".editor~", "wb") as handle:
            handle.write(new)
        with open(path, "rb") as handle:
            if handle.read() == seen:
                clobbered += replace(path + ".editor~", path, seen)
                break
    n += 1
    time.sleep(every)
print(n, clobbered, flush=True)
"""


def writers_and_editor(root: Path, env: dict[str, str], writers: int, each: int, every: float) -> dict[str, object]:
    """Run the scenario; what landed, what failed, what was lost, and how long saves took."""
    stop = root.parent / f"{root.name}.editor-stop"
    edited = root / "knowledge" / f"{EDITED}.md"
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(root), str(w), str(each)], env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for w in range(writers)
    ]
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready"
    editor = subprocess.Popen([sys.executable, "-c", _EDITOR, str(edited), str(every), str(stop)],
                              env=env, stdout=subprocess.PIPE, text=True)
    start = time.perf_counter()
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = []
    for proc in procs:
        proc.stdin.close()
        results.extend(json.loads(proc.stdout.read()))
        proc.wait(timeout=600)
    seconds = time.perf_counter() - start
    stop.touch()
    edits, clobbered = map(int, editor.communicate(timeout=60)[0].split())
    stop.unlink()

    on_file: set[str] = set()
    for name in CURATED:
        on_file.update(fact.text for fact in parse((root / "knowledge" / f"{name}.md").read_text("utf-8")).facts)
    saved = [row for row in results if row[2] in ("saved", "duplicate")]
    errors = [row[2] for row in results if row[2] not in ("saved", "duplicate")]
    lost = [row[0] for row in saved if row[0] not in on_file]
    # The editor keeps one line of its own, rewritten each time: its last revision must be there, once.
    text = edited.read_text("utf-8")
    editor_lost = [] if text.count(f"- editor revision {edits - 1} saved by hand\n") == 1 else [edits - 1]
    busy = [row[3] for row in results if row[1] == EDITED]
    calm = [row[3] for row in results if row[1] != EDITED]
    return {
        "saves": len(saved), "total": len(results), "errors": errors, "lost": lost,
        "editor_edits": edits, "editor_lost": editor_lost, "editor_clobbered": clobbered,
        "rate": len(results) / seconds,
        "busy_ms": (statistics.median(busy), max(busy)), "calm_ms": (statistics.median(calm), max(calm)),
    }


def stale_reads(memory: Memory, env: dict[str, str], rounds: int) -> tuple[int, int]:
    """(stale reads, rounds) of a write-then-search loop across two processes."""
    memory.watch()
    proc = subprocess.Popen([sys.executable, "-c", EDITS, str(memory.vault.root), str(rounds)], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    stale = 0
    try:
        for n in range(rounds):
            assert proc.stdout.readline().strip() == str(n)
            hits = memory.search(f"round{n}zq")
            stale += not any(f"round{n}zq" in hit.text for hit in hits)
            proc.stdin.write("next\n")
            proc.stdin.flush()
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    for n in range(3):
        (memory.vault.root / "knowledge" / f"loop-{n}.md").unlink(missing_ok=True)
    return stale, rounds


def environment(state: Path, work: Path) -> dict[str, str]:
    """The environment the bench's subprocesses run with (their own state, logs and no config)."""
    empty = work / "no-config.toml"  # an empty config file: the defaults, whatever the user's own says
    empty.touch()
    return dict(os.environ, WOLFMEM_STATE_DIR=str(state), WOLFMEM_LOG_DIR=str(work / "logs"),
                WOLFMEM_CONFIG=str(empty))
