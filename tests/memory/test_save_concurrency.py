"""Many processes saving at once while another process rewrites a curated file in place and by rename."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wolfmem.core.markdown import parse
from wolfmem.storage.vault import CURATED

WORKERS = 4
SAVES = 100
REPEAT_EVERY = 10  # every 10th save repeats an earlier fact: 10% repeats

_SAVER = f"""
import json, sys
from wolfmem import Memory
vault, worker, saves, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
types = {CURATED!r}
out = []
with Memory(vault) as memory:
    for n in range(saves):
        if n % every == every - 1:
            # A repeat: another worker's fact, which may or may not have been saved yet.
            other = (worker + 1) % {WORKERS}
            fact, kind = f"Task w{{other}}n{{n - 1}} was recorded as done", types[(n - 1) % len(types)]
        else:
            fact, kind = f"Task w{{worker}}n{{n}} was recorded as done", types[n % len(types)]
        receipt = memory.save(fact, type=kind)
        out.append([fact, receipt.status])
print(json.dumps(out))
"""

# The other writer: appends marker lines to technical.md, alternately in place (append, rewrite in place)
# and by temp file + rename after checking the file is unchanged (as VS Code does before it saves).
_REWRITER = """
import os, random, sys, time
path, count = sys.argv[1], int(sys.argv[2])
tmp = path + ".editor~"
for n in range(count):
    line = f"- rewriter marker {n}\\n".encode()
    mode = n % 3
    if mode == 0:
        with open(path, "ab") as handle:
            handle.write(line)
    elif mode == 1:
        with open(path, "r+b") as handle:
            seen = handle.read()
            handle.seek(0)
            handle.write(seen + line)
    else:
        while True:
            with open(path, "rb") as handle:
                seen = handle.read()
            with open(tmp, "wb") as handle:
                handle.write(seen + line)
            with open(path, "rb") as handle:
                if handle.read() == seen:
                    os.replace(tmp, path)
                    break
    print(n, flush=True)
    time.sleep(random.uniform(0.01, 0.05))
"""


@pytest.mark.slow
def test_concurrent_savers_and_an_editor_lose_nothing(vault: Path) -> None:
    env = dict(os.environ)
    rewriter = subprocess.Popen(
        [sys.executable, "-c", _REWRITER, str(vault / "knowledge" / "technical.md"), "60"],
        env=env, stdout=subprocess.PIPE, text=True,
    )
    savers = [
        subprocess.Popen(
            [sys.executable, "-c", _SAVER, str(vault), str(w), str(SAVES), str(REPEAT_EVERY)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for w in range(WORKERS)
    ]
    for proc in savers:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    rewriter.communicate(timeout=60)
    assert rewriter.returncode == 0

    distinct = {
        f"Task w{w}n{n} was recorded as done"
        for w in range(WORKERS) for n in range(SAVES) if n % REPEAT_EVERY != REPEAT_EVERY - 1
    }
    counts: dict[str, int] = {}
    texts = {}
    for name in CURATED:
        text = (vault / "knowledge" / f"{name}.md").read_text("utf-8")
        texts[name] = text
        parsed = parse(text)
        assert parsed.title == name.title(), name  # the file still parses as itself
        for fact in parsed.facts:
            counts[fact.text] = counts.get(fact.text, 0) + 1
    assert {fact: counts.get(fact, 0) for fact in distinct} == {fact: 1 for fact in distinct}
    markers = texts["technical"].splitlines()
    assert [n for n in range(60) if f"- rewriter marker {n}" not in markers] == []
    assert all(count == 1 for fact, count in counts.items() if fact.startswith("rewriter marker"))
