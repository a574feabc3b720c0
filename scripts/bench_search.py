"""Search and rebuild speed side by side with SQLite FTS5, on real questions and real-frequency facts.

    .venv/bin/python scripts/bench_search.py                 # 10k facts
    .venv/bin/python scripts/bench_search.py --facts 10000 100000 --rounds 1

Two vaults per size, each searched by wolfmem (`Memory.search`, a watching process) and by FTS5
(scripts/bench_fts5.py) over the same lines, one query at a time, alternating which goes first:

- **conversations**: the LoCoMo and LongMemEval dev conversations (../shared/data) as episode
  lines, repeated on shifted years up to the size; queried with their own questions (real ones);
- **generated**: facts whose words follow real English frequencies (`wordfreq`), about 300 people
  whose mentions follow a Zipf law (so a few names pass the 5 % common-term cut-off and most do
  not), chat lines and curated facts of 8-20 words; queried with question-shaped queries that keep
  five words after stop words ("What did Hana say about the harbour budget at the depot?") and
  with two or three keywords.

Times are per query in CPU seconds of this thread (`time.thread_time`: both engines run in this
process, so load on the machine falls on neither) and wall milliseconds; the ratio is wolfmem p50
÷ FTS5 p50. The rebuild is `Memory.reindex` from nothing, in facts per second.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import eval_locomo  # noqa: E402
import eval_longmemeval  # noqa: E402
from bench_fts5 import Fts5  # noqa: E402

from wolfmem import Config, Memory  # noqa: E402
from wolfmem.core.tokens import STOP_WORDS  # noqa: E402

DATA = REPO.parent / "shared" / "data"
PEOPLE = 300
VOCABULARY_SIZE = 30000


@dataclass(frozen=True)
class Timing:
    """Per-query times of the two engines: CPU seconds and wall seconds."""

    ours_cpu: list[float]
    fts_cpu: list[float]
    ours_wall: list[float]
    fts_wall: list[float]

    def cells(self) -> str:
        """Markdown cells: p50 CPU ms each, the CPU ratio, and the wall ratio."""
        def p50(values: list[float]) -> float:
            return statistics.median(values) * 1000

        cpu = p50(self.ours_cpu) / max(p50(self.fts_cpu), 1e-6)
        wall = p50(self.ours_wall) / max(p50(self.fts_wall), 1e-6)
        return (f"{p50(self.ours_cpu):.2f} | {p50(self.fts_cpu):.2f} | {cpu:.1f}× | "
                f"{p50(self.ours_wall):.2f} / {p50(self.fts_wall):.2f} ({wall:.1f}×)")


def side_by_side(memory: Memory, fts: Fts5, queries: Sequence[str], rounds: int) -> Timing:
    """Time each query on both engines, alternating which goes first."""
    timing = Timing([], [], [], [])

    def measure(run: Callable[[], object], cpu: list[float], wall: list[float]) -> None:
        started_cpu, started_wall = time.thread_time(), time.perf_counter()
        run()
        cpu.append(time.thread_time() - started_cpu)
        wall.append(time.perf_counter() - started_wall)

    for query in queries[:5]:
        memory.search(query)
        fts.search(query)
    for n, query in enumerate(list(queries) * rounds):
        pair = [lambda q=query: measure(lambda: memory.search(q), timing.ours_cpu, timing.ours_wall),
                lambda q=query: measure(lambda: fts.search(q), timing.fts_cpu, timing.fts_wall)]
        for run in pair if n % 2 else pair[::-1]:
            run()
    return timing


# -- the conversations vault --------------------------------------------------------
def conversation_turns(facts: int, data: Path) -> tuple[list[eval_locomo.Turn], list[str]]:
    """LoCoMo and LongMemEval dev turns repeated on shifted years up to `facts`, and their questions."""
    if not (data / "locomo-dev").is_dir():
        sys.exit(f"no LoCoMo conversations in {data}/locomo-dev: pass --data")
    turns: list[eval_locomo.Turn] = []
    questions: list[str] = []
    for path in sorted((data / "locomo-dev").glob("*.json")):
        conversation = eval_locomo.load(path)
        turns += conversation.turns
        questions += [q.text for q in conversation.questions]
    for path in sorted((data / "longmemeval-dev").glob("*.json"))[:20]:
        item = eval_longmemeval.load(path)
        turns += [eval_locomo.Turn(f"{item.qid}:{t.dia_id}", t.session, t.when, t.text[:2000]) for t in item.turns]
        questions.append(item.text)
    copies, copy = [], 0
    while len(copies) < facts:
        copies += [eval_locomo.Turn(f"{copy}/{t.dia_id}", t.session + 1000 * copy,
                                    t.when.replace(year=t.when.year + 40 * copy), t.text) for t in turns]
        copy += 1
    return copies[:facts], questions


# -- the generated vault -----------------------------------------------------------
def vocabulary() -> tuple[list[str], list[float]]:
    """The most frequent English words with their real frequencies."""
    try:
        import wordfreq
    except ImportError:
        sys.exit("the bench needs wordfreq: .venv/bin/pip install -e '.[bench]'")
    words = [w for w in wordfreq.top_n_list("en", VOCABULARY_SIZE) if w.isascii() and w.isalpha()]
    return words, [wordfreq.word_frequency(w, "en") for w in words]


def generated(root: Path, facts: int, seed: int = 7) -> tuple[list[str], list[str]]:
    """Write a vault of about `facts` facts of real-frequency words; its question and keyword queries."""
    rng = random.Random(seed)
    words, weights = vocabulary()
    content = [(w, f) for w, f in zip(words, weights, strict=True) if w not in STOP_WORDS]
    names = [w.title() for w, _ in content[2000:2000 + PEOPLE]]
    zipf = [1.0 / (rank + 1) for rank in range(PEOPLE)]

    def line() -> str:
        return " ".join(rng.choices(words, weights, k=rng.randint(8, 20)))

    (root / "knowledge").mkdir(parents=True)
    (root / "episodes").mkdir()
    curated = facts // 5
    people = ["# People"]
    for n in range(curated):
        if n % 20 == 0:
            people += ["", f"## {names[(n // 20) % PEOPLE]}"]
        people.append(f"- {rng.choices(names, zipf)[0]} {line()}")
    (root / "knowledge" / "people.md").write_text("\n".join(people) + "\n")
    day, written = date(2024, 1, 1), curated
    while written < facts:
        lines = [f"# {day}"]
        for n in range(min(40, facts - written)):
            if n % 10 == 0:
                lines += ["", f"## {9 + n // 10}:00 — chat"]
            lines.append(f"- {rng.choices(names, zipf)[0]}: {line()}")
        written += min(40, facts - written)
        (root / "episodes" / f"{day}.md").write_text("\n".join(lines) + "\n")
        day += timedelta(days=1)
    kept, kept_weights = [w for w, _ in content], [f for _, f in content]

    def pick(k: int) -> list[str]:
        return rng.choices(kept, kept_weights, k=k)

    questions = [f"What did {rng.choices(names, zipf)[0]} say about the {a} {b} at the {c} {d}?"
                 for a, b, c, d in (pick(4) for _ in range(60))]
    keywords = [" ".join(pick(rng.randint(2, 3))) for _ in range(60)]
    return questions, keywords


def rebuild(root: Path, state: Path) -> tuple[Memory, float, int]:
    """A Memory over root after a full rebuild from nothing: (memory, facts/s, facts)."""
    memory = Memory(root, Config(state_dir=str(state), index_max_file_bytes=eval_longmemeval.MAX_FILE_BYTES))
    started = time.perf_counter()
    memory.reindex()
    seconds = time.perf_counter() - started
    count = memory.index.count()
    return memory, count / seconds, count


@dataclass(frozen=True)
class Measured:
    """One size's side-by-side timings, by (vault, query set), and its rebuild rates."""

    facts: int
    timings: dict[tuple[str, str], tuple[int, Timing]]  # (vault, queries) -> (facts indexed, timing)
    rebuilds: dict[str, tuple[int, float]]  # vault -> (facts indexed, facts/s)

    def ratio(self, vault: str, queries: str) -> float:
        """wolfmem's CPU p50 over FTS5's for one query set."""
        timing = self.timings[(vault, queries)][1]
        return statistics.median(timing.ours_cpu) / max(statistics.median(timing.fts_cpu), 1e-9)


