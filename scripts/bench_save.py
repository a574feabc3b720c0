"""Save p50 at 100k facts (issue 28), trees side by side on copies of one vault: wall and thread CPU, and where it goes.

    .venv/bin/python scripts/bench_save.py --work /tmp/save100k                  # this tree
    .venv/bin/python scripts/bench_save.py --work /tmp/save100k --trees /tmp/base .   # main vs this tree

The vault is `bench.generate`'s (about 99k facts in 1,000 files, five curated files of ~2,000 facts),
indexed once and kept in `--work/master` (a build takes minutes). Each run copies it back, opens one
watching Memory (as the MCP server does), saves once into each curated file (its first save parses
the file whole and builds its line-diff base), then times `--saves` saves rotating over the five
files, as bench.py's saves do. Runs of the trees alternate (their order turns each round), so load
on the shared machine falls on each alike; the load is printed with each run. Thread CPU is the fair
clock there. Each stage's CPU is measured by wrapping the function named (inclusive of what it calls).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CURATED = ["people", "projects", "preferences", "decisions", "technical"]
STAGES = [  # (module, class or "", function, label)
    ("wolfmem.memory.facade", "Memory", "_refresh_for_save", "refresh before the save (watcher drain)"),
    ("wolfmem.memory.saving", "Saver", "_dedup", "duplicate check"),
    ("wolfmem.search.index", "FactIndex", "search", "  of which the candidate search"),
    ("wolfmem.storage.writer", "VaultWriter", "edit", "write (transform, exchange, bookkeeping, reindex)"),
    ("wolfmem.core.edits", "", "add_fact", "  insert (add_fact)"),
    ("wolfmem.storage.writer", "VaultWriter", "_exchange", "  exchange"),
    ("wolfmem.storage.history", "History", "record", "  history"),
    ("wolfmem.search.sync", "Syncer", "reindex_text", "  reindex"),
    ("wolfmem.search.increment", "", "change", "    line diff"),
    ("wolfmem.search.index", "FactIndex", "_write", "    Whoosh commit"),
    ("wolfmem.storage.catalog", "Catalog", "commit_shift", "    catalog shift"),
]


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0–100) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def environment(work: Path) -> dict[str, str]:
    """The run's own state, logs and an empty config (the defaults, whatever the user's own says)."""
    (work / "no-config.toml").touch()
    return {"WOLFMEM_STATE_DIR": str(work / "state"), "WOLFMEM_LOG_DIR": str(work / "logs"),
            "WOLFMEM_CONFIG": str(work / "no-config.toml")}


def build(master: Path, run: Path, facts: int) -> None:
    """Generate and index the vault once at the runs' path (state is keyed by the vault's path); keep it in `master`."""
    sys.path.insert(0, str(HERE))
    import bench

    from wolfmem import Config, Memory
    if run.exists():
        shutil.rmtree(run)
    os.environ.update(environment(run))
    config = Config(state_dir=str(run / "state"), log_dir=str(run / "logs"))
    shape = bench.generate(run / "vault", facts)
    with Memory(run / "vault", config) as memory:
        memory.reindex()
    bench.wait_until_not_racy()
    with Memory(run / "vault", config) as memory:
        memory.sync()  # records that the files are no longer racily clean
    shutil.copytree(run, master, symlinks=True)
    print(f"built {shape['facts']:,} facts in {shape['files']:,} files, kept at {master}", file=sys.stderr)


def wrap_stages(spent: dict[str, float]) -> None:
    """Wrap each stage's function so that its thread CPU time adds up in `spent` (seconds)."""
    for module_name, class_name, name, label in STAGES:
        module = importlib.import_module(module_name)
        owner: Any = getattr(module, class_name) if class_name else module
        inner = getattr(owner, name)

        def timed(*args: Any, _inner: Callable[..., Any] = inner, _label: str = label, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return _inner(*args, **kwargs)
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.thread_time() - start

        setattr(owner, name, timed)


def measure(work: Path, saves: int) -> dict[str, Any]:
    """Time saves in one watching process on the copy at `work` (run in a child with the tree on PYTHONPATH)."""
    os.environ.update(environment(work))
    import wolfmem
    from wolfmem import Config, Memory
    sys.path.insert(0, str(HERE))
    from bench import PEOPLE, VERBS, _words

    spent: dict[str, float] = {}
    wrap_stages(spent)
    config = Config(state_dir=str(work / "state"), log_dir=str(work / "logs"))
    rng = random.Random(3)
    walls, cpus, statuses = [], [], []
    collected = [0.0, 0.0]  # seconds in the garbage collector, and when the running collection started

    def on_gc(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            collected[1] = time.thread_time()
        else:
            collected[0] += time.thread_time() - collected[1]

    with Memory(work / "vault", config) as memory:
        memory.watch()
        memory.sync()
        memory.search("warm up the searcher")
        for kind in CURATED:
            memory.save(f"Warm up fact w0 says Sarah reviewed the cache of {kind}", type=kind)
        spent.clear()
        gc.callbacks.append(on_gc)
        for n in range(saves):
            fact = f"Bench fact b{n} says {rng.choice(PEOPLE)} {rng.choice(VERBS)} the {' '.join(_words(rng, 3))}"
            wall, cpu = time.perf_counter(), time.thread_time()
            statuses.append(memory.save(fact, type=CURATED[n % len(CURATED)]).status)
            cpus.append((time.thread_time() - cpu) * 1000)
            walls.append((time.perf_counter() - wall) * 1000)
        gc.callbacks.remove(on_gc)
    return {"tree": str(Path(wolfmem.__file__).parent.parent), "wall": walls, "cpu": cpus, "statuses": statuses,
            "load": os.getloadavg()[0], "gc": collected[0] * 1000 / saves,
            "stages": {label: seconds * 1000 / saves for label, seconds in spent.items()}}


def run_tree(tree: Path, master: Path, work: Path, saves: int) -> dict[str, Any]:
    """One run of `tree` on a fresh copy of the master vault, in a child process."""
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(master, work, symlinks=True)
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, __file__, "--child", str(work), "--saves", str(saves)],
                         env=env, capture_output=True, text=True, cwd="/")
    if out.returncode:
        sys.exit(f"the run of {tree} failed:\n{out.stderr}")
    return json.loads(out.stdout)


