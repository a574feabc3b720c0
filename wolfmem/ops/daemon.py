"""The daemon: one per vault; watches files, keeps the index fresh, and runs the schedule."""

from __future__ import annotations

import ctypes
import functools
import logging
import logging.handlers
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import filelock

from wolfmem.config import Config
from wolfmem.errors import WolfmemError
from wolfmem.memory.facade import Memory
from wolfmem.search.index import FactIndex
from wolfmem.search.sync import BulkProgress, SyncReport
from wolfmem.search.watcher import Watcher
from wolfmem.storage.services import VaultServices
from wolfmem.storage.vault import Vault

log = logging.getLogger(__name__)

# The state record of the daemon's indexer: its last error, '' once it recovered.
INDEXER_RECORD = "indexer"


class DaemonRunning(WolfmemError):
    """Another daemon already serves this vault on this machine."""


def daemon_pid(vault: Vault) -> int | None:
    """The pid of the daemon serving a vault on this machine, or None."""
    try:
        pid = int((vault.state_dir / "daemon.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


class Daemon:
    """Cheap to construct; start() is idempotent; stop() stops the schedule, the watcher and the index."""

    def __init__(self, config: Config, bulk_progress: BulkProgress | None = None) -> None:
        self.config = config
        self.bulk_progress = bulk_progress  # for the first sync of an empty index (a terminal's bar)
        self.memory: Memory | None = None
        self._instance_lock: filelock.FileLock | None = None
        self._watcher: Watcher | None = None
        self._scheduler: Any = None
        self._embedding: Any = None
        self._started = False
        self._index_error = ""

    def start(self) -> None:
        """Take the single-instance lock, create the vault if needed, sync, then watch and schedule."""
        if self._started:
            return
        memory = Memory(config=self.config, create=True)
        vault = memory.services.vault
        lock = filelock.FileLock(str(vault.state_dir / "daemon.lock"), thread_local=False)
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            memory.close()
            pid = daemon_pid(vault)
            raise DaemonRunning(
                f"a wolfmem daemon{f' (pid {pid})' if pid else ''} is already running for {vault.root}; "
                "stop it first, or use `wolfmem status` to see it"
            ) from None
        self._instance_lock = lock
        (vault.state_dir / "daemon.pid").write_text(str(os.getpid()))
        self.memory = memory
        memory.syncer.bulk_progress = self.bulk_progress
        report = self._sync()
        log.info("vault %s: %d files indexed at start", vault.root, len(report.indexed))
        self._watcher = Watcher(
            vault,
            self._sync,
            debounce_seconds=self.config.watcher_debounce_ms / 1000,
            reconcile_seconds=self.config.watcher_reconcile_seconds,
            due=memory.displaced.due,
        )
        self._watcher.start()
        self._scheduler = _start_scheduler(memory.services)
        self._embedding = _start_embedding(memory)
        self._started = True
        log.info("wolfmem daemon watching %s", vault.root)

    def _sync(self) -> SyncReport:
        """Sync the index, then let go of its readers: the daemon never searches, other processes do."""
        assert self.memory is not None
        started = time.monotonic()
        try:
            report = self.memory.sync()
        except WolfmemError as exc:
            self._note_index_health(str(exc))
            raise
        finally:
            # Only the searcher: the scheduler's jobs may be writing through the same index right now.
            self.memory.release_readers()
            _return_freed_memory()
        self._note_index_health(self.memory.services.writer.last_index_error or "")
        if self._embedding is not None and (report.indexed or report.removed):
            self._embedding.wake()
        log.debug("sync: %d file(s) indexed, %d removed, in %.0f ms",
                  len(report.indexed), len(report.removed), (time.monotonic() - started) * 1000)
        return report

    def _note_index_health(self, error: str) -> None:
        """Record the indexer's last error (or its recovery) where `wolfmem status` in any process reads it."""
        assert self.memory is not None
        if error == self._index_error:
            return
        self._index_error = error
        services = self.memory.services
        record = {"error": error, "at": services.clock().isoformat(timespec="seconds")}
        try:
            services.state.put_run_record(INDEXER_RECORD, record)
        except WolfmemError as exc:
            log.warning("could not record the indexer's health: %s", exc)
        if error:
            log.error("the index could not be brought up to date: %s", error)
        else:
            log.info("the index is up to date again")

    def stop(self) -> None:
        """Stop everything started, in reverse order; safe to call twice."""
        if self._scheduler is not None:
            self._scheduler.stop()
            self._scheduler = None
        if self._embedding is not None:
            self._embedding.stop()
            self._embedding = None
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
        if self.memory is not None:
            self.memory.close()
            with_pid = self.memory.services.vault.state_dir / "daemon.pid"
            if with_pid.exists():
                with_pid.unlink()
            self.memory = None
        if self._instance_lock is not None:
            self._instance_lock.release()
            self._instance_lock = None
        self._started = False


def _return_freed_memory() -> None:
    """Hand memory freed by a sync back to the system (glibc keeps it in the heap otherwise).

    Indexing allocates and frees many small objects; without this a daemon that once synced a
    few thousand facts in-process stayed 100+ MB larger for good. Elsewhere it does nothing.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None


def _start_scheduler(services: VaultServices) -> Any:
    # Imported here: only the daemon runs the schedule, so no other command loads APScheduler.
    from wolfmem.jobs.scheduler import Scheduler

    scheduler = Scheduler(services)
    scheduler.start()
    return scheduler


def _start_embedding(memory: Memory) -> Any:
    """With embeddings configured, a thread that embeds new and changed facts in the background."""
    if memory.hybrid is None:
        return None
    # Its own index handle: the daemon closes its readers after every sync, mid-pass or not.
    vault = memory.services.vault
    background = memory.hybrid.background(FactIndex(vault.index_dir, lock=vault.index_lock))
    background.start()
    return background


def log_file(config: Config) -> Path:
    """The daemon's log file for the vault these settings name; each vault has its own."""
    return config.log_path(Vault(config.vault_path(), config.state_root()).state_dir.name)


def setup_logging(config: Config) -> Path:
    """Log to stderr and to the vault's log file under the log dir, at the configured level."""
    path = log_file(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    root = logging.getLogger("wolfmem")
    root.setLevel(config.log_level.upper())
    # A daemon runs for months: the file rolls over at 5 MB, keeping three old ones.
    rolling = logging.handlers.RotatingFileHandler(path, maxBytes=5_000_000, backupCount=3, encoding="utf-8")
    for handler in (logging.StreamHandler(), rolling):
        handler.setFormatter(fmt)
        root.addHandler(handler)
    return path


def run_in_foreground(daemon: Daemon) -> int:
    """Run until SIGINT/SIGTERM, and return which; a second Ctrl+C forces the exit."""
    log_file = setup_logging(daemon.config)
    stop = threading.Event()
    heard: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        if stop.is_set():
            os._exit(130)
        log.info("received %s; stopping (press Ctrl+C again to force)", signal.Signals(signum).name)
        heard.append(signum)
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    daemon.start()
    log.info("logging to %s", log_file)
    try:
        while not stop.wait(3600):
            pass
    finally:
        daemon.stop()
        log.info("stopped")
    return heard[0]
