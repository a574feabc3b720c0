"""The process side of `wolfmem mcp`: stdin read so that it never pins the process, and stopping on signals.

The SDK reads stdin in a worker thread that the interpreter joins at exit, so a server told to
stop kept running until the client closed stdin. Here a daemon thread reads it, and SIGINT or
SIGTERM cancels the serving scope: calls in flight stop at their next checkpoint, or finish a
write they have begun, and the process exits.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import AsyncIterator, Iterator

import anyio
import anyio.lowlevel

log = logging.getLogger(__name__)

CHUNK_BYTES = 1 << 16
FORCED_EXIT = 130


async def stdin_lines(fd: int = 0) -> AsyncIterator[str]:
    """The lines of `fd` (stdin), read by a daemon thread, which the interpreter does not wait for at exit."""
    send, receive = anyio.create_memory_object_stream[str](1)
    token = anyio.lowlevel.current_token()

    def pump() -> None:
        try:
            for line in _read_lines(fd):
                anyio.from_thread.run(send.send, line, token=token)
            anyio.from_thread.run_sync(send.close, token=token)
        except (RuntimeError, anyio.BrokenResourceError, OSError) as exc:
            # The server stopped listening (its loop ended) or stdin failed: either way, nothing to read for.
            log.debug("stopped reading stdin: %s: %s", type(exc).__name__, exc)

    threading.Thread(target=pump, name="wolfmem-stdin", daemon=True).start()
    async with receive:
        async for line in receive:
            yield line
    log.info("stdin closed: the client is gone; stopping")


def _read_lines(fd: int) -> Iterator[str]:
    """Newline-separated lines from a file descriptor, decoded as UTF-8; os.read takes no lock to strand."""
    partial = bytearray()
    while chunk := os.read(fd, CHUNK_BYTES):
        *complete, rest = chunk.split(b"\n")
        for piece in complete:
            partial += piece
            yield partial.decode("utf-8", errors="replace")
            partial.clear()
        partial += rest
    if partial:
        yield partial.decode("utf-8", errors="replace")


async def stop_on_signals(serving: anyio.CancelScope) -> None:
    """Cancel `serving` on SIGINT or SIGTERM; a second signal exits at once."""
    try:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                name = signal.Signals(signum).name
                if serving.cancel_called:
                    log.warning("received %s again; exiting now", name)
                    os._exit(FORCED_EXIT)
                log.info("received %s; stopping (send it again to force)", name)
                serving.cancel()
    except NotImplementedError:
        # Windows has no signal handlers on the event loop; Ctrl+C raises KeyboardInterrupt instead.
        log.debug("signals are not supported here; Ctrl+C interrupts the server")
