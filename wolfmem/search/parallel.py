"""Index many files on every core: freshly spawned workers each write a segment, one commit adds them all.

Indexing is pure Python (markdown parsing, analysis, posting lists), so one process uses one core.
For a big job — a rebuild, or a first sync of a large vault — the files are split by size into one
share per worker. Each worker is a new interpreter (spawn, never fork: the daemon runs watcher and
scheduler threads, and a forked child would inherit their locks mid-flight), started as
`python -m wolfmem.search.parallel` with its share pickled on stdin. It reads, parses and
indexes its share into a segment of its own inside the index folder, and sends back the segment and
the catalog rows. The parent holds the index's write lock throughout, then commits every segment in
one go, so the segments are merged by listing them, never by rewriting their postings.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wolfmem.search.documents import dated_facts, look
from wolfmem.search.index import FactIndex
from wolfmem.search.schema import FactDoc
from wolfmem.search.segments import SegmentBuilder
from wolfmem.storage.catalog import DocRow, ManifestEntry
from wolfmem.storage.confine import Confined

log = logging.getLogger(__name__)

# Below this many bytes to read, starting interpreters costs more than the second core saves.
MIN_BYTES = 500_000
MAX_WORKERS = 4
# A share is at most this many bytes of markdown (~15k facts): a worker's posting pool then stays in
# memory (Whoosh spills a bigger one to disk and merges it back, which made 50k facts take 3× as long
# per fact as 20k), and a worker's peak memory stays near 150 MB.
SHARE_BYTES = 1_500_000


@dataclass(frozen=True)
class Share:
    """One worker's part of the job: which files, and what it needs to index them as the parent would."""

    index_dir: str
    root: str
    rels: tuple[str, ...]
    old: dict[str, ManifestEntry]
    max_file_bytes: int
    first_seen: dict[str, dict[str, str]]
    today: str


@dataclass
class ShareResult:
    """What a worker wrote: its segment (None if it found no facts) and the bookkeeping for its files."""

    segment: Any = None
    rows: dict[str, list[DocRow]] = field(default_factory=dict)
    entries: dict[str, ManifestEntry | None] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    indexed: list[str] = field(default_factory=list)
    facts: int = 0
    new_keys: dict[str, set[str]] = field(default_factory=dict)


def workers_for(sizes: Sequence[int]) -> int:
    """How many workers a job of files with these sizes deserves: 1 means index in this process."""
    if sum(sizes) < MIN_BYTES:
        return 1
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS, len(sizes)))


