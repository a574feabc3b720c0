"""Real faults for tests: a small tmpfs to fill or remount read-only, and chmod that bites even as root.

Root ignores file modes (CAP_DAC_OVERRIDE), so `unprivileged()` drops that capability for the calling
thread while a test runs, and `run_cli_unprivileged` drops it for a CLI subprocess. Mounting needs
root (CAP_SYS_ADMIN); without it the tmpfs tests skip with the reason.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2
_PR_CAPBSET_DROP = 24
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _set_dac_override(on: bool) -> None:
    libc = _libc()
    header, data = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    mask = (1 << _CAP_DAC_OVERRIDE) | (1 << _CAP_DAC_READ_SEARCH)
    data[0].effective = data[0].effective | mask if on else data[0].effective & ~mask
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


@contextlib.contextmanager
def unprivileged() -> Iterator[None]:
    """Within the block, file modes apply to this thread even when the tests run as root."""
    if os.geteuid() != 0:
        yield
        return
    if not sys.platform.startswith("linux"):
        pytest.skip("running as root, and file modes cannot be enforced here without Linux capabilities")
    _set_dac_override(False)
    try:
        yield
    finally:
        _set_dac_override(True)


def _drop_dac_for_child() -> None:  # runs in the child between fork and exec
    libc = _libc()
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)


def run_cli_unprivileged(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -m wolfmem ARGS` in a subprocess that cannot override file modes, with this test's environment."""
    return subprocess.run(
        [sys.executable, "-m", "wolfmem", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
        cwd=REPO,
        preexec_fn=_drop_dac_for_child if os.geteuid() == 0 else None,
    )


@contextlib.contextmanager
def small_disk(path: Path, size: str = "4m") -> Iterator[Path]:
    """A fresh tmpfs of `size` mounted at path (skips the test where mounting is not permitted)."""
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield path
    finally:
        # Lazy: a connection the test left open must not turn into a failed unmount.
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(disk: Path) -> Path:
    """Fill a disk until it refuses another byte; return the filler file (unlink it to free the space)."""
    filler = disk / "filler.bin"
    with open(filler, "wb", buffering=0) as handle:
        chunk = b"\0" * 65536
        while True:
            try:
                handle.write(chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
        # The last blocks: tmpfs may still take a few bytes.
        with contextlib.suppress(OSError):
            while handle.write(b"\0" * 512):
                pass
    return filler


def remount(disk: Path, mode: str) -> None:
    """Remount a tmpfs read-only ("ro") or read-write ("rw")."""
    subprocess.run(["mount", "-o", f"remount,{mode}", str(disk)], check=True, capture_output=True)


def no_traceback(result: subprocess.CompletedProcess[str]) -> bool:
    """Whether a CLI run printed no Python traceback."""
    return "Traceback" not in result.stderr and "Traceback" not in result.stdout
