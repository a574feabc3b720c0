"""Cooperative cancellation: an adapter marks work as cancellable, the library stops at safe points.

A Memory call runs in a worker thread that nothing can interrupt from outside, so the library asks
instead: `checkpoint()` at a point where stopping leaves nothing half done (before a save writes,
between a search's stages) raises `Cancelled` if the caller has given up. The question lives in a
context variable, so it reaches the library without a parameter on every call, and each worker
thread sees only its own caller's (anyio runs worker threads in a copy of the caller's context).
Outside `cancellable()`, as in the CLI, checkpoints cost a lookup and never raise.

A command's Ctrl+C is the other way to stop: `on_sigint` raises KeyboardInterrupt where the main
thread is, except inside `completing()` (a write that has begun), where it is held until the block
ends, so an interrupt never leaves a file swapped in without its history, index or archive entry.

The same points tell a caller that listens (`reporting()`, the MCP server's progress
notifications) what a long call is doing now: a batch search of 8 long queries takes seconds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import FrameType

from wolfmem.errors import WolfmemError

_is_cancelled: ContextVar[Callable[[], bool] | None] = ContextVar("wolfmem_is_cancelled", default=None)
_report: ContextVar[Callable[[str], None] | None] = ContextVar("wolfmem_report", default=None)


class Cancelled(WolfmemError):
    """The caller cancelled the call, and it stopped at a point where nothing was half done."""


@contextmanager
def cancellable(is_cancelled: Callable[[], bool]) -> Iterator[None]:
    """Within this block, checkpoints raise Cancelled once `is_cancelled()` returns True."""
    token = _is_cancelled.set(is_cancelled)
    try:
        yield
    finally:
        _is_cancelled.reset(token)


@contextmanager
def shielded() -> Iterator[None]:
    """Within this block, checkpoints never raise: for bookkeeping that follows a change already made."""
    token = _is_cancelled.set(None)
    try:
        yield
    finally:
        _is_cancelled.reset(token)


@contextmanager
def reporting(report: Callable[[str], None]) -> Iterator[None]:
    """Within this block, each checkpoint first tells `report` the stage about to begin."""
    token = _report.set(report)
    try:
        yield
    finally:
        _report.reset(token)


def checkpoint(stage: str) -> None:
    """Report the stage about to begin to a listening caller; raise Cancelled, naming it, if the caller cancelled."""
    is_cancelled = _is_cancelled.get()
    if is_cancelled is not None and is_cancelled():
        raise Cancelled(f"cancelled before {stage}; nothing was changed")
    report = _report.get()
    if report is not None:
        report(stage)


class _Held:
    """The main thread's writes under way, and whether a Ctrl+C waits for them to end."""

    depth = 0
    interrupted = False


def on_sigint(signum: int, frame: FrameType | None) -> None:
    """A SIGINT handler: KeyboardInterrupt now, or once the write under way (`completing`) has ended."""
    if _Held.depth:
        _Held.interrupted = True
        return
    raise KeyboardInterrupt


@contextmanager
def completing() -> Iterator[None]:
    """Within this block (a write that has begun), a Ctrl+C in the main thread takes effect when it ends."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are only ever handled in the main thread
        return
    _Held.depth += 1
    try:
        yield
    finally:
        _Held.depth -= 1
        if not _Held.depth and _Held.interrupted:
            _Held.interrupted = False
            raise KeyboardInterrupt
