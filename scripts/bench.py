"""Benchmark wolfmem side by side with SQLite FTS5 on vaults of real English words; print the tables.

    .venv/bin/pip install -e '.[bench]'                    # wordfreq (bench-only)
    .venv/bin/python scripts/bench.py                      # 10k and 100k facts, 30 s idle-CPU window
    .venv/bin/python scripts/bench.py --sizes 10000 --quick
    .venv/bin/python scripts/bench.py --targets            # also every measurement issue 28's targets need

Each size gets a fresh vault of about 1,000 files (five curated files with sections, custom
knowledge files, and daily episode logs) in a temp folder, with its own state folder. Words follow
real English frequencies (`wordfreq`), so common words are as common as in real notes. Timings use
the public API (Memory, Watcher) and real subprocesses; FTS5 (scripts/bench_fts5.py) answers the
same questions and takes the same saves, alternating with wolfmem one by one, so load on the
machine falls on both alike. Nothing is mocked.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import bench_search  # noqa: E402
import bench_targets  # noqa: E402
from bench_editors import editor_contention  # noqa: E402
from bench_fts5 import Fts5  # noqa: E402
from bench_load import environment, stale_reads, writers_and_editor  # noqa: E402

from wolfmem import Config, Memory, limits  # noqa: E402
from wolfmem.core.tokens import STOP_WORDS  # noqa: E402
from wolfmem.search.index import FactIndex  # noqa: E402
from wolfmem.search.watcher import Watcher  # noqa: E402
from wolfmem.storage.vault import CURATED  # noqa: E402

FILES = 1000
CURATED_SHARE, CUSTOM_SHARE = 0.10, 0.20  # the rest are episode bullets
CUSTOM_FILES = 95

PEOPLE = "Sarah Bob Priya Wei Omar Lena Tomas Aiko Kofi Marta Ivan Chen Noor Diego Hana".split()
VERBS = ("owns, reviewed, migrated, deployed, paused, documented, benchmarked, refactored, "
         "rolled back, approved, monitors, rewrote, split, profiled, tested").split(", ")
VOCABULARY_SIZE = 30000


def _vocabulary() -> tuple[list[str], list[float]]:
    """The most frequent English words with their real frequencies (stop words included, as in notes)."""
    try:
        import wordfreq
    except ImportError:
        sys.exit("the bench needs wordfreq: .venv/bin/pip install -e '.[bench]'")
    words = [word for word in wordfreq.top_n_list("en", VOCABULARY_SIZE) if word.isascii() and word.isalpha()]
    return words, [wordfreq.word_frequency(word, "en") for word in words]


WORDS, WEIGHTS = _vocabulary()


def _words(rng: random.Random, k: int) -> list[str]:
    return rng.choices(WORDS, WEIGHTS, k=k)


def _queries() -> list[str]:
    """Questions whose words are drawn by the same frequencies, leaving out stop words (a question
    of only "if and it" asks nothing); common content words stay as common as in the notes."""
    rng = random.Random(5)
    content = [(word, weight) for word, weight in zip(WORDS, WEIGHTS, strict=True) if word not in STOP_WORDS]
    words, weights = [word for word, _ in content], [weight for _, weight in content]

    def pick(k: int) -> str:
        return " ".join(rng.choices(words, weights, k=k))

    shapes = [
        lambda: f"what did {rng.choice(PEOPLE)} say about the {pick(2)}",
        lambda: pick(3),
        lambda: f"who {rng.choice(VERBS)} the {pick(2)}",
        lambda: f"{rng.choice(PEOPLE)} {pick(3)}",
    ]
    return [rng.choice(shapes)() for _ in range(40)]


QUERIES = _queries()


def sentence(rng: random.Random, n: int) -> str:
    """A plausible one-line fact; n makes it unique."""
    subject, rest = _words(rng, 2), _words(rng, rng.randint(2, 5))
    return f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} the {' '.join(subject)} with {' '.join(rest)} (ticket {n})"


def generate(root: Path, facts: int, seed: int = 7) -> dict[str, int]:
    """Write a synthetic vault of about FILES files holding `facts` facts."""
    rng = random.Random(seed)
    knowledge, episodes = root / "knowledge", root / "episodes"
    knowledge.mkdir(parents=True)
    episodes.mkdir()
    n = 0
    curated = int(facts * CURATED_SHARE)
    for i, name in enumerate(CURATED):
        lines = [f"# {name.title()}", "", f"<!-- {name} -->"]
        for k in range(curated // len(CURATED)):
            if k % 20 == 0:
                lines += ["", f"## {PEOPLE[(k // 20) % len(PEOPLE)]} {WORDS[500 + (k // 20 + i) % 50]}"]
            lines.append(f"- {sentence(rng, n)}")
            n += 1
        (knowledge / f"{name}.md").write_text("\n".join(lines) + "\n")
    custom = int(facts * CUSTOM_SHARE)
    for f in range(CUSTOM_FILES):
        lines = ["---", f"tags: [custom, c{f}]", "---", f"# Notes {f}", "", "See [[Index]]."]
        for k in range(custom // CUSTOM_FILES):
            if k % 10 == 0:
                lines += ["", f"## {WORDS[500 + (f + k) % 50]}"]
            lines.append(f"- {sentence(rng, n)}")
            n += 1
        (knowledge / f"custom-{f:03d}.md").write_text("\n".join(lines) + "\n")
    days = FILES - len(CURATED) - CUSTOM_FILES
    per_day = max(1, (facts - n) // days)
    start = date(2024, 1, 1)
    for d in range(days):
        day = (start + timedelta(days=d)).isoformat()
        lines = [f"# {day}"]
        for k in range(per_day):
            if k % 4 == 0:
                lines += ["", f"## {8 + k // 4 % 10:02d}:{k % 60:02d} — {' '.join(_words(rng, 2))}"]
            lines.append(f"- {sentence(rng, n)}")
            n += 1
        (episodes / f"{day}.md").write_text("\n".join(lines) + "\n")
    return {"facts": n, "files": len(CURATED) + CUSTOM_FILES + days}


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0–100) by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def timed(fn: Callable[[], object]) -> float:
    """Milliseconds one call takes."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def wait_until_not_racy() -> None:
    """Files touched within 2 s are re-hashed by sync on purpose (racily clean); let them age."""
    time.sleep(2.1)


