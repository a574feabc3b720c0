"""Issue 24's bounds at the sizes the issue names: time (CPU seconds of this process) and the work counted.

    .venv/bin/python scripts/bench_bounds.py            # the issue's sizes (1M-line people.md included)
    .venv/bin/python scripts/bench_bounds.py --quick    # smaller vaults, 250k lines only
    .venv/bin/python scripts/bench.py --bounds ...      # the same table after the main bench

Each row builds its own vault in a temp folder and uses the public API (Memory, the tool table,
curation's run with the real openai client against tests/fakellm.py). CPU time is the fair clock
on a shared machine; the counted column is what the bound holds by construction.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, date, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from fakellm import FakeLLM  # noqa: E402

from wolfmem import Config, Memory, cancellation, limits  # noqa: E402
from wolfmem.core import compare  # noqa: E402
from wolfmem.curation.offline import OfflineCurator  # noqa: E402
from wolfmem.curation.run import make_curator, run  # noqa: E402
from wolfmem.errors import FileTooLarge  # noqa: E402
from wolfmem.memory.episodes import LogReceipt  # noqa: E402
from wolfmem.search import query_dates  # noqa: E402
from wolfmem.tools import dispatch  # noqa: E402

WORDS = ("Sarah Atlas deploy release budget team meeting coffee tea plan launch review port "
         "Kafka Helm staging data Lisbon Berlin cello chess").split()
Row = tuple[str, str, str, str]  # case, size, CPU time, work counted


def cpu(fn: Callable[[], object]) -> float:
    """CPU seconds `fn` takes in this process."""
    start = time.process_time()
    fn()
    return time.process_time() - start


@contextmanager
def vault(root: Path, name: str, **settings: object) -> Iterator[Memory]:
    """A fresh vault under `root` with its own state folder."""
    config = Config(state_dir=str(root / f"{name}-state"), **settings)  # type: ignore[arg-type]
    with Memory(root / name, config, clock=lambda: datetime(2026, 11, 29, 12, tzinfo=UTC)) as memory:
        yield memory


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) + (str(rng.randint(0, 999)) if rng.random() < 0.3 else "") for _ in range(n))


def write(memory: Memory, rel: str, text: str) -> None:
    (memory.vault.root / rel).write_text(text, "utf-8")


def fill(memory: Memory, facts: int) -> None:
    """`facts` episode lines over 100 days and 2,000 curated lines, then one sync."""
    rng = random.Random(7)
    per_day = max(1, (facts - 2000) // 100)
    for day in range(100):
        lines = "\n".join(f"- {words(rng, 12)}." for _ in range(per_day))
        rel = f"episodes/2026-{1 + day // 28:02d}-{1 + day % 28:02d}.md"
        write(memory, rel, f"# day\n\n## 09:00 — notes\n{lines}\n")
    body = "".join(f"- {words(rng, 10)}.\n" for _ in range(2000))
    write(memory, "knowledge/technical.md", f"# Technical\n\n## Stack\n{body}")
    memory.sync()


def dates_and_big_search(root: Path, facts: int) -> list[Row]:
    """Rows 1 and 7: 8 queries of 20,000 characters with digits, limit 50, through the tool table."""
    import dateparser.search

    read_chars: list[int] = []
    real = dateparser.search.search_dates

    def counting(text: str, *args: object, **kwargs: object) -> object:
        read_chars.append(len(text))
        return real(text, *args, **kwargs)

    dateparser.search.search_dates = counting
    rng = random.Random(3)
    queries = [(f"What did Sarah say on 1 May 2026 about {words(rng, 3)}? " + words(rng, 4000))[:20_000]
               for _ in range(8)]
    stages: list[str] = []
    with vault(root, "search") as memory:
        fill(memory, facts)
        query_dates.read("warm up on 1 May 2022", date(2026, 1, 1))
        read_chars.clear()
        answer: dict[str, object] = {}

        def search() -> None:
            with cancellation.reporting(stages.append):
                answer["result"] = dispatch.execute(memory, "memory_search", {"queries": queries, "limit": 50})

        seconds = cpu(search)
    dateparser.search.search_dates = real
    result = answer["result"]
    size = len(result.text) + len(str(result.data))  # type: ignore[attr-defined]
    return [
        ("dates: 8 queries × 20,000 chars", f"{facts:,} facts", f"{seconds:.2f} s",
         f"dateparser read {max(read_chars):,} chars per query at most (limit {query_dates.DATE_CHARS})"),
        ("largest memory_search (8 × 20k, limit 50)", f"{facts:,} facts", f"{seconds:.2f} s",
         f"answer {size / 1000:.0f} kB (hit text ≤ {limits.SEARCH_ANSWER_CHARS:,} chars each part); "
         f"{len(stages)} progress stages"),
    ]


def long_lines(root: Path) -> list[Row]:
    """Row 2: saves beside a 150 kB hand line, and offline curation of a 1 MB line."""
    rows: list[Row] = []
    rng = random.Random(4)
    read_chars = [0]
    real_read = compare.read

    def counting(text: str) -> object:
        read_chars[0] += len(text)
        return real_read(text)

    compare.read = counting  # type: ignore[assignment]
    try:
        with vault(root, "long") as memory:
            memory.save("Sarah prefers tea.", "people", "Sarah")
            people = (memory.vault.root / "knowledge/people.md").read_text("utf-8")
            write(memory, "knowledge/people.md", people + f"- {words(rng, 21_000)[:150_000]}\n")
            memory.sync()
            for n, file in enumerate(("projects", "people")):
                compare._reading.cache_clear()
                read_chars[0] = 0
                fact = f"Sarah plans the Atlas budget review release {n}."
                seconds = cpu(lambda fact=fact, file=file: memory.save(fact, file, "Sarah"))  # type: ignore[misc]
                rows.append((f"save into {file}.md beside a 150 kB hand line", "1 line", f"{seconds:.3f} s",
                             f"{read_chars[0]:,} chars read for comparison"))
        with vault(root, "megaline", index_max_file_bytes=2_000_000) as memory:
            write(memory, "knowledge/people.md",
                  f"# People\n\n## Sarah\n- Sarah prefers tea.\n- {words(rng, 140_000)[:1_000_000]}\n- Sarah plans.\n")
            read_chars[0] = 0
            compare._reading.cache_clear()
            seconds = cpu(lambda: run(memory.services, OfflineCurator(), date(2026, 11, 29)))
            rows.append(("offline curation of a 1 MB line", "1 line", f"{seconds:.2f} s",
                         f"{read_chars[0]:,} chars read for comparison"))
    finally:
        compare.read = real_read  # type: ignore[assignment]
    return rows


def large_files(root: Path, sizes: list[int]) -> list[Row]:
    """Row 3: people.md of 250k and 1M lines: map, save (refused) and curation, with peak memory."""
    rows: list[Row] = []
    for lines in sizes:
        with vault(root, f"big{lines}") as memory:
            body = "".join(f"- Person {n} works on project {n % 97}.\n" for n in range(lines))
            write(memory, "knowledge/people.md", f"# People\n\n## Everyone\n{body}")
            del body
            sync = cpu(memory.sync)
            peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            mapped = cpu(memory.memory_map)

            def save() -> None:
                with suppress(FileTooLarge):
                    memory.save("Sarah prefers tea.", "people", "Sarah")

            saved = cpu(save)
            curated = cpu(lambda: run(memory.services, OfflineCurator(), date(2026, 11, 29)))
            grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
            rows.append((f"people.md of {lines:,} lines: map / save / curation", f"{lines:,} lines",
                         f"{mapped:.3f} / {saved:.3f} / {curated:.2f} s",
                         f"refused with a fix; peak grew {grown:.0f} MB; first sync {sync:.1f} s (index reads 512 kB)"))
    return rows


def nul_byte(root: Path) -> list[Row]:
    """Row 4: a NUL byte in a 2,000-fact curated file: how much stays searchable."""
    with vault(root, "nul") as memory:
        body = "".join(f"- Fact {n} about Atlas.\n" for n in range(2000))
        write(memory, "knowledge/technical.md", f"# Technical\n\n## Stack\n- bad\x00line\n{body}")
        seconds = cpu(memory.sync)
        found = len(memory.search("Atlas", limit=50))
        dup = memory.save("Fact 7 about Atlas.", "technical", "Stack").status
    return [("NUL byte in a curated file", "2,000 facts", f"{seconds:.2f} s sync",
             f"{found} of 50 hits found; a repeat save is '{dup}'; 1 line unsearchable")]


def curation_budget(root: Path) -> list[Row]:
    """Row 5: one big episode day (a pasted chat export) against the fake LLM: requests per run."""
    with FakeLLM(default={"status": "unchanged", "summary": "", "changes": []}) as fake, \
            vault(root, "budget", llm_base_url=fake.base_url, llm_model="fake-model", llm_max_retries=0,
                  llm_timeout=10.0) as memory:
        memory.save("Sarah is my manager.", "people", "Sarah")
        blocks = [f"## 09:{n:02d} — chat part {n}\n" + "\n".join(f"- Message {n}.{k} about the Atlas launch plan."
                                                               for k in range(120)) for n in range(60)]
        write(memory, "episodes/2026-11-29.md", "# 2026-11-29\n\n" + "\n\n".join(blocks) + "\n")
        curator = make_curator(memory.services.config)
        seconds = cpu(lambda: run(memory.services, curator, date(2026, 11, 29)))
        record = memory.state.run_record("curate") or {}
        first = len(fake.requests)
        nights = 1
        while record.get("left") and nights < 50:
            run(memory.services, curator, date(2026, 11, 29))
            record = memory.state.run_record("curate") or {}
            nights += 1
    budget = memory.services.config.curation_max_requests
    return [("curation of one big episode day", "60 × 120 lines", f"{seconds:.2f} s (first run)",
             f"{first} requests in the first run (budget {budget}); backlog done after {nights} runs, "
             f"{len(fake.requests)} requests in all")]


def big_section(root: Path, saves: int) -> list[Row]:
    """Row 6 and issue 28: save p50 early and late into one section, and into a 100- vs a 2,000-fact file."""
    rng = random.Random(9)
    rows: list[Row] = []
    with vault(root, "section") as memory:
        facts = [f"Item{n} {words(rng, 5)} uses port {1000 + n}." for n in range(saves)]
        timings = [cpu(lambda fact=fact: memory.save(fact, "technical", "Stack"))  # type: ignore[misc]
                   for fact in facts]
    early, late = statistics.median(timings[:100]), statistics.median(timings[-100:])
    rows.append((f"{saves:,} saves into one section", f"{saves:,} facts",
                 f"p50 {early * 1000:.0f} → {late * 1000:.0f} ms", f"late/early {late / early:.2f}×"))
    small, large = save_sizes(root, rng)
    rows.append(("save p50 into a 2,000- vs a 100-fact file", "100 / 2,000 facts",
                 f"{small * 1000:.0f} / {large * 1000:.0f} ms", f"{large / small:.2f}× (target ≤ 1.5×)"))
    return rows


def save_sizes(root: Path, rng: random.Random, saves: int = 60) -> tuple[float, float]:
    """Save CPU p50 (seconds) into a 100-fact and into a 2,000-fact curated file, alternating one by one."""
    with vault(root, "small") as small, vault(root, "large") as large:
        for memory, count in ((small, 100), (large, 2000)):
            body = "".join(f"- Item{n} {words(rng, 5)} uses port {n}.\n" for n in range(count))
            write(memory, "knowledge/technical.md", f"# Technical\n\n## Stack\n{body}")
            memory.sync()
        times: dict[int, list[float]] = {100: [], 2000: []}
        for n in range(saves):  # alternating, so load on the machine falls on both alike
            for memory, count in ((small, 100), (large, 2000)):
                fact = f"New{n} {words(rng, 5)} port {9000 + n}."
                times[count].append(cpu(lambda fact=fact, memory=memory: memory.save(  # type: ignore[misc]
                    fact, "technical", "Stack")))
    return statistics.median(times[100]), statistics.median(times[2000])


def episode_day(root: Path, sizes: list[int], appends: int = 50) -> list[Row]:
    """Row 8: memory_log into one big episode day (a pasted chat export): per entry, and what history stores."""
    import sqlite3

    rows: list[Row] = []
    rng = random.Random(5)
    for entries in sizes:
        with vault(root, f"day{entries}") as memory:
            rel = "episodes/2026-11-29.md"
            blocks = [f"## {n // 60 % 24:02d}:{n % 60:02d} — part {n}\n- {words(rng, 6)}.\n" for n in range(entries)]
            write(memory, rel, "# 2026-11-29\n\n" + "\n".join(blocks))
            memory.sync()
            size = (memory.vault.root / rel).stat().st_size
            receipts: list[LogReceipt] = []

            def log(n: int, memory: Memory = memory, receipts: list[LogReceipt] = receipts) -> None:
                receipts.append(memory.log_episode(f"Deployed zeta{n} to staging"))

            times = [cpu(lambda n=n: log(n)) for n in range(appends)]  # type: ignore[misc]
            history = memory.services.history
            with sqlite3.connect(history.path) as db:
                stored = db.execute("SELECT sum(length(data)) FROM versions WHERE path = ?", (rel,)).fetchone()[0]
            last = receipts[-1].message
            said = "searchable" if last.endswith("searchable now.") else "not searchable (said so)"
            found = len(memory.search(f"zeta{appends - 1}", limit=5))
        rows.append((f"{appends} memory_log entries into one big day", f"{entries:,} entries, {size / 1e6:.1f} MB",
                     f"p50 {statistics.median(times) * 1000:.0f} ms an entry",
                     f"history stores {stored / 1e6:.1f} MB for the day ({len(history.versions(rel))} versions); "
                     f"last entry {said}, found {found}"))
    return rows


def render(rows: list[Row]) -> str:
    """The markdown table."""
    lines = ["| case | size | CPU time | work counted |", "|---|---|---|---|"]
    lines += [f"| {case} | {size} | {seconds} | {work} |" for case, size, seconds, work in rows]
    return "\n".join(lines)


def bench(quick: bool) -> str:
    """Every row, in a temp folder removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="wolfmem-bounds-"))
    try:
        rows = dates_and_big_search(root, 2_000 if quick else 10_000)
        rows += long_lines(root)
        rows += large_files(root, [250_000] if quick else [250_000, 1_000_000])
        rows += nul_byte(root)
        rows += curation_budget(root)
        rows += big_section(root, 400 if quick else 1_600)
        rows += episode_day(root, [5_000, 20_000])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return render(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller vaults; the 250k-line file only")
    parser.add_argument("--only", choices=["episodes"], help="run only these rows")
    args = parser.parse_args()
    if args.only == "episodes":
        root = Path(tempfile.mkdtemp(prefix="wolfmem-bounds-"))
        try:
            print(render(episode_day(root, [5_000, 20_000])))
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return
    print(bench(args.quick))


if __name__ == "__main__":
    main()
