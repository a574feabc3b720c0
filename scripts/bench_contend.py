"""Save contention, the scenario of issue 28: agents save while a script appends to two files every 20 ms.

    .venv/bin/python scripts/bench_contend.py --quick      # a short run for a shared machine
    .venv/bin/python scripts/bench_contend.py --saves 250 --seconds 300   # the issue's full size
    .venv/bin/python scripts/bench_contend.py --memory --facts 100000     # RSS of a daemon and an MCP server

A real `wolfmem daemon` watches a fresh vault whose curated files hold `--seed` facts each. A script
appends one line to knowledge/people.md and one to knowledge/projects.md every 20 ms (the "hammered"
files), as an outside writer that takes no lock. Four agent processes save distinct facts in turn into
people, technical, projects, decisions and preferences ("untouched": the script never writes them).

Counted, per class of file: saves that landed, failed (and how long a failure took), and the latency
p50 / p99 / max of each save; and how many files the daemon's syncs re-read against how many appends
the script made (a sync per change would read one file per append). Nothing is mocked.

`--memory` measures the resident memory (RSS, from /proc) of a `wolfmem daemon` and of a `wolfmem mcp`
server that answered searches, over a vault of `--facts` facts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

HAMMERED = ("people", "projects")
TYPES = ("people", "technical", "projects", "decisions", "preferences")
EVERY = 0.02

_AGENT = """
import json, sys, time
from wolfmem import Memory
vault, worker, saves, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
types = sys.argv[5].split(",")
done = []
with Memory(vault) as memory:
    memory.search("warm up")
    print("ready", flush=True)
    sys.stdin.readline()
    deadline = time.monotonic() + seconds
    for n in range(saves):
        if time.monotonic() > deadline:
            break
        kind = types[(worker + n) % len(types)]
        fact = f"Agent {worker} recorded contention item w{worker}x{n} for the {kind} review"
        started = time.monotonic()
        try:
            status = memory.save(fact, type=kind, topic=f"Agent {worker}").status
        except Exception as exc:
            status = f"error: {type(exc).__name__}: {exc}"
        done.append([kind, (time.monotonic() - started) * 1000, status])
print(json.dumps(done), flush=True)
"""


@dataclass(frozen=True)
class Row:
    """One class of saves."""

    name: str
    latencies: list[float]
    failures: list[tuple[float, str]]

    def quantile(self, p: float) -> float:
        """The p-quantile (0–1) of the landed saves' latencies, ms (0 if none landed)."""
        times = sorted(self.latencies)
        return times[min(len(times) - 1, int(len(times) * p))] if times else 0.0

    def cells(self) -> list[str]:
        """The table's cells for this class."""
        failed = f"{len(self.failures)} (slowest {max(ms for ms, _ in self.failures):.0f} ms)" if self.failures else "0"
        return [self.name, str(len(self.latencies)), failed, f"{self.quantile(0.5):.0f}", f"{self.quantile(0.99):.0f}",
                f"{max(self.latencies, default=0):.0f}"]


def _seed(root: Path, facts: int) -> None:
    """Give each curated file `facts` facts, in sections of ten."""
    for kind in TYPES:
        lines = [f"# {kind.title()}", ""]
        for n in range(facts):
            if n % 10 == 0:
                lines += ["", f"## Seed {kind} subject {n // 10}", ""]
            lines.append(f"- Seeded {kind} fact number {n} mentions widget{n} and gadget{n % 37}")
        (root / "knowledge" / f"{kind}.md").write_text("\n".join(lines) + "\n", "utf-8")


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ, WOLFMEM_STATE_DIR=str(work / "state"), WOLFMEM_LOG_DIR=str(work / "logs"),
               WOLFMEM_LOG_LEVEL="DEBUG", WOLFMEM_CONFIG=str(work / "config.toml"))
    (work / "config.toml").write_text("")
    return env