def bench_edit_latency(memory: Memory, root: Path, edits: int) -> list[float]:
    """Edit a custom file (in place and by rename) and time until the watcher made it searchable."""
    watcher = Watcher(memory.vault, memory.sync, debounce_seconds=memory.config.watcher_debounce_ms / 1000)
    watcher.start()
    reader = FactIndex(memory.vault.index_dir)  # a reader of its own: Memory.search would sync by itself
    target = root / "knowledge" / "custom-000.md"
    out = []
    try:
        time.sleep(0.5)
        for k in range(edits):
            token = f"zebra{k}quokka"
            text = target.read_text("utf-8") + f"- marker {token} was added\n"
            start = time.perf_counter()
            if k % 2:
                target.write_text(text, "utf-8")
            else:
                tmp = target.with_name(".custom-000.md.tmp")
                tmp.write_text(text, "utf-8")
                tmp.replace(target)
            while not reader.search({token: 1.0}, limit=1):
                if time.perf_counter() - start > 10:
                    raise RuntimeError("an edit was not searchable within 10 s")
                time.sleep(0.002)
            out.append((time.perf_counter() - start) * 1000)
            time.sleep(0.05)
    finally:
        watcher.stop()
        reader.close()
    return out


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_mb(pid: int) -> float:
    """VmRSS from /proc/<pid>/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bench_daemon(root: Path, env: dict[str, str], idle_seconds: float) -> tuple[str, str, str]:
    """Run `wolfmem daemon` on the vault: (idle CPU %, RSS MB, note).

    The generated vault is marked as made today, as `wolfmem init` marks a new one: a vault found made
    gets a catch-up curation of the night before at start (jobs.runner), which is work, not idling.
    """
    with Memory(root, Config(state_dir=env["WOLFMEM_STATE_DIR"])) as memory:
        memory.state.note_vault_created(date.today())
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-m", "wolfmem", "daemon", "--vault", str(root)],
                                env=env, cwd=REPO, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    log.seek(0)
                    tail = log.read().decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
                    return "n/a", "n/a", f"daemon exited with {proc.returncode}: {tail[0][:160]}"
                log.seek(0)
                if b"daemon watching" in log.read():
                    break
                time.sleep(0.2)
            else:
                return "n/a", "n/a", "daemon did not report ready within 120 s"
            time.sleep(2)  # let the start-up sync and scheduler settle
            cpu0, t0 = proc_cpu_seconds(proc.pid), time.monotonic()
            time.sleep(idle_seconds)
            cpu = (proc_cpu_seconds(proc.pid) - cpu0) / (time.monotonic() - t0) * 100
            return f"{cpu:.2f} %", f"{proc_rss_mb(proc.pid):.0f}", f"idle window {idle_seconds:.0f} s"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def bench_dedup() -> tuple[float, float, int]:
    """Precision and recall of compare.relate on DEDUP_PAIRS, DUPLICATE being the positive class."""
    from bench_dedup import relate_merges, score
    from dedup_pairs import DEDUP_PAIRS

    result = score(DEDUP_PAIRS, relate_merges)
    return result.precision, result.recall, result.pairs


class RandomVectors:
    """Stands in for the embedding model when filling the store: the scan costs the same for any values."""

    def __init__(self, dim: int) -> None:
        import numpy as np

        self.np, self.dim, self.rng = np, dim, np.random.default_rng(1)

    def embed(self, texts: list[str], kind: str, timeout: float | None = None):
        matrix = self.rng.standard_normal((len(texts), self.dim)).astype(self.np.float32)
        return matrix / self.np.linalg.norm(matrix, axis=1, keepdims=True)


def bench_hybrid(
    root: Path, config: Config, env: dict[str, str], args: argparse.Namespace, row: dict[str, str]
) -> None:
    """Hybrid search on the same vault: the store filled with 384-d vectors, queries embedded by the fake server."""
    from fakeembed import FakeEmbed

    from wolfmem.semantic.embedder import Embedder

    with FakeEmbed(dim=args.dim) as server:
        hybrid_config = replace(config, embeddings_base_url=server.base_url, embeddings_model="bench")
        with Memory(root, hybrid_config) as memory:
            memory.sync()
            embedder = Embedder(memory.index, memory.hybrid.store, RandomVectors(args.dim), 256)
            start = time.perf_counter()
            report = embedder.run()
            seconds = time.perf_counter() - start
            row["vectors_fill"] = f"{report.embedded / seconds:,.0f} facts/s ({seconds:.1f} s)"
            row["vectors_mb"] = f"{memory.hybrid.store.matrix_path.stat().st_size / 2**20:.0f}"
            memory.watch()
            start = time.perf_counter()
            memory.search(QUERIES[0])
            row["hybrid_cold"] = f"{(time.perf_counter() - start) * 1000:.0f}"
            for q in QUERIES:
                memory.search(q)  # warm: every query vector is now cached, as the lexical runs have no HTTP
            times = [timed(lambda q=q: memory.search(q)) for q in QUERIES * (2 if args.quick else 5)]
            row["hybrid"] = f"{pct(times, 50):.1f} / {pct(times, 95):.1f}"
            memory.hybrid.view.refresh()
            vector = memory.hybrid._vectors[("query", QUERIES[0])]
            dense = [timed(lambda: memory.hybrid.view.top(memory.hybrid.view.scores(vector, 0.25), 40))
                     for _ in range(40)]
            row["dense"] = f"{pct(dense, 50):.1f} / {pct(dense, 95):.1f}"
        print(f"[{row['facts']}] hybrid {row['hybrid']} ms, dense scan {row['dense']} ms", file=sys.stderr)
        hybrid_env = dict(env, WOLFMEM_EMBEDDINGS_BASE_URL=server.base_url, WOLFMEM_EMBEDDINGS_MODEL="bench")
        _cpu, rss, note = bench_daemon(root, hybrid_env, args.idle)
        row["rss_hybrid"] = rss
        print(f"[{row['facts']}] daemon with embeddings: rss {rss} MB ({note})", file=sys.stderr)


def search_side_by_side(memory: Memory, fts: Fts5, queries: list[str]) -> tuple[list[float], list[float]]:
    """Time each question on wolfmem and on FTS5, alternating which goes first."""
    ours, theirs = [], []
    for n, question in enumerate(queries):
        pair = [lambda q=question: ours.append(timed(lambda: memory.search(q))),
                lambda q=question: theirs.append(timed(lambda: fts.search(q)))]
        for run in pair if n % 2 else pair[::-1]:
            run()
    return ours, theirs


def saves_side_by_side(memory: Memory, fts: Fts5, count: int) -> tuple[list[float], list[float]]:
    """Time the same new facts saved to wolfmem (dedup included) and to FTS5, alternating."""
    rng = random.Random(3)
    ours, theirs = [], []
    for n in range(count):
        fact = f"Bench fact b{n} says {rng.choice(PEOPLE)} {rng.choice(VERBS)} the {' '.join(_words(rng, 3))}"
        kind = CURATED[n % 5]
        pair = [lambda f=fact, k=kind: ours.append(timed(lambda: memory.save(f, type=k))),
                lambda f=fact, k=kind: theirs.append(timed(lambda: fts.save(f, f"knowledge/{k}.md")))]
        for run in pair if n % 2 else pair[::-1]:
            run()
    return ours, theirs


def run_size(facts: int, args: argparse.Namespace, work: Path) -> dict[str, str]:
    """Every per-size measurement on a fresh vault."""
    root, state = work / f"vault-{facts}", work / f"state-{facts}"
    env = environment(state, work)
    os.environ.update({k: env[k] for k in ("WOLFMEM_STATE_DIR", "WOLFMEM_LOG_DIR", "WOLFMEM_CONFIG")})
    config = Config(state_dir=str(state), log_dir=str(work / "logs"))
    shape = generate(root, facts)
    row: dict[str, str] = {"files": f"{shape['files']:,}"}
    say = lambda text: print(f"[{facts:,}] {text}", file=sys.stderr)  # noqa: E731
    say(f"generated {shape['facts']:,} facts in {shape['files']:,} files")

    with Memory(root, config) as memory:
        start = time.perf_counter()
        memory.reindex()
        seconds = time.perf_counter() - start
        indexed = memory.index.count()
    row["facts"] = f"{indexed:,}"
    row["rebuild"] = f"{indexed / seconds:,.0f} facts/s ({seconds:.1f} s)"
    row["_rebuild"] = str(indexed / seconds)
    say(f"rebuild {row['rebuild']}")

    wait_until_not_racy()
    with Memory(root, config) as memory:
        memory.sync()  # records that the files are no longer racily clean
    startup = []
    for _ in range(5):
        def start_and_sync() -> None:
            with Memory(root, config) as memory:
                memory.sync()
        startup.append(timed(start_and_sync))
    fts = Fts5(work / f"fts5-{facts}.sqlite", root)
    reps = 2 if args.quick else 5
    with Memory(root, config) as memory:
        memory.sync()
        steady = [timed(memory.sync) for _ in range(20)]
        row["nochange"] = f"{statistics.median(startup):.0f} ms (steady {statistics.median(steady):.0f} ms)"
        for q in QUERIES:
            memory.search(q)  # warm the searcher and the OS cache
            fts.search(q)
        times = [timed(lambda q=q: memory.search(q)) for q in QUERIES * reps]
        row["search_scan"] = f"{pct(times, 50):.1f} / {pct(times, 95):.1f}"
        # A long-lived process (the MCP server) watches the vault: a search re-reads only changed files.
        memory.watch()
        memory.search(QUERIES[0])
        times, fts_times = search_side_by_side(memory, fts, QUERIES * reps)
        row["search"] = f"{pct(times, 50):.1f} / {pct(times, 95):.1f}"
        row["fts5"] = f"{pct(fts_times, 50):.2f} / {pct(fts_times, 95):.2f}"
        ratio = pct(times, 50) / pct(fts_times, 50)
        row["ratio"] = f"{ratio:.1f}× / {pct(times, 95) / pct(fts_times, 95):.1f}×"
        row["_ratio"] = str(ratio)
        say(f"search {row['search']} ms, fts5 {row['fts5']} ms")
        # A pasted page as a query, as long as the limit allows: planning must stay linear.
        page = " ".join(_words(random.Random(9), limits.QUERY.chars // 4))[: limits.QUERY.chars]
        memory.search(page)
        times = [timed(lambda: memory.search(page)) for _ in range(3 if args.quick else 10)]
        row["long_query"] = f"{pct(times, 50):.0f}"
        say(f"{len(page):,}-character query {row['long_query']} ms")

        edits = bench_edit_latency(memory, root, 10 if args.quick else 30)
        row["edit"] = f"{pct(edits, 50):.0f} / {pct(edits, 95):.0f}"
        row["_edit95"] = str(pct(edits, 95))
        say(f"edit→searchable {row['edit']} ms")

        stale, rounds = stale_reads(memory, env, 30 if args.quick else 200)
        row["stale"] = f"{stale} of {rounds}"
        row["_stale"] = str(stale)
        say(f"stale reads {row['stale']}")

        if facts <= args.save_max:
            saves, fts_saves = saves_side_by_side(memory, fts, 40 if args.quick else 100)
            row["save"] = f"{pct(saves, 50):.0f} / {pct(saves, 95):.0f}"
            row["fts5_save"] = f"{pct(fts_saves, 50):.1f} / {pct(fts_saves, 95):.1f}"
            row["_save50"] = str(pct(saves, 50))
            say(f"save {row['save']} ms, fts5 {row['fts5_save']} ms")
    fts.close()

    if facts <= args.load_max:
        each = 50 if args.quick else 250
        load = writers_and_editor(root, env, 4, each, 0.1)
        row["load"] = (f"{load['saves']:,} of {load['total']:,} saves, {len(load['errors'])} errors, "
                       f"{len(load['lost'])} lost ({load['editor_clobbered']} overwritten by the editor's rename); "
                       f"editor {load['editor_edits']} edits, {len(load['editor_lost'])} lost; "
                       f"{load['rate']:.1f} saves/s")
        # A save the editor's own rename overwrote after it landed is the editor's loss, shown apart.
        row["_load"] = str(int(load["saves"] == load["total"] and not load["errors"]
                               and len(load["lost"]) <= load["editor_clobbered"]))
        row["starve"] = ("p50 / max, ms: to the edited file {:.0f} / {:.0f}, to the others {:.0f} / {:.0f}"
                         .format(*load["busy_ms"], *load["calm_ms"]))
        say(f"4 writers + editor: {row['load']}; {row['starve']}")
        if load["errors"]:
            say(f"first error: {load['errors'][0]}")

    if facts <= args.load_max and args.contention:
        # A vault of its own: the person's buffer is people.md, which the generated vault makes large.
        contention = editor_contention(work / f"editors-{facts}", environment(work / f"editors-state-{facts}", work),
                                       args.contention)
        row["contention"] = contention.describe()
        row["_contention"] = str(int(contention.kept == contention.acked and contention.lines_kept == contention.lines))
        say(f"editor contention: {row['contention']}")

    cpu, rss, note = bench_daemon(root, env, args.idle)
    row["cpu"], row["rss"], row["daemon_note"] = cpu, rss, note
    row["_rss"] = rss
    say(f"daemon cpu {cpu} rss {rss} MB ({note})")
    if args.hybrid:
        bench_hybrid(root, config, env, args, row)
    return row


def render(sizes: list[int], rows: dict[int, dict[str, str]], dedup: tuple[float, float, int]) -> str:
    """The measurements, one column per size."""
    head = "| metric | " + " | ".join(f"{s:,} facts" for s in sizes) + " |"
    lines = [head, "|---|" + "---:|" * len(sizes)]

    def line(label: str, key: str) -> None:
        lines.append(f"| {label} | " + " | ".join(rows[s].get(key, "–") for s in sizes) + " |")

    line("files", "files")
    line("facts indexed", "facts")
    line("full rebuild", "rebuild")
    line("no-change startup sync (new Memory + sync), ms", "nochange")
    line("search p50 / p95, ms: watching process (MCP server)", "search")
    line("SQLite FTS5 (porter), same questions, alternating, p50 / p95, ms", "fts5")
    line("wolfmem ÷ FTS5 search (p50 / p95)", "ratio")
    line("search p50 / p95, ms: one-shot process (stats every file first)", "search_scan")
    line("edit→searchable via the watcher p50 / p95, ms", "edit")
    line("stale reads, write-then-search across processes", "stale")
    line("save p50 / p95, ms (dedup included)", "save")
    line("FTS5 save (key lookup, candidate search, insert, commit) p50 / p95, ms", "fts5_save")
    line("4 writer processes + an editor rewriting people.md every 100 ms", "load")
    line("save latency while the editor rewrites people.md", "starve")
    line("editor contention: a person writing a stale buffer every 3 s while 2 agents save", "contention")
    line("daemon idle CPU", "cpu")
    line("daemon RSS, MB", "rss")
    line(f"search with a {limits.QUERY.chars:,}-character query p50, ms", "long_query")
    if any("hybrid" in rows[s] for s in sizes):
        line("hybrid: filling the vector store (vectors given), facts/s", "vectors_fill")
        line("hybrid: vector file, MB", "vectors_mb")
        line("hybrid search p50 / p95, ms: watching process", "hybrid")
        line("hybrid: first search in a new process (maps the vectors), ms", "hybrid_cold")
        line("hybrid: dense scan + top 40 alone p50 / p95, ms", "dense")
        line("daemon RSS with embeddings configured, MB", "rss_hybrid")
    precision, recall, pairs = dedup
    lines.append(f"| dedup precision / recall on {pairs} DEDUP_PAIRS (DUPLICATE = positive) | "
                 + " | ".join(f"{precision:.2f} / {recall:.2f}" if s == sizes[0] else "–" for s in sizes) + " |")
    return "\n".join(lines)


def targets(sizes: list[int], rows: dict[int, dict[str, str]]) -> str:
    """The vault's other targets (issues 13 and 22), each with what this run measured and whether it is met."""
    small, large = min(sizes), max(sizes)

    def check(label: str, cells: list[tuple[int, str, float]], shown: str, higher: bool = False) -> str:
        parts, met = [], True
        for (size, key), limit in {(size, key): limit for size, key, limit in reversed(cells)}.items():
            raw = rows[size].get(f"_{key}")
            try:
                got = float(raw) if raw is not None else None
            except ValueError:
                got = None
            if got is None:
                continue
            parts.append(shown.format(got))
            met = met and (got >= limit if higher else got <= limit)
        verdict = ("met" if met else "**missed**") if parts else "not run"
        return f"| {label} | {' / '.join(parts) or '–'} | {verdict} |"

    return "\n".join([
        f"| target (sizes {small:,} / {large:,} facts) | measured | verdict |",
        "|---|---:|---|",
        check("stale reads: 0", [(small, "stale", 0), (large, "stale", 0)], "{:.0f}"),
        check("4 writers + editor every 100 ms: every save lands, 0 errors, none lost by wolfmem",
              [(small, "load", 1)], "{:.0f}", higher=True),
        check("editor contention: every acknowledged save and every person line kept",
              [(small, "contention", 1)], "{:.0f}", higher=True),
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated fact counts")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and a 10 s idle window")
    parser.add_argument("--idle", type=float, default=None, help="daemon idle window in seconds (default 30)")
    parser.add_argument("--save-max", type=int, default=100000, help="largest size to time saves on")
    parser.add_argument("--load-max", type=int, default=10000,
                        help="largest size to run 4 writers + an editor on")
    parser.add_argument("--contention", type=float, default=60.0,
                        help="seconds of the editor-contention scenario (0 skips it)")
    parser.add_argument("--keep", action="store_true", help="keep the generated vaults")
    parser.add_argument("--hybrid", action="store_true", help="also time hybrid search and the daemon with embeddings")
    parser.add_argument("--dim", type=int, default=384, help="vector size for --hybrid (384: e5-small, bge-small)")
    parser.add_argument("--bounds", action="store_true", help="also run issue 24's bounds (scripts/bench_bounds.py)")
    parser.add_argument("--saves-contend", action="store_true", help="also run bench_contend.py's contention row")
    parser.add_argument("--search-only", action="store_true",
                        help="only search and rebuild side by side with FTS5 on real questions (bench_search.py)")
    parser.add_argument("--sync", action="store_true", help="also run the two-machine Syncthing scenario")
    parser.add_argument("--targets", action="store_true",
                        help="also measure what issue 28's targets need beyond the main rows (search side by side "
                             "on real questions and keywords, save by file size, contention, MCP memory)")
    args = parser.parse_args()
    if args.search_only:
        bench_search.main(["--facts", *args.sizes.split(","), "--rounds", "1" if args.quick else "2"])
        return
    args.idle = args.idle or (10.0 if args.quick else 30.0)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    work = Path(tempfile.mkdtemp(prefix="wolfmem-bench-"))
    try:
        rows = {size: run_size(size, args, work) for size in sizes}
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    extras = None
    if args.targets:
        extras = bench_targets.measure(sizes, args.quick, lambda text: print(text, file=sys.stderr))
    print(render(sizes, rows, bench_dedup()))
    print()
    print(bench_targets.table(sizes, rows, extras))
    print()
    print(targets(sizes, rows))
    print()
    if extras is not None:
        print(bench_targets.details(extras) + "\n")
    for size in sizes:
        print(f"- {size:,} facts: daemon {rows[size]['daemon_note']}")
    print(f"- machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    if args.bounds:
        from bench_bounds import bench as bench_bounds

        print("\n" + bench_bounds(args.quick))
    if args.saves_contend:
        import bench_contend

        print()
        with tempfile.TemporaryDirectory() as contend:
            saves, seconds = (20, 60.0) if args.quick else (250, 300.0)
            print(bench_contend.contention(Path(contend), 4, saves, seconds, 300).table)
    if args.sync:  # scripts/bench_sync.py: two machines through real Syncthing, with the counts
        subprocess.run([sys.executable, str(Path(__file__).with_name("bench_sync.py"))], check=True)


if __name__ == "__main__":
    main()
