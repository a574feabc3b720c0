"""Real sync engines between two vault folders on this machine, and a wolfmem "machine" per folder.

`SyncthingPair` runs two Syncthing instances on 127.0.0.1 (discovery, relays, NAT and usage reports off,
separate homes), joins them through their REST API (`/rest/config/devices`, `/rest/config/folders`) and
shares one folder between them with Syncthing's default conflict settings (maxConflicts 10, no versioning).
`Machine` is a wolfmem daemon over one of the folders with its own state folder (so its own machine id),
and `save_many` saves facts from a separate process of that machine. Used by the slow sync tests and by
scripts/bench_sync.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDER = "vault"
# wolfmem's own litter is machine-local: a kept displaced version or a backup must not travel (README).
STIGNORE = "(?d).*.wolfmem-displaced-*\n(?d)*.bak\n(?d).*.tmp\n(?d)*~\n"


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Syncthing:
    """One Syncthing instance with its own home, GUI/REST and sync ports on 127.0.0.1."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.key = secrets.token_hex(16)
        self.gui, self.listen = free_port(), free_port()
        self.process: subprocess.Popen[bytes] | None = None
        subprocess.run(["syncthing", "generate", f"--home={home}", "--no-default-folder", "--skip-port-probing"],
                       check=True, capture_output=True)
        self._configure()
        self.device_id = subprocess.run(["syncthing", "serve", f"--home={home}", "--device-id"], check=True,
                                        capture_output=True, text=True).stdout.strip()

    def _configure(self) -> None:
        path = self.home / "config.xml"
        tree = ET.parse(path)
        root = tree.getroot()
        gui = root.find("gui")
        assert gui is not None
        _set(gui, "address", f"127.0.0.1:{self.gui}")
        _set(gui, "apikey", self.key)
        gui.set("tls", "false")
        options = root.find("options")
        assert options is not None
        for name, value in (("listenAddress", f"tcp://127.0.0.1:{self.listen}"), ("globalAnnounceEnabled", "false"),
                            ("localAnnounceEnabled", "false"), ("relaysEnabled", "false"), ("natEnabled", "false"),
                            ("urAccepted", "-1"), ("startBrowser", "false"), ("crashReportingEnabled", "false"),
                            ("autoUpgradeIntervalH", "0")):
            _set(options, name, value)
        tree.write(path)

    def start(self) -> None:
        env = {**os.environ, "STNOUPGRADE": "1", "STNORESTART": "1", "STNODEFAULTFOLDER": "1"}
        log = open(self.home / "syncthing.log", "wb")  # noqa: SIM115 - closed with the process
        self.process = subprocess.Popen(["syncthing", "serve", f"--home={self.home}", "--no-browser", "--no-restart"],
                                        stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                self.rest("GET", "/rest/system/ping")
                return
            time.sleep(0.2)
        raise RuntimeError(f"syncthing did not start: {(self.home / 'syncthing.log').read_text()[-2000:]}")

    def rest(self, method: str, path: str, body: object = None) -> object:
        """One REST call; its JSON answer (or None)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.gui}{path}", data=data, method=method,
                                         headers={"X-API-Key": self.key, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            text = answer.read()
        return json.loads(text) if text.strip() else None

    def share(self, folder: Path, peer: Syncthing) -> None:
        """Know the peer at its loopback address and share `folder` with it (default conflict settings)."""
        self.rest("POST", "/rest/config/devices", {"deviceID": peer.device_id, "name": peer.home.name,
                                                   "addresses": [f"tcp://127.0.0.1:{peer.listen}"]})
        self.rest("POST", "/rest/config/folders", {
            "id": FOLDER, "label": FOLDER, "path": str(folder), "type": "sendreceive",
            "devices": [{"deviceID": self.device_id}, {"deviceID": peer.device_id}],
            "fsWatcherEnabled": True, "fsWatcherDelayS": 1, "rescanIntervalS": 10,
        })

    def pause(self, paused: bool = True) -> None:
        """Take the folder offline on this machine (or bring it back): nothing is sent or received meanwhile."""
        self.rest("PATCH", f"/rest/config/folders/{FOLDER}", {"paused": paused})

    def idle(self) -> bool:
        """Whether the folder is scanned and pulled, with nothing left to fetch from the peer."""
        status = self.rest("GET", f"/rest/db/status?folder={FOLDER}")
        assert isinstance(status, dict)
        return status.get("state") == "idle" and status.get("needTotalItems", 0) == 0

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def _set(parent: ET.Element, tag: str, value: str) -> None:
    element = parent.find(tag)
    if element is None:
        element = ET.SubElement(parent, tag)
    element.text = value


@contextlib.contextmanager
def syncthing_pair(tmp_path: Path, a: Path, b: Path) -> Iterator[tuple[Syncthing, Syncthing]]:
    """Folders a and b kept in step by two Syncthing instances; stopped on exit."""
    pair = (Syncthing(tmp_path / "st-a"), Syncthing(tmp_path / "st-b"))
    try:
        for folder in (a, b):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / ".stignore").write_text(STIGNORE)
        for node in pair:
            node.start()
        pair[0].share(a, pair[1])
        pair[1].share(b, pair[0])
        yield pair
    finally:
        for node in pair:
            node.stop()


def tree(root: Path) -> dict[str, bytes]:
    """The synced files that matter: notes, episode logs and wolfmem's bookkeeping (no engine litter)."""
    out = {}
    for top in ("knowledge", "episodes", ".wolfmem"):
        for path in sorted((root / top).rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.is_file() and ".syncthing." not in rel and not _local(path.name):
                out[rel] = path.read_bytes()
    return out


def _local(name: str) -> bool:
    """A file STIGNORE keeps on its machine (a backup curation made, a displaced version, a temporary file)."""
    return name.endswith((".tmp", ".bak", "~")) or ".wolfmem-displaced-" in name


def converged(pair: tuple[Syncthing, Syncthing], a: Path, b: Path, quiet: float = 3.0, timeout: float = 120) -> None:
    """Wait until both engines are idle and both folders hold the same files, unchanged for `quiet` s."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        snapshot = (tree(a), tree(b))
        if snapshot != last:
            last, since = snapshot, time.monotonic()
        elif snapshot[0] == snapshot[1] and all(node.idle() for node in pair) and time.monotonic() - since >= quiet:
            return
        time.sleep(0.5)
    differ = sorted(set(last[0]) ^ set(last[1]) | {k for k in last[0] if last[1].get(k) != last[0][k]}) if last else []
    raise AssertionError(f"the folders did not converge in {timeout} s; they differ in {differ}")


class Machine:
    """A wolfmem daemon over one vault folder, with a state folder (and so a machine id) of its own."""

    def __init__(self, root: Path, state: Path, env: dict[str, str] | None = None) -> None:
        self.root, self.state = root, state
        self.env = {**os.environ, "WOLFMEM_STATE_DIR": str(state), "WOLFMEM_LOG_DIR": str(state / "logs"),
                    "WOLFMEM_SCHEDULE_CURATE": "off", "WOLFMEM_SCHEDULE_AUDIT": "off",
                    "WOLFMEM_SCHEDULE_DIGEST": "off", **(env or {})}
        self.daemon: subprocess.Popen[bytes] | None = None

    def set_clock(self, moment: datetime, shim: Path) -> None:
        """Move this machine's clock: every wolfmem process started from now on lives at `moment` onwards."""
        offset = moment.timestamp() - time.time()
        self.env.update(LD_PRELOAD=f"{shim}:{LIBFAKETIME}", FAKETIME=f"{offset:+.0f}", FAKETIME_DONT_FAKE_MONOTONIC="1")

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "wolfmem", *args, "--vault", str(self.root)], cwd=REPO,
                              capture_output=True, text=True, env=self.env, timeout=timeout)

    def start(self) -> None:
        self.daemon = subprocess.Popen([sys.executable, "-m", "wolfmem", "daemon", "--vault", str(self.root)],
                                       cwd=REPO, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def save_many(self, facts: list[tuple[str, str]], pause: float = 0.3) -> subprocess.Popen[str]:
        """Save (fact, topic) pairs into people.md from one process of this machine; it prints each receipt."""
        script = (
            "import json, sys, time\n"
            "from wolfmem import Memory\n"
            f"facts = json.loads({json.dumps(json.dumps(facts))})\n"
            f"with Memory({str(self.root)!r}) as memory:\n"
            "    for fact, topic in facts:\n"
            "        receipt = memory.save(fact, type='people', topic=topic)\n"
            "        print(json.dumps({'fact': fact, 'status': str(receipt.status)}), flush=True)\n"
            f"        time.sleep({pause})\n"
        )
        return subprocess.Popen([sys.executable, "-c", script], cwd=REPO, env=self.env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def stop(self) -> None:
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.terminate()
            try:
                self.daemon.wait(15)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait(5)


def acknowledged(process: subprocess.Popen[str], timeout: float = 300) -> list[str]:
    """The facts a save_many process got `saved` for (it must exit cleanly)."""
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err[-3000:]
    receipts = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [item["fact"] for item in receipts if item["status"].endswith("saved")]


def lines_of(root: Path, rel: str = "knowledge/people.md") -> set[str]:
    return {line.strip().removeprefix("- ") for line in (root / rel).read_text("utf-8").splitlines()}


def conflict_copies(root: Path) -> list[str]:
    from wolfmem.core.syncnames import is_conflict_copy

    return sorted(path.relative_to(root).as_posix() for top in ("knowledge", "episodes")
                  for path in (root / top).rglob("*") if is_conflict_copy(path.relative_to(root).as_posix()))


LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
# libfaketime 0.9.10 with FAKETIME_DONT_FAKE_MONOTONIC fails Python's time.sleep (clock_nanosleep on the
# monotonic clock) with EINVAL, and with the monotonic clock faked every timed lock wait (sem_clockwait, which
# it does not wrap) waits the offset too. So only the wall clock is moved, and this shim, preloaded first,
# hands monotonic sleeps straight to the kernel.
_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem) {
    if (id == CLOCK_MONOTONIC)
        return syscall(SYS_clock_nanosleep, id, flags, req, rem) == 0 ? 0 : errno;
    static int (*next)(clockid_t, int, const struct timespec *, struct timespec *);
    if (!next) next = dlsym(RTLD_NEXT, "clock_nanosleep");
    return next(id, flags, req, rem);
}
"""


def have_faketime() -> bool:
    return LIBFAKETIME.exists() and shutil.which("cc") is not None


def clock_shim(folder: Path) -> Path:
    """Build the monotonic-sleep shim that goes before libfaketime in LD_PRELOAD (see _SHIM)."""
    source, library = folder / "ftshim.c", folder / "ftshim.so"
    source.write_text(_SHIM)
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(library), str(source), "-ldl"], check=True,
                   capture_output=True)
    return library


def have_engines() -> bool:
    return all(shutil.which(tool) for tool in ("syncthing", "unison", "git"))
