"""Editor contention, the bench's scenario of issue 22: a person writes from a stale buffer while agents save.

    .venv/bin/python scripts/bench_editors.py --seconds 60     # alone, on a fresh vault
    (scripts/bench.py runs it too, as the "editor contention" row)

A real `wolfmem daemon` watches a fresh vault. Two agent processes save distinct facts into
knowledge/people.md as fast as they get answers. A person process writes the file every `every`
seconds from its buffer: the file as it was when it last opened it, plus every line it typed so far
(one more each time). It reopens (reloads) the file only every fourth write (`--reopen`), as a person who answers
"yes, write anyway" does; and it writes the three ways editors do, in turn: in place (nano), by a
new file renamed over the old one (vim, VS Code), and in place with a pause between the truncating
open and the write (any editor on a slow network drive), which lands in a version a save swapped out.

Counted: saves acknowledged and how many are in the file at the end (and, of the others, how many the
archive holds as "removed by hand"); person lines written and how
many are in the file; and, for each acknowledged save a person's write dropped, the time from that
write until the save was back in the file (p50 / p95). Nothing is mocked.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from wolfmem import Config, Memory  # noqa: E402

PEOPLE = "knowledge/people.md"


@dataclass(frozen=True)
class Contention:
    """What one run counted."""

    acked: int  # saves answered "saved"
    kept: int  # of those, in the file at the end
    archived: int  # of the others, in the archive as "removed by hand"
    lines: int  # lines the person wrote
    lines_kept: int  # of those, in the file at the end
    back_ms: list[float]  # per line a write dropped (a save, or a person line written to a displaced
    # version): how long from that write until the line was back in the file
    never_back: int  # dropped lines that never came back
    seconds: float

    def describe(self) -> str:
        """The bench table's cell."""
        back = sorted(self.back_ms)
        p50, p95 = (back[min(len(back) - 1, int(len(back) * q))] for q in (0.5, 0.95)) if back else (0.0, 0.0)
        times = (f"back after p50 {p50:.0f} / p95 {p95:.0f} ms ({len(back)} dropped, {self.never_back} never back)"
                 if back else "none dropped")
        return (f"{self.kept} of {self.acked} acknowledged saves kept ({self.archived} of the others archived as "
                f"removed by hand), {self.lines_kept} of {self.lines} person lines kept; {times}; {self.seconds:.0f} s")

_AGENT = """
import json, sys, time
from wolfmem import Memory
vault, worker, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
acked = []
with Memory(vault) as memory:
    memory.search("warm up")
    print("ready", flush=True)
    sys.stdin.readline()
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        fact = f"Agent {worker} filed contention fact a{worker}n{n} about the rollout"
        try:
            if memory.save(fact, type="people", topic=f"Agent {worker}").status in ("saved", "duplicate"):
                acked.append(fact)
        except Exception as exc:
            print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        n += 1
        time.sleep(0.05)
print(json.dumps(acked), flush=True)
"""