def _start_daemon(root: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    daemon = subprocess.Popen([sys.executable, "-m", "wolfmem", "daemon", "--vault", str(root)],
                              env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    deadline = time.monotonic() + 600
    while b"daemon watching" not in log.read_bytes():
        if daemon.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the daemon did not start: {log.read_text(errors='replace')[-800:]}")
        time.sleep(0.1)
    return daemon


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass(frozen=True)
class Contended:
    """One run of the scenario: its markdown table and the two numbers the issue's targets bound."""

    table: str
    untouched_p99_ms: float  # saves to files the script never writes
    hammered_slowest_ms: float  # the slowest save to a hammered file, landed or failed


def contention(work: Path, agents: int, saves: int, seconds: float, seed: int) -> Contended:
    """Run the scenario once."""
    from wolfmem import Config, Memory

    root, env = work / "vault", _env(work)
    with Memory(root, Config(state_dir=env["WOLFMEM_STATE_DIR"])):
        pass
    _seed(root, seed)
    log = work / "daemon.err"
    daemon = _start_daemon(root, env, log)
    synced_before = _files_synced(log)
    procs: list[subprocess.Popen[str]] = []
    stop = threading.Event()
    appends = [0]

    def append() -> None:
        while not stop.is_set():
            for kind in HAMMERED:
                with (root / "knowledge" / f"{kind}.md").open("a", encoding="utf-8") as handle:
                    handle.write(f"- Script line {appends[0]} appended to {kind} during the run\n")
            appends[0] += 1
            stop.wait(EVERY)

    try:
        for worker in range(agents):
            procs.append(subprocess.Popen(
                [sys.executable, "-c", _AGENT, str(root), str(worker), str(saves), str(seconds), ",".join(TYPES)],
                env=env, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        appender = threading.Thread(target=append, daemon=True)
        appender.start()
        started = time.monotonic()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc in procs:
            out, _ = proc.communicate(timeout=seconds + 120)
            results += json.loads(out.strip().splitlines()[-1])
        elapsed = time.monotonic() - started
        stop.set()
        appender.join()
        time.sleep(1.5)  # the daemon's last coalesced sync
    finally:
        stop.set()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        _stop(daemon)
    synced = _files_synced(log) - synced_before
    rows = []
    classes = (("hammered (people, projects)", HAMMERED), ("untouched (3 others)", set(TYPES) - set(HAMMERED)))
    for name, kinds in classes:
        mine = [r for r in results if r[0] in kinds]
        rows.append(Row(name, [ms for _, ms, status in mine if not status.startswith("error")],
                        [(ms, status) for _, ms, status in mine if status.startswith("error")]))
    lines = [f"{agents} agents × {saves} saves, {seed} facts per curated file, appends every 20 ms; "
             f"{len(results)} of {agents * saves} saves answered in {elapsed:.0f} s; "
             f"the daemon's syncs re-read {synced} files for {appends[0] * len(HAMMERED)} appends", "",
             "| files | landed | failed | p50 ms | p99 ms | max ms |", "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    errors = sorted({status for row in rows for _, status in row.failures})
    lines += [f"- {error}" for error in errors[:5]]
    hammered, untouched = rows
    return Contended("\n".join(lines), untouched.quantile(0.99),
                     max([*hammered.latencies, *(ms for ms, _ in hammered.failures)], default=0.0))


def _files_synced(log: Path) -> int:
    """The files the daemon's syncs indexed, from its debug log."""
    text = log.read_text("utf-8", errors="replace")
    return sum(int(n) for n in re.findall(r"sync: (\d+) file\(s\) indexed", text))


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _mcp_rss(root: Path, env: dict[str, str], queries: list[str]) -> tuple[float, float]:
    """RSS of a `wolfmem mcp` server once it answered one search, and after many searches and a few saves."""
    server = subprocess.Popen([sys.executable, "-m", "wolfmem", "mcp", "--vault", str(root)], env=env, cwd=REPO,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert server.stdin is not None and server.stdout is not None
    calls = [0]

    def request(method: str, params: dict[str, object]) -> dict[str, object]:
        calls[0] += 1
        message = {"jsonrpc": "2.0", "id": calls[0], "method": method, "params": params}
        server.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        server.stdin.flush()  # type: ignore[union-attr]
        while True:
            reply = json.loads(server.stdout.readline())  # type: ignore[union-attr]
            if reply.get("id") == calls[0]:
                return reply

    def tool(name: str, arguments: dict[str, object]) -> None:
        request("tools/call", {"name": name, "arguments": arguments})

    try:
        request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "bench", "version": "0"}})
        server.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        server.stdin.flush()
        tool("memory_search", {"query": queries[0]})
        first = _rss_mb(server.pid)
        for n, question in enumerate(queries * 3):
            tool("memory_search", {"query": question})
            if n % 10 == 0:
                tool("memory_save", {"fact": f"The bench server number {n} runs in rack {n % 7}.",
                                     "type": "technical", "topic": "Bench servers"})
        return first, _rss_mb(server.pid)
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@dataclass(frozen=True)
class Resident:
    """RSS MB of a daemon and of an MCP server over one vault, at rest and after work."""

    facts: int
    daemon: tuple[float, float]
    mcp: tuple[float, float]
    queries: int

    def table(self) -> str:
        """The markdown table."""
        return "\n".join([
            f"{self.facts} facts indexed", "",
            "| process | RSS MB at rest | RSS MB after work |", "|---|---|---|",
            f"| `wolfmem daemon` (start, then 10 outside edits synced) | {self.daemon[0]:.0f} | {self.daemon[1]:.0f} |",
            f"| `wolfmem mcp` (one search, then {self.queries} searches and saves) "
            f"| {self.mcp[0]:.0f} | {self.mcp[1]:.0f} |",
        ])


def memory_row(work: Path, facts: int) -> Resident:
    """RSS of the daemon and of an MCP server over a generated vault of `facts` facts."""
    import bench

    from wolfmem import Config, Memory

    root, env = work / "vault", _env(work)
    fresh = not root.exists()
    if fresh:
        bench.generate(root, facts)
    with Memory(root, Config(state_dir=env["WOLFMEM_STATE_DIR"])) as memory:
        if fresh:
            memory.reindex()
        # Made today as far as the daemon knows: its catch-up curation of the nights before would be measured too.
        memory.state.note_vault_created(datetime.now().date())
        indexed = memory.index.count()
    log = work / "daemon.err"
    daemon = _start_daemon(root, env, log)
    try:
        time.sleep(2)
        idle = _rss_mb(daemon.pid)
        for n in range(10):  # a few outside edits, each synced by the daemon
            with (root / "knowledge" / "people.md").open("a", encoding="utf-8") as handle:
                handle.write(f"- An outside line {n} written while the daemon watches\n")
            time.sleep(1.5)
        busy = _rss_mb(daemon.pid)
    finally:
        _stop(daemon)
    return Resident(indexed, (idle, busy), _mcp_rss(root, env, bench.QUERIES), len(bench.QUERIES) * 3)


def main() -> None:
    """Run the scenario and print its table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a short run: 4 agents × 20 saves, 60 s at most")
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--saves", type=int, default=250)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=300, help="facts per curated file before the run")
    parser.add_argument("--memory", action="store_true", help="measure RSS of a daemon and an MCP server instead")
    parser.add_argument("--facts", type=int, default=100_000, help="facts in the --memory vault")
    parser.add_argument("--keep", type=Path, help="--memory: build the vault here, or reuse one built before")
    args = parser.parse_args()
    if args.memory:
        sys.path.insert(0, str(REPO / "scripts"))
        if args.keep:
            print(memory_row(args.keep, args.facts).table())
            return
        with tempfile.TemporaryDirectory() as work:
            print(memory_row(Path(work), args.facts).table())
        return
    if args.quick:
        args.saves, args.seconds = 20, 60.0
    with tempfile.TemporaryDirectory() as work:
        print(contention(Path(work), args.agents, args.saves, args.seconds, args.seed).table)


if __name__ == "__main__":
    main()
