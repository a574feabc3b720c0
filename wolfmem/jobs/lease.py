"""The curation lease: one machine per vault runs curation, the audit and the digest.

A vault synced by git, Syncthing, iCloud or Dropbox may have a daemon on every machine. The lease file
`<vault>/.wolfmem/lease.json` travels with the vault and names the machine that last ran those jobs and
when. Another machine skips them while the lease is fresh (`lease.hours`, 36 by default) and takes over
once it goes stale. Sync tools are slow and not transactional, so this is a courtesy protocol rather than
a lock: it keeps machines from taking turns every night, and curation's compare-and-swap makes an
occasional overlap harmless.

The lease also records each job's last completed period, so a machine taking over picks up where the
previous holder stopped instead of where it itself last ran.
"""

from __future__ import annotations

import json
import logging
import secrets
import socket
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from wolfmem.errors import OutsideVault
from wolfmem.storage.exchange import atomic_write
from wolfmem.storage.writer import Cause, VaultWriter

log = logging.getLogger(__name__)

LEASE_REL = ".wolfmem/lease.json"
MACHINE_ID_FILE = "machine-id"


def machine_id(state_root: Path) -> str:
    """This machine's id: its hostname plus a random suffix kept in the machine-local state folder."""
    path = state_root.expanduser() / MACHINE_ID_FILE
    try:
        suffix = path.read_text("utf-8").strip()
    except OSError:
        suffix = ""
    if not suffix:
        # Hostnames repeat (two laptops called "macbook"); the suffix tells them apart.
        suffix = secrets.token_hex(4)
        atomic_write(path, (suffix + "\n").encode())
    return f"{_hostname()}-{suffix}"


def _hostname() -> str:
    name = socket.gethostname().split(".")[0].strip() or "host"
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:40]


@dataclass(frozen=True)
class Lease:
    """What the lease file says: the holder, when it last ran a job, and each job's last completed period."""

    machine: str
    last_run: datetime
    done: dict[str, str] = field(default_factory=dict)

    def expires(self, hours: float) -> datetime:
        """When the lease goes stale."""
        return self.last_run + timedelta(hours=hours)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written to the lease file."""
        return {
            "version": 1,
            "machine": self.machine,
            "last_run": self.last_run.astimezone(timezone.utc).isoformat(timespec="seconds"),
            "done": dict(sorted(self.done.items())),
        }


@dataclass(frozen=True)
class LeaseCheck:
    """Whether this machine may run the leased jobs now, and why."""

    ok: bool
    reason: str
    holder: Lease | None


class LeaseFile:
    """Reads, checks and renews `<vault>/.wolfmem/lease.json` for one machine."""

    def __init__(self, writer: VaultWriter, machine: str, hours: float) -> None:
        self.writer = writer
        self.machine = machine
        self.hours = hours
        self.path = writer.vault.root / LEASE_REL

    def read(self) -> Lease | None:
        """The current lease, or None when there is none or it cannot be read (then it is up for grabs)."""
        try:
            data = json.loads(self.writer.vault.read_bytes(LEASE_REL))
            done = data.get("done") or {}
            return Lease(
                machine=str(data["machine"]),
                last_run=_aware(datetime.fromisoformat(data["last_run"])),
                done={str(k): str(v) for k, v in done.items()},
            )
        except FileNotFoundError:
            return None
        except (OSError, OutsideVault, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("ignoring unreadable lease file %s (%s); this machine may take the lease", self.path, exc)
            return None

    def check(self, now: datetime) -> LeaseCheck:
        """May this machine run curation now? Yes if the lease is ours, absent, or stale."""
        lease = self.read()
        if lease is None:
            return LeaseCheck(True, "no lease yet; this machine takes it", None)
        if lease.machine == self.machine:
            return LeaseCheck(True, "this machine holds the lease", lease)
        expires = lease.expires(self.hours)
        if now >= expires:
            return LeaseCheck(
                True, f"{lease.machine}'s lease went stale at {_show(expires)}; this machine takes over", lease
            )
        return LeaseCheck(
            False,
            f"{lease.machine} curates this vault (lease fresh until {_show(expires)}); "
            f"to move curation here, stop wolfmem there or delete {LEASE_REL} in the vault",
            lease,
        )

    def renew(self, now: datetime, job: str | None = None, period: str | None = None) -> Lease:
        """Write the lease as ours, last run now, optionally recording a job's newly completed period."""
        current = self.read()
        done = dict(current.done) if current else {}
        if job is not None and period is not None and period > done.get(job, ""):
            done[job] = period
        lease = Lease(self.machine, _aware(now), done)
        self.writer.put(LEASE_REL, json.dumps(lease.to_dict(), indent=2) + "\n", cause=Cause.LEASE, backup=False)
        return lease

    def status(self, now: datetime) -> dict[str, Any]:
        """Who curates this vault, for `wolfmem status`."""
        lease = self.read()
        if lease is None:
            return {"holder": None, "this_machine": self.machine, "fresh": False, "last_run": None, "expires": None}
        expires = lease.expires(self.hours)
        return {
            "holder": lease.machine,
            "this_machine": self.machine,
            "is_this_machine": lease.machine == self.machine,
            "fresh": now < expires,
            "last_run": _show(lease.last_run),
            "expires": _show(expires),
            "done": lease.done,
        }


def _aware(moment: datetime) -> datetime:
    """Naive datetimes are taken as UTC so that two machines' times always compare."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _show(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")