def split(sizes: Mapping[str, int], workers: int) -> list[tuple[str, ...]]:
    """Files dealt into shares of about equal bytes (largest first, each to the lightest share): a
    multiple of `workers` shares, enough that none holds much more than SHARE_BYTES."""
    rounds = max(1, -(-sum(sizes.values()) // (SHARE_BYTES * workers)))
    parts = workers * rounds
    shares: list[list[str]] = [[] for _ in range(parts)]
    loads = [0] * parts
    for rel in sorted(sizes, key=lambda rel: (-sizes[rel], rel)):
        lightest = loads.index(min(loads))
        shares[lightest].append(rel)
        loads[lightest] += sizes[rel]
    return [tuple(sorted(share)) for share in shares if share]


def run(
    shares: Sequence[Share], workers: int, progress: Callable[[int, int], None] | None = None
) -> list[ShareResult]:
    """Index every share in `workers` freshly started interpreters, each taking every `workers`-th share
    in turn (an interpreter costs about half a second of CPU to start and import wolfmem); results in order.

    Plain subprocesses rather than multiprocessing: its spawn mode re-imports the caller's main
    script in each child, which breaks a script that calls wolfmem without a `__main__` guard.
    """
    total, done = sum(len(share.rels) for share in shares), 0
    # The workers import wolfmem from wherever this process did.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
    stopping = threading.Event()
    counting = threading.Lock()
    results: dict[int, ShareResult] = {}
    running: list[subprocess.Popen[bytes]] = []

    def work(lot: list[int]) -> None:
        nonlocal done
        # stderr goes to a file: a worker logging many skipped files must never block on a full pipe.
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen([sys.executable, "-m", "wolfmem.search.parallel"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=err, env=env)
            running.append(proc)
            try:
                assert proc.stdin is not None and proc.stdout is not None
                with proc.stdin:
                    proc.stdin.write(pickle.dumps([shares[number] for number in lot]))
                for number in lot:
                    if stopping.is_set():
                        raise WorkerFailed(["stopped: another worker failed"])
                    try:
                        results[number] = pickle.load(proc.stdout)
                    except (EOFError, pickle.UnpicklingError):
                        proc.wait()
                        err.seek(0)
                        tail = err.read().decode("utf-8", errors="replace").strip().splitlines()[-1:]
                        raise WorkerFailed(tail) from None
                    with counting:
                        done += len(shares[number].rels)
                        if progress is not None:
                            progress(done, total)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()

    with ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(work, list(range(first, len(shares), workers))) for first in range(workers)]
        try:
            for future in as_completed(futures):  # the first failure stops the other workers at their next share
                future.result()
        except BaseException as exc:
            stopping.set()
            if isinstance(exc, KeyboardInterrupt):
                for proc in running:  # Ctrl+C: their segments are dropped anyway; stopped now, each drops its own
                    if proc.poll() is None:
                        proc.send_signal(signal.SIGINT)
            raise
    return [results[number] for number in range(len(shares))]


class WorkerFailed(Exception):
    """An indexing worker exited with an error (its last line of stderr is the message)."""

    def __init__(self, tail: list[str]) -> None:
        super().__init__(tail[0] if tail else "an indexing worker failed")


def index_share(share: Share) -> ShareResult:
    """The worker: index one share's files into a new segment of the index (the parent holds the lock)."""
    result = ShareResult()
    # Files are read as the syncer reads them: beneath the vault's real root, never through a link out.
    confined = Confined(Path(os.path.realpath(share.root)))

    def facts(rel: str, text: str) -> list[FactDoc]:
        docs, new = dated_facts(rel, text, share.first_seen.get(rel, {}), share.today)
        if new:
            result.new_keys[rel] = new
        return docs

    builder = SegmentBuilder(Path(share.index_dir))
    try:
        for rel in share.rels:
            looked = look(confined.read, rel, share.old.get(rel), share.max_file_bytes, facts)
            result.entries[rel] = looked.entry
            if looked.skipped:
                result.skipped[rel] = looked.skipped
            if looked.docs is None:
                continue
            rows: dict[str, DocRow] = {}
            for doc in looked.docs:
                if doc.doc_id not in rows:  # as FactIndex.replace_files: each id once
                    rows[doc.doc_id] = DocRow(doc.doc_id, doc.line, doc.digest)
                    builder.add(doc)
            result.rows[rel] = list(rows.values())
            if looked.indexed:
                result.indexed.append(rel)
                result.facts += len(looked.docs)
        result.segment = builder.finish()
    except BaseException:
        builder.cancel()
        raise
    return result


def index_files(
    index: FactIndex,
    root: Path,
    sizes: Mapping[str, int],
    old: Mapping[str, ManifestEntry],
    max_file_bytes: int,
    first_seen: Mapping[str, dict[str, str]],
    today: str,
    progress: Callable[[int, int], None] | None = None,
) -> list[ShareResult]:
    """Index these files whole (replacing what the index held of them) on every core, in one commit."""
    workers = workers_for(list(sizes.values()))
    parts = split(sizes, workers)
    started = time.monotonic()
    shares = [
        Share(str(index.directory), str(root), rels, {rel: old[rel] for rel in rels if rel in old},
              max_file_bytes, {rel: dict(first_seen.get(rel, {})) for rel in rels}, today)
        for rels in parts
    ]
    results = index.add_segments(lambda: run(shares, workers, progress))
    facts = sum(result.facts for result in results)
    log.info("indexed %d facts of %d files in %d shares on %d workers in %.1f s", facts, len(sizes), len(parts),
             workers, time.monotonic() - started)
    return results


if __name__ == "__main__":
    # A worker: a list of Shares on stdin, one ShareResult on stdout as each is done. The function comes
    # from the module by its real name, so the results' classes unpickle in the parent.
    from wolfmem.search.parallel import index_share as work

    for given in pickle.load(sys.stdin.buffer):
        sys.stdout.buffer.write(pickle.dumps(work(given)))
        sys.stdout.buffer.flush()
