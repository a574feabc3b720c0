"""The process side of `wolfmem mcp`: stdin read so that it never pins the process, and stopping on signals.

The SDK reads stdin in a worker thread that the interpreter joins at exit, so a server told to
stop kept running until the client closed stdin. Here a daemon thread reads it, and SIGINT or
SIGTERM cancels the serving scope: calls in flight stop at their next checkpoint, or finish a
write they have begun, and the process exits. EOF instead lets every call read before it finish and
be answered (inflight.py), as `wolfmem mcp < requests.jsonl` needs.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from wolfmem.mcp import wire
from wolfmem.mcp.inflight import InFlight

log = logging.getLogger(__name__)

CHUNK_BYTES = 1 << 16
# The longest line read: the largest tool call (8 queries of 20,000 characters, each \uXXXX-escaped) is
# about 1 MB. A longer line is not held in memory (a 100 MB one cost 600 MB to parse); its start and end
# are kept to find its id, and it is answered with an error.
MAX_LINE_BYTES = 8 << 20
KEPT_BYTES = 4096
FORCED_EXIT = 130


async def stdin_lines(answers: MemoryObjectSendStream[SessionMessage], inflight: InFlight,
                      fd: int = 0) -> AsyncIterator[str]:
    """The lines of `fd` (stdin) the SDK can read, read by a daemon thread the interpreter does not wait for.

    Every other line is screened out (wire.screen): its errors go to `answers`, and it is logged.
    At EOF the lines end only once every request read has had its reply (`inflight`).
    """
    send, receive = anyio.create_memory_object_stream[str | Oversized](1)
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
    async with receive, answers:
        async for line in receive:
            if isinstance(line, Oversized):
                screened = wire.oversized(line.head, line.tail, line.size, MAX_LINE_BYTES)
                line = line.head
            else:
                screened = wire.screen(line)
            if screened.line is not None and screened.message is not None:
                inflight.read(screened.message)
                yield screened.line
                continue
            if screened.problem is None:
                continue  # a blank line
            for reply in screened.replies:
                inflight.owe(reply.id)
                await answers.send(SessionMessage(reply))
            answered = f"answered id {', '.join(map(json.dumps, screened.ids))} with an error" if screened.ids \
                else "it has no id to answer"
            log.warning("refused a line from the client (%s): %s; %s", screened.problem, wire.quote(line), answered)
        if not inflight.owed:
            log.info("stdin closed: the client is gone; stopping")
        else:
            owed = inflight.owed
            log.info("stdin closed: answering the %s read before it, then stopping",
                     "request" if owed == 1 else f"{owed} requests")
            await inflight.drained()


@dataclass(frozen=True)
class Oversized:
    """A line over MAX_LINE_BYTES: its first and last KEPT_BYTES, and its length."""

    head: str
    tail: str
    size: int


class _Line:
    """The line being read: whole up to MAX_LINE_BYTES, past that only its start, its end and its length."""

    def __init__(self) -> None:
        self.kept = bytearray()
        self.tail = b""
        self.size = 0

    def add(self, piece: bytes) -> None:
        self.size += len(piece)
        if self.size <= MAX_LINE_BYTES:
            self.kept += piece
        else:
            del self.kept[KEPT_BYTES:]
        self.tail = (self.tail + piece)[-KEPT_BYTES:]

    def take(self) -> str | Oversized:
        """The line read so far, and a fresh start for the next one."""
        if self.size <= MAX_LINE_BYTES:
            line: str | Oversized = self.kept.decode("utf-8", errors="replace")
        else:
            line = Oversized(self.kept.decode("utf-8", errors="ignore"), self.tail.decode("utf-8", errors="ignore"),
                             self.size)
        self.kept, self.tail, self.size = bytearray(), b"", 0
        return line


def _read_lines(fd: int) -> Iterator[str | Oversized]:
    """Newline-separated lines from a file descriptor, decoded as UTF-8; os.read takes no lock to strand."""
    partial = _Line()
    while chunk := os.read(fd, CHUNK_BYTES):
        *complete, rest = chunk.split(b"\n")
        for piece in complete:
            partial.add(piece)
            yield partial.take()
        partial.add(rest)
    if partial.size:
        yield partial.take()


async def answer(answers: MemoryObjectReceiveStream[SessionMessage], write_stream: Any) -> None:
    """Send the screened-out lines' errors to the client, beside the SDK's own replies."""
    async with answers:
        async for message in answers:
            await write_stream.send(message)


async def stop_on_signals(serving: anyio.CancelScope, heard: list[int]) -> None:
    """Cancel `serving` on SIGINT or SIGTERM, noting it in `heard`; a second signal exits at once."""
    try:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                heard.append(signum)
                name = signal.Signals(signum).name
                if serving.cancel_called:
                    log.warning("received %s again; exiting now", name)
                    os._exit(FORCED_EXIT)
                log.info("received %s; stopping (send it again to force)", name)
                serving.cancel()
    except NotImplementedError:
        # Windows has no signal handlers on the event loop; Ctrl+C raises KeyboardInterrupt instead.
        log.debug("signals are not supported here; Ctrl+C interrupts the server")