def report(runs: dict[Path, list[dict[str, Any]]]) -> None:
    """Print p50 / p95 per tree and the mean CPU of each stage."""
    first = next(iter(runs.values()))
    base = percentile([x for run in first for x in run["cpu"]], 50)
    print("| tree | saves | load | wall p50 / p95 ms | CPU p50 / p95 ms | CPU p50 vs the first | GC ms/save |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for tree, done in runs.items():
        wall = [x for run in done for x in run["wall"]]
        cpu = [x for run in done for x in run["cpu"]]
        loads = [run["load"] for run in done]
        print(f"| {done[0]['tree']} | {len(cpu)} | {min(loads):.1f}–{max(loads):.1f} "
              f"| {percentile(wall, 50):.1f} / {percentile(wall, 95):.1f} "
              f"| {percentile(cpu, 50):.1f} / {percentile(cpu, 95):.1f} | {percentile(cpu, 50) / base:.2f}× "
              f"| {statistics.mean(run['gc'] for run in done):.1f} |")
        bad = {status for run in done for status in run["statuses"]} - {"saved"}
        if bad:
            print(f"| {tree}: not every save was saved ({sorted(bad)}) |")
    print()
    print("| stage (mean thread CPU, ms a save) | " + " | ".join(done[0]["tree"] for done in runs.values()) + " |")
    print("|---|" + "---:|" * len(runs))
    for _module, _class, _name, label in STAGES:
        cells = [statistics.mean(run["stages"].get(label, 0.0) for run in done) for done in runs.values()]
        print(f"| {label} | " + " | ".join(f"{cell:.1f}" for cell in cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, help="folder for the kept vault and the runs' copies")
    parser.add_argument("--trees", type=Path, nargs="+", default=[HERE.parent], help="source trees to compare")
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--saves", type=int, default=40, help="timed saves per run")
    parser.add_argument("--rounds", type=int, default=4, help="runs per tree")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child, args.saves)))
        return
    if args.work is None:
        parser.error("--work is required")
    master = args.work / "master"
    if not (master / "state").exists():
        build(master, args.work / "run", args.facts)
    runs: dict[Path, list[dict[str, Any]]] = {tree.resolve(): [] for tree in args.trees}
    trees = list(runs)
    for round_ in range(args.rounds):
        order = trees[round_ % len(trees):] + trees[:round_ % len(trees)]
        for tree in order if round_ % 2 == 0 else order[::-1]:
            done = run_tree(tree, master, args.work / "run", args.saves)
            runs[tree].append(done)
            print(f"round {round_ + 1} {tree}: CPU p50 {percentile(done['cpu'], 50):.1f} ms, load {done['load']:.1f}",
                  file=sys.stderr)
    report(runs)


if __name__ == "__main__":
    main()