def _person_write(path: Path, text: str, style: int) -> None:
    """Write the buffer the way the style-th editor does."""
    data = text.encode("utf-8")
    if style == 0:  # in place, as nano
        with open(path, "wb") as handle:
            handle.write(data)
    elif style == 1:  # a new file renamed over the old one, as vim and VS Code
        tmp = path.with_name(f".{path.name}.person.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    else:  # in place, slowly (a network drive): longer than a save waits for an empty file, so the
        # saves meanwhile swap a new version in and this write lands in the displaced one
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            time.sleep(2.5)
            os.write(fd, data)
        finally:
            os.close(fd)


def editor_contention(
    root: Path, env: dict[str, str], seconds: float = 60.0, every: float = 3.0, reopen: int = 4,
) -> Contention:
    """Run the scenario on a vault (created if needed); the counts and put-back times."""
    with Memory(root, Config(state_dir=env["WOLFMEM_STATE_DIR"])):
        pass
    if env.get("WOLFMEM_CONFIG") and not Path(env["WOLFMEM_CONFIG"]).exists():
        Path(env["WOLFMEM_CONFIG"]).write_text("")  # the daemon refuses a config path that names no file
    with tempfile.TemporaryFile() as log:
        return _contend(root, env, seconds, every, reopen, log)


def _contend(root: Path, env: dict[str, str], seconds: float, every: float, reopen: int, log: IO[bytes]) -> Contention:
    path = root / PEOPLE
    daemon = subprocess.Popen([sys.executable, "-m", "wolfmem", "daemon", "--vault", str(root)],
                              env=env, cwd=REPO, stdout=log, stderr=log)
    agents: list[subprocess.Popen[str]] = []
    try:
        _wait_for(lambda: daemon.poll() is not None or (log.seek(0), b"daemon watching" in log.read())[1], 120,
                  "the daemon did not start")
        if daemon.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"the daemon exited: {log.read().decode(errors='replace')[-500:]}")
        for worker in range(2):
            agents.append(subprocess.Popen([sys.executable, "-c", _AGENT, str(root), str(worker), str(seconds)],
                                           env=env, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True))
        for agent in agents:
            assert agent.stdout is not None and agent.stdout.readline().strip() == "ready"
        for agent in agents:
            assert agent.stdin is not None
            agent.stdin.write("go\n")
            agent.stdin.flush()

        dropped: dict[str, float] = {}  # a line the person's write dropped → when that write returned
        back_ms: list[float] = []
        stop, guard = threading.Event(), threading.Lock()

        def watch() -> None:
            """Time each dropped save until it is back in the file."""
            while not stop.is_set() or dropped:
                text = path.read_text("utf-8", errors="replace") if path.exists() else ""
                with guard:
                    for line in [line for line in dropped if line in text]:
                        back_ms.append((time.monotonic() - dropped.pop(line)) * 1000)
                if stop.is_set() and time.monotonic() > stopped_at[0] + 15:
                    return
                time.sleep(0.01)

        stopped_at = [float("inf")]
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        person_lines: list[str] = []
        buffer = path.read_text("utf-8")
        deadline, k = time.monotonic() + seconds, 0
        while time.monotonic() < deadline:
            time.sleep(every)
            if k % reopen == 0:
                buffer = path.read_text("utf-8")  # the person reopens the file
            line = f"- Person line {k} typed by hand during the contention run"
            person_lines.append(line)
            buffer += line + "\n"
            before = path.read_text("utf-8")
            _person_write(path, buffer, k % 3)
            now = time.monotonic()
            after = path.read_text("utf-8")
            with guard:
                for saved in (x for x in before.splitlines() if x.startswith("- Agent") and x not in buffer):
                    dropped.setdefault(saved, now)
                if line not in after:  # written to a version a save swapped out meanwhile
                    dropped.setdefault(line, now)
            k += 1
        acked = [fact for agent in agents for fact in json.loads(agent.communicate(timeout=120)[0].splitlines()[-1])]
        stopped_at[0] = time.monotonic()
        stop.set()
        # Every kept version is settled within the grace period; the watcher then has the last put-backs.
        _wait_for(lambda: not list(path.parent.glob(".people.md.wolfmem-displaced-*")), 30,
                  "displaced versions were still kept 30 s after the run")
        watcher.join(timeout=30)
        final = path.read_text("utf-8")
        archive = "".join(archived.read_text("utf-8") for archived in (root / "consolidated").glob("archive-*.md"))
        return Contention(
            acked=len(acked), kept=sum(fact in final for fact in acked),
            archived=sum(fact not in final and fact in archive for fact in acked),
            lines=len(person_lines), lines_kept=sum(line in final for line in person_lines),
            back_ms=back_ms, never_back=len(dropped), seconds=seconds,
        )
    finally:
        for agent in agents:
            if agent.poll() is None:
                agent.kill()
        daemon.terminate()
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()


def _wait_for(predicate: Callable[[], object], timeout: float, failure: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(failure)
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--every", type=float, default=3.0, help="seconds between the person's writes")
    parser.add_argument("--reopen", type=int, default=4, help="the person reloads the file every N-th write")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wolfmem-bench-editors-") as work:
        env = {**os.environ, "WOLFMEM_STATE_DIR": f"{work}/state", "WOLFMEM_LOG_DIR": f"{work}/logs",
               "XDG_CONFIG_HOME": f"{work}/config"}
        print((editor_contention(Path(work) / "vault", env, args.seconds, args.every, args.reopen)).describe())


if __name__ == "__main__":
    main()
