"""`wolfmem doctor`: check the whole install, one line per part, each ok, warning or fail with a fix.

Each check is a plain function from the settings (and the vault they name) to a `Check`. To add one —
say, an embeddings endpoint once it is configurable — write `check_<name>(subject) -> Check` and add
it to `CHECKS`. Checks only look: the index round trip writes a probe fact into the index (never into
a markdown file) and removes it again, and the watcher check watches a scratch folder in the state dir.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from wolfmem.config import Config
from wolfmem.errors import LLMError, WolfmemError
from wolfmem.jobs.lease import CURATOR_REL, LEASE_REL, LeaseFile
from wolfmem.memory.facade import Memory, local_now
from wolfmem.ops import service
from wolfmem.ops.daemon import daemon_pid
from wolfmem.ops.service import ServiceState
from wolfmem.search.schema import FactDoc
from wolfmem.storage.conflicts import SyncConflicts
from wolfmem.storage.machine import machine_id
from wolfmem.storage.services import open_services
from wolfmem.storage.vault import CURATED_PATHS, Vault

# A path no vault file can have (sync never indexes `.wolfmem/`), so the probe cannot shadow a note.
PROBE_PATH = ".wolfmem/doctor-probe.md"
WATCH_TIMEOUT_SECONDS = 5.0
INOTIFY_WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")


class Status(StrEnum):
    """How one check went."""

    OK = "ok"
    WARNING = "warning"
    FAIL = "fail"


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, how it went, and how to fix it."""

    name: str
    status: Status
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class Subject:
    """What the checks look at: the resolved settings and the vault they name."""

    config: Config
    vault: Vault

    @property
    def named(self) -> bool:
        """Whether the vault was named (flag, environment or file) rather than the default."""
        return self.config.vault is not None


@dataclass(frozen=True)
class DoctorReport:
    """Every check's result, in order."""

    checks: list[Check]

    @property
    def ok(self) -> bool:
        """No check failed (warnings are allowed)."""
        return all(check.status is not Status.FAIL for check in self.checks)

    @property
    def text(self) -> str:
        """One line per check, a `fix:` line under each that is not ok, and a summary."""
        width = max(len(check.name) for check in self.checks)
        lines = []
        for check in self.checks:
            lines.append(f"{check.status.value:<8} {check.name:<{width}}  {check.detail}")
            if check.fix and check.status is not Status.OK:
                lines.append(f"{'':<8} {'':<{width}}  fix: {check.fix}")
        failures = sum(check.status is Status.FAIL for check in self.checks)
        warnings = sum(check.status is Status.WARNING for check in self.checks)
        lines.append(f"{failures} failed, {warnings} warning(s)" if failures or warnings else "all checks passed")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {"ok": self.ok, "checks": [asdict(check) for check in self.checks]}


CheckFunc = Callable[[Subject], Check]


def run_checks(config: Config, checks: Sequence[CheckFunc] | None = None) -> DoctorReport:
    """Run every check against the vault the settings name; one failing check never stops the rest."""
    subject = Subject(config, Vault(config.vault_path(), config.state_root()))
    results = []
    for check in checks if checks is not None else CHECKS:
        name = check.__name__.removeprefix("check_")
        try:
            results.append(check(subject))
        except Exception as exc:  # the doctor's edge: report what is broken instead of crashing on it
            results.append(Check(name, Status.FAIL, f"{type(exc).__name__}: {exc}"))
    return DoctorReport(results)


# -- the checks ---------------------------------------------------------------------------------------------
def check_vault(subject: Subject) -> Check:
    """The vault exists, has its five curated files, and can be written."""
    vault = subject.vault
    if not vault.exists():
        if subject.named:
            return Check("vault", Status.FAIL, f"{vault.root} is not a vault (no knowledge/ folder)",
                         f"`wolfmem init --vault {vault.root}`, or correct the path you gave")
        return Check("vault", Status.WARNING, f"the default vault {vault.root} is not created yet",
                     "`wolfmem init`, or start `wolfmem daemon`, which creates it")
    if not os.access(vault.knowledge_dir, os.W_OK):
        return Check("vault", Status.FAIL, f"{vault.knowledge_dir} is not writable by this user",
                     f"give this user write access to {vault.root}")
    missing = [rel for rel in CURATED_PATHS if not (vault.root / rel).is_file()]
    if missing:
        return Check("vault", Status.WARNING, f"{vault.root}: missing {', '.join(missing)}",
                     f"`wolfmem init --vault {vault.root}` recreates them from the templates")
    notes = sum(1 for _ in vault.knowledge_dir.rglob("*.md"))
    days = sum(1 for _ in vault.episodes_dir.glob("*.md")) if vault.episodes_dir.is_dir() else 0
    return Check("vault", Status.OK, f"{vault.root}: {notes} knowledge file(s), {days} episode day(s)")