REAL, QUESTIONS, KEYWORDS = "real questions", "questions, 5 kept words", "2-3 keywords"


def measure(facts: int, rounds: int, data: Path = DATA) -> Measured:
    """Both vaults of one size, each searched side by side with FTS5 after a rebuild from nothing."""
    measured = Measured(facts, {}, {})
    with tempfile.TemporaryDirectory(prefix="wolfmem-bench-search-") as tmp:
        work = Path(tmp)
        turns, real = conversation_turns(facts, data)
        files, _ = eval_locomo.episode_files(turns)
        (work / "conv" / "episodes").mkdir(parents=True)
        for rel, text in files.items():
            (work / "conv" / rel).write_text(text, "utf-8")
        questions, keywords = generated(work / "gen", facts)
        for vault, sets in (("conversations", [(REAL, real)]),
                            ("generated", [(QUESTIONS, questions), (KEYWORDS, keywords)])):
            memory, rate, count = rebuild(work / {"conversations": "conv", "generated": "gen"}[vault],
                                          work / f"state-{vault}")
            measured.rebuilds[vault] = (count, rate)
            fts = Fts5(work / f"fts-{vault}.sqlite", memory.vault.root)
            try:
                memory.watch()
                for name, queries in sets:
                    measured.timings[(vault, name)] = (count, side_by_side(memory, fts, queries, rounds))
            finally:
                fts.close()
                memory.close()
    return measured


def render(runs: Sequence[Measured]) -> str:
    """The side-by-side table of every size, and the rebuild rates."""
    lines = ["| facts | vault | queries | wolfmem CPU p50 ms | FTS5 CPU p50 ms | CPU ratio | wall p50 ms (ratio) |",
             "|---:|---|---|---:|---:|---:|---|"]
    lines += [f"| {count:,} | {vault} | {name} | {timing.cells()} |"
              for run in runs for (vault, name), (count, timing) in run.timings.items()]
    rebuilds = [f"{count:,} facts ({vault}): {rate:,.0f} facts/s"
                for run in runs for vault, (count, rate) in run.rebuilds.items()]
    return "\n".join(lines) + "\n\nrebuild (`Memory.reindex` from nothing): " + "; ".join(rebuilds)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the side-by-side table for each size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, nargs="+", default=[10_000])
    parser.add_argument("--rounds", type=int, default=2, help="times each query set is asked")
    parser.add_argument("--data", type=Path, default=DATA, help="the folder of locomo-dev and longmemeval-dev")
    args = parser.parse_args(argv)
    print(render([measure(facts, args.rounds, args.data) for facts in args.facts]))
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
