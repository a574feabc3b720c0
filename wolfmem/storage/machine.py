"""This machine's name among the machines that share a vault: its hostname plus a random suffix."""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import socket
from pathlib import Path

from wolfmem.storage.exchange import atomic_write

log = logging.getLogger(__name__)

MACHINE_ID_FILE = "machine-id"
_SUFFIX = re.compile(r"^[0-9a-f]{8}$")


def machine_id(state_root: Path) -> str:
    """This machine's id: its hostname plus a random suffix kept in the machine-local state folder."""
    path = state_root.expanduser() / MACHINE_ID_FILE
    try:
        suffix = path.read_text("utf-8").strip()
    except OSError:
        suffix = ""
    if not _SUFFIX.match(suffix):
        # Hostnames repeat (two laptops called "macbook"); the suffix tells them apart.
        suffix = secrets.token_hex(4)
        try:
            atomic_write(path, (suffix + "\n").encode())
        except OSError as exc:
            # A read-only or full state folder: a suffix derived from its path is stable across
            # processes until the folder can keep the random one.
            suffix = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:8]
            log.warning("cannot keep this machine's id in %s (%s); using %s for now", path, exc.strerror, suffix)
    return f"{_hostname()}-{suffix}"


def _hostname() -> str:
    name = socket.gethostname().split(".")[0].strip() or "host"
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:40]
