"""Two real processes, each with its own caches, save and correct in one vault while a person edits by hand.

Each process is driven over a pipe, one request at a time, so every interleaving is the test's own (no
sleeps). After each round every process's index holds exactly what building every file whole gives, and
no acknowledged save or hand-written line is lost (tests/search/test_cache_consistency.py does the same
with two instances in one process, whose parse cache is shared).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cachekit import WRITERS, people, whole_build
from conftest import REPO

from wolfmem import Config, Memory
from wolfmem.core import markdown

REL = "knowledge/people.md"

_WORKER = """
import json, sys
from wolfmem import Config, Memory
with Memory(sys.argv[1], Config(state_dir=sys.argv[2])) as memory:
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["op"] == "save":
                receipt = memory.save(request["fact"], "people", topic=request["topic"])
                answer = {"status": receipt.status, "ref": receipt.ref}
            elif request["op"] == "update":
                answer = {"ref": memory.update(request["ref"], request["fact"], expected=request["old"]).ref}
            elif request["op"] == "reindex":
                memory.reindex()
                answer = {}
            else:
                memory.sync()
                answer = {"held": [[h.doc_id, h.path, h.line, h.text, h.section, h.date]
                                   for h in memory.index.iter_facts()]}
        except Exception as exc:
            answer = {"error": type(exc).__name__}
        print(json.dumps(answer), flush=True)
"""


class Worker:
    def __init__(self, vault: Path, state: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", _WORKER, str(vault), str(state)], cwd=REPO,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ))

    def __call__(self, **request: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())  # type: ignore[no-any-return]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(60) == 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_two_processes_and_a_person_keep_every_index_a_whole_build(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    vault, state = tmp_path / "vault", tmp_path / "state"
    checker = Memory(vault, Config(state_dir=str(state)))
    path = vault / REL
    path.write_text(people())
    workers = [Worker(vault, state) for _ in range(2)]
    saved: dict[str, str] = {}
    hand: list[str] = []
    try:
        for step in range(40):
            worker = rng.choice(workers)
            lines = markdown.lines_of(path.read_bytes().decode("utf-8-sig"))
            kind = rng.choice(["save", "save", "update", "hand", "move", "shrink", "reindex"])
            if kind == "save":
                fact = f"Person {rng.randrange(5)} enjoys {rng.choice(['tea', 'jazz', 'chess'])} as saved {step}."
                answer = worker(op="save", fact=fact, topic=f"Person {rng.randrange(6)}")
                if answer.get("status") == "saved":
                    saved[fact] = answer["ref"]
            elif kind == "update" and saved:
                fact = rng.choice(sorted(saved))
                new = fact.replace("enjoys", "adores")
                answer = worker(op="update", ref=saved[fact], fact=new, old=fact)
                if "ref" in answer:
                    del saved[fact]
                    saved[new] = answer["ref"]
                else:
                    assert answer["error"] == "UsageError"  # moved since it was handed out: "search again"
            elif kind == "hand":
                hand.append(f"Hand line {step}.")
                lines.insert(rng.randrange(len(lines) + 1), f"- {hand[-1]}\n")
                rng.choice(WRITERS)(path, "".join(lines))
            elif kind == "move":
                heads = [k for k, line in enumerate(lines) if line.startswith("## ")]
                start = rng.choice(heads)
                end = next((k for k in heads if k > start), len(lines))
                rng.choice(WRITERS)(path, "".join([*lines[:start], *lines[end:], *lines[start:end]]))
            elif kind == "shrink":
                kept = [line for k, line in enumerate(lines) if not line.startswith("- Person") or "saved" in line
                        or k % 3]
                rng.choice(WRITERS)(path, "".join(kept))
            elif kind == "reindex":
                worker(op="reindex")
            views = [worker(op="held")["held"] for worker in workers]
            expected = whole_build(checker)
            for view in views:
                assert {tuple(row) for row in view} == expected, (step, kind)
            text = path.read_bytes().decode("utf-8-sig")
            assert [line for line in (*saved, *hand) if line not in text] == []
    finally:
        for worker in workers:
            worker.close()
        checker.close()
