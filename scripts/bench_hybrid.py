"""Hybrid search latency against lexical search on one vault, side by side in one process.

    .venv/bin/python scripts/bench_hybrid.py --embeddings http://127.0.0.1:18766/v1/e5-query [--facts 10000]

The vault is bench_search's generated one (--facts facts of 8-20 real-frequency words, chat lines
and curated facts), queried with its 60 question-shaped and 60 keyword queries: short lines, so
embedding every pool here takes minutes (LongMemEval's long turns would take hours at ~1 line/s).
Each query is asked, alternating which goes first, by `Memory.search` lexically (hybrid switched off
on the same Memory) and hybrid in three states:

- **warm**: the query vector cached in the process and every pool fact's vector in the store (the
  steady state once the background embedder has caught up and a question is asked again);
- **new query**: the pool's vectors in the store, the query vector fetched from the endpoint;
- **cold** (reported once per question, not alternated): neither, as the first search after a fact
  arrives: the search embeds its missing pool facts within its budget (`hybrid.MISSING_CHARS`).

Times are CPU seconds of this thread (`time.thread_time`: waiting for the endpoint costs no CPU here)
and wall milliseconds, p50 and p95. Before the timed rounds every pool is embedded once with a long
timeout (the background embedder's job), so warm and new-query searches find all their vectors.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from bench_search import generated  # noqa: E402

from wolfmem import Config, Memory  # noqa: E402
from wolfmem.core.facts import fact_key  # noqa: E402
from wolfmem.search import query, query_dates  # noqa: E402
from wolfmem.search.schema import Filters  # noqa: E402


def timed(run: Callable[[], object], cpu: list[float], wall: list[float]) -> None:
    """Run once, appending its CPU and wall seconds."""
    started_cpu, started_wall = time.thread_time(), time.perf_counter()
    run()
    cpu.append(time.thread_time() - started_cpu)
    wall.append(time.perf_counter() - started_wall)


def row(name: str, cpu: list[float], wall: list[float], base: float) -> str:
    """A markdown row: CPU p50 / p95, the CPU p50 ratio to lexical, wall p50 / p95."""
    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000

    p50 = statistics.median(cpu) * 1000
    return (f"| {name} | {len(cpu)} | {p50:.2f} / {pct(cpu, .95):.2f} | {p50 / base:.1f}× | "
            f"{statistics.median(wall) * 1000:.2f} / {pct(wall, .95):.2f} |")


def main(argv: Sequence[str] | None = None) -> int:
    """Build the vault, embed the pools, time the searches and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embeddings", required=True, metavar="URL/MODEL")
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    base_url, _, model = args.embeddings.rpartition("/")
    with tempfile.TemporaryDirectory(prefix="wolfmem-bench-hybrid-") as tmp:
        vault = Path(tmp) / "vault"
        asked, keywords = generated(vault, args.facts)
        questions = asked + keywords
        config = Config(state_dir=str(Path(tmp) / "state"), embeddings_base_url=base_url, embeddings_model=model,
                        index_max_file_bytes=8_000_000)
        with Memory(vault, config) as memory:
            memory.sync()
            memory.watch()  # a watching process, as the MCP server is: no scan of the vault per search
            hybrid = memory.hybrid
            assert hybrid is not None
            cold_cpu: list[float] = []
            cold_wall: list[float] = []
            for text in questions:  # cold: the first search of each question
                timed(lambda text=text: memory.search(text), cold_cpu, cold_wall)
            started = time.perf_counter()
            with memory.index.snapshot():
                for text in questions:  # the background embedder's job, done here with a long timeout
                    # The search's own pool: its dates read first, as Memory.search reads them (a pool
                    # ranked on the raw words left a dated query's candidates unembedded, and its "warm"
                    # searches embedding them).
                    dates = query_dates.read(text, memory.clock().date())
                    pool = query.run(memory.index, dates.text, Filters(), hybrid.rule.pool, dates)
                    missing = [hit.text for hit in pool if hybrid.store.missing([fact_key(hit.text)])]
                    for start in range(0, len(missing), 16):
                        chunk = missing[start:start + 16]
                        hybrid.store.add([fact_key(t) for t in chunk], hybrid.client.embed(chunk, "document", 600))
            print(f"embedded the {len(questions)} pools in {time.perf_counter() - started:.0f} s", file=sys.stderr)
            times: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in ("lexical", "warm", "new")}

            def lexical(text: str) -> None:
                saved, memory.hybrid = memory.hybrid, None
                try:
                    memory.search(text)
                finally:
                    memory.hybrid = saved

            def new_query(text: str) -> None:
                # Only this search goes without the cached vectors: clearing them for good made every warm
                # search that followed a new-query one fetch its vector again (half the "warm" rounds).
                kept = dict(hybrid._vectors)
                hybrid._vectors.clear()
                try:
                    memory.search(text)
                finally:
                    hybrid._vectors.clear()
                    hybrid._vectors.update(kept)

            runs = {"lexical": lexical, "warm": lambda text: memory.search(text), "new": new_query}
            for n, text in enumerate(list(questions) * args.rounds):
                order = list(runs) if n % 2 else list(runs)[::-1]
                for name in order:
                    timed(lambda name=name, text=text: runs[name](text), *times[name])
            fell_back = hybrid.store.fallback()
    base = statistics.median(times["lexical"][0]) * 1000
    print(f"{args.facts:,} facts, {len(questions)} questions × {args.rounds} rounds, {model} at {base_url}\n")
    print("| search | searches | CPU p50 / p95 ms | CPU vs lexical | wall p50 / p95 ms |")
    print("|---|---:|---:|---:|---:|")
    print(row("lexical", *times["lexical"], base))
    print(row("hybrid, warm (query vector cached, pool in the store)", *times["warm"], base))
    print(row("hybrid, new query (pool in the store)", *times["new"], base))
    print(row("hybrid, cold (query and pool embedded by the search)", cold_cpu, cold_wall, base))
    print(f"\nsearches recorded as fallen back: {fell_back.count} (last: {fell_back.reason or '-'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