def check_state(subject: Subject) -> Check:
    """The machine-local state folder can be written, and lies outside the vault."""
    state = subject.vault.state_dir
    if state.resolve().is_relative_to(subject.vault.root.resolve()):
        return Check("state", Status.WARNING, f"{state} is inside the vault, so sync tools copy its caches",
                     "set state_dir (or $WOLFMEM_STATE_DIR) to a folder outside the vault")
    existing = next(folder for folder in (state, *state.parents) if folder.exists())
    if existing != state:
        if os.access(existing, os.W_OK):
            return Check("state", Status.OK, f"{state} (created on first use)")
        return Check("state", Status.FAIL, f"{state} cannot be created: {existing} is not writable",
                     f"make {existing} writable, or set state_dir to a writable folder")
    try:
        with tempfile.NamedTemporaryFile(dir=state, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check("state", Status.FAIL, f"{state} is not writable ({exc.strerror or exc})",
                     f"make {state} writable, or set state_dir to a writable folder")
    return Check("state", Status.OK, str(state))


def check_index(subject: Subject) -> Check:
    """The index opens, and a probe fact written to it is found and then removed."""

    if not subject.vault.exists():
        return Check("index", Status.WARNING, "not checked: there is no vault yet", "create the vault first")
    with Memory(config=subject.config, create=False) as memory:
        health = memory.status()["index"]
        index = memory.index
        word = "wolfmemprobe" + secrets.token_hex(4)
        probe = FactDoc(doc_id=f"{PROBE_PATH}#doctor-{word}", path=PROBE_PATH, source="knowledge", section="",
                        line=1, text=f"{word} doctor probe", date="")
        terms = {term: 1.0 for term in index.analyse(word)}
        started = time.monotonic()
        index.replace_files({PROBE_PATH: [probe]}, removed=())
        try:
            found = any(hit.path == PROBE_PATH for hit in index.search(terms, limit=3))
        finally:
            index.replace_files({}, removed=[PROBE_PATH])
        gone = not any(hit.path == PROBE_PATH for hit in index.search(terms, limit=3))
        elapsed_ms = (time.monotonic() - started) * 1000
    if not (found and gone):
        return Check("index", Status.FAIL,
                     f"a probe fact was {'not found after writing it' if not found else 'still found after removal'}",
                     "`wolfmem reindex` rebuilds the index from the files")
    detail = (f"{health['facts']} facts from {health['files']} file(s); probe written, found and removed "
              f"in {elapsed_ms:.0f} ms")
    if health["stale_files"]:
        detail += f"; {len(health['stale_files'])} file(s) changed since the last sync"
    if health["skipped_files"]:
        rel, why = next(iter(health["skipped_files"].items()))
        return Check("index", Status.WARNING, f"{detail}; {len(health['skipped_files'])} file(s) not indexed, "
                     f"e.g. {rel}: {why}", "fix or move the files named (`wolfmem status` lists them all)")
    return Check("index", Status.OK, detail)


def check_watcher(subject: Subject) -> Check:
    """A file observer starts, sees a change in a scratch folder, and can watch the whole vault."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    seen = threading.Event()

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if str(event.src_path).endswith("probe.txt"):
                seen.set()

    root = subject.vault.state_dir if subject.vault.state_dir.is_dir() else Path(tempfile.gettempdir())
    scratch = Path(tempfile.mkdtemp(prefix=".doctor-watch-", dir=root))
    observer = Observer()
    try:
        observer.schedule(Handler(), str(scratch), recursive=False)
        if subject.vault.exists():
            observer.schedule(FileSystemEventHandler(), str(subject.vault.root), recursive=True)
        observer.start()
        (scratch / "probe.txt").write_text("probe")
        noticed = seen.wait(WATCH_TIMEOUT_SECONDS)
    except OSError as exc:
        # ENOSPC here means the inotify watch limit, not a full disk.
        return Check("watcher", Status.FAIL, f"{type(observer).__name__} could not start: {exc}",
                     "raise the inotify limits, e.g. `sudo sysctl fs.inotify.max_user_watches=524288 "
                     "fs.inotify.max_user_instances=512`")
    finally:
        if observer.is_alive():
            observer.stop()
            observer.join(timeout=5)
        shutil.rmtree(scratch, ignore_errors=True)
    kind = type(observer).__name__
    if not noticed:
        return Check("watcher", Status.FAIL, f"{kind} saw no event for a new file within {WATCH_TIMEOUT_SECONDS:.0f} s",
                     "edits are then only found by the reconcile scan (watcher.reconcile_seconds); "
                     "check the file system supports change notification (network and FUSE mounts often do not)")
    folders = sum(1 for _ in os.walk(subject.vault.root)) if subject.vault.exists() else 0
    detail = f"{kind} saw a change" + (f"; the vault has {folders} folder(s) to watch" if folders else "")
    try:
        limit = int(INOTIFY_WATCHES.read_text())
    except (OSError, ValueError):
        return Check("watcher", Status.OK, detail)
    detail += f" (inotify limit {limit} watches for this user)"
    if folders > limit // 2:
        return Check("watcher", Status.WARNING, detail,
                     "raise fs.inotify.max_user_watches; other programs need watches too")
    return Check("watcher", Status.OK, detail)


def check_daemon(subject: Subject) -> Check:
    """A daemon serves this vault, by hand or as the user service."""

    pid = daemon_pid(subject.vault) if subject.vault.state_dir.is_dir() else None
    service = _service_state()
    if pid is not None:
        how = " as the user service" if service is not None and service.running else ""
        return Check("daemon", Status.OK, f"running{how} (pid {pid})")
    if service is not None and service.installed:
        return Check("daemon", Status.WARNING, "the user service is installed but no daemon runs for this vault",
                     "`wolfmem service status`, and the service log (journalctl --user -u wolfmem)")
    return Check("daemon", Status.WARNING,
                 "not running: hand edits wait for the next search, and nightly curation does not run",
                 "start `wolfmem daemon`, or `wolfmem service install` to run it at login")


def _service_state() -> ServiceState | None:
    """The user service's state, or None where there can be no service (other platforms)."""

    try:
        return service.status()
    except WolfmemError:
        return None


def check_lease(subject: Subject) -> Check:
    """Which machine curates this vault, and whether its lease file is readable."""
    if not subject.vault.exists():
        return Check("lease", Status.OK, "no vault yet, so no lease")
    services = open_services(subject.config, local_now, create=False)
    try:
        lease_file = LeaseFile(services.writer, machine_id(subject.config.state_root()), subject.config.lease_hours)
        return _lease_check(lease_file)
    finally:
        services.close()


def _lease_check(lease_file: LeaseFile) -> Check:
    lease = lease_file.read()
    if lease is None:
        problems = lease_file.status(local_now())["problems"]
        if problems:
            why = "; ".join(problems)
            return Check("lease", Status.WARNING, f"the old lease file {LEASE_REL} is unreadable ({why}); ignored",
                         f"delete {lease_file.writer.vault.root / LEASE_REL}")
        if lease_file.path.exists():
            return Check("lease", Status.WARNING, f"{CURATOR_REL} names no machine; the next curation on any "
                         "machine becomes the curator", "run `wolfmem curator take` on the machine that should curate")
        return Check("lease", Status.OK, "no curator yet; the first curation on this machine makes it the curator")
    status = lease_file.status(local_now())
    if status["is_this_machine"]:
        return Check("lease", Status.OK, f"this machine curates this vault (last run {status['last_run']})")
    if status["fresh"]:
        return Check("lease", Status.OK, f"{lease.machine} curates this vault (lease fresh until {status['expires']})")
    return Check("lease", Status.WARNING,
                 f"{lease.machine}'s lease went stale at {status['expires']}; this machine takes over at its next run",
                 f"nothing, if {lease.machine} was retired; otherwise check wolfmem there")


def check_llm(subject: Subject) -> Check:
    """The configured LLM answers a tiny request (nothing to check when curation runs offline)."""
    # Imported here: the openai client is needed only when an LLM is configured.
    from wolfmem.llm.chat import LLMClient, LLMSettings

    config = subject.config
    if not config.llm_model:
        return Check("llm", Status.OK, "offline: no llm.model set, so the deterministic curator runs")
    try:
        with LLMClient(LLMSettings.from_config(config)) as client:
            return Check("llm", Status.OK, client.ping().removeprefix("ok: "))
    except LLMError as exc:
        return Check("llm", Status.FAIL, str(exc),
                     "check llm.base_url, llm.model and the API key variable (`wolfmem config` shows them)")


def check_sync(subject: Subject) -> Check:
    """Sync engines' conflicts wolfmem could not merge (a copy it cannot read, git markers around prose)."""
    if not subject.vault.exists():
        return Check("sync", Status.OK, "no vault yet")
    services = open_services(subject.config, local_now, create=False)
    try:
        needs = SyncConflicts(services.writer, services.archive, services.clock).unresolved()
        copies = services.vault.conflict_copies()
    finally:
        services.close()
    if needs:
        return Check("sync", Status.WARNING, "; ".join(f"{rel}: {why}" for rel, why in sorted(needs.items())),
                     "resolve them in an editor; wolfmem merges everything else by itself")
    if copies:
        return Check("sync", Status.OK, f"{len(copies)} conflict copy(ies) waiting for the next sync to merge them")
    return Check("sync", Status.OK, "no sync conflicts left to merge")


CHECKS: tuple[CheckFunc, ...] = (
    check_vault, check_state, check_index, check_watcher, check_daemon, check_lease, check_sync, check_llm,
)
