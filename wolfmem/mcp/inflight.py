"""The requests read from the client and not yet answered, so that EOF on stdin waits for their replies.

The SDK ends its loop at EOF and cancels every request still running, so `wolfmem mcp < requests.jsonl`
(or a client that writes its requests and closes stdin at once) got no reply to any call that had
not finished by then. Here each request passed to the SDK is owed a reply until one with its id goes
out; a request the client cancels is owed nothing (the SDK never answers one). At EOF the line reader
waits until nothing is owed, then ends, and only then does the SDK see EOF.
"""

from __future__ import annotations

import logging
from collections import Counter
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

# A listen request's reply is the stream itself: it lasts until the connection ends, so EOF cannot wait for it.
ENDS_WITH_THE_CONNECTION = frozenset({"subscriptions/listen"})
DRAIN_SECONDS = 120.0  # at EOF, the longest wait for replies (a write is bounded at 14 s, a search far less)


class InFlight:
    """The ids owed a reply (a multiset: a client may reuse an id), and a wait for none to be owed."""

    def __init__(self) -> None:
        self._owed: Counter[Any] = Counter()
        self._changed = anyio.Event()

    def read(self, message: types.JSONRPCMessage) -> None:
        """Note a message passed to the SDK: a request is owed its reply; a cancellation settles one."""
        if isinstance(message, types.JSONRPCRequest) and message.method not in ENDS_WITH_THE_CONNECTION:
            self.owe(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            self._settle((message.params or {}).get("requestId"))

    def owe(self, request_id: Any) -> None:
        """A reply to `request_id` is due (a screened-out line's error counts too, until it is sent)."""
        self._owed[request_id] += 1

    def sent(self, message: types.JSONRPCMessage) -> None:
        """Note a message written to the client: a reply settles its id."""
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._settle(message.id)

    def _settle(self, request_id: Any) -> None:
        if self._owed[request_id] > 0:
            self._owed[request_id] -= 1
            if not self._owed[request_id]:
                del self._owed[request_id]
            self._changed.set()
            self._changed = anyio.Event()

    @property
    def owed(self) -> int:
        """How many replies are still due."""
        return self._owed.total()

    async def drained(self) -> None:
        """Return once no reply is owed, or after DRAIN_SECONDS with a warning naming those still owed."""
        with anyio.move_on_after(DRAIN_SECONDS):
            while self._owed:
                await self._changed.wait()
            return
        log.warning("%d requests were still unanswered %.0f s after stdin closed (ids %s); stopping without them",
                    self.owed, DRAIN_SECONDS, ", ".join(map(repr, list(self._owed)[:10])))


class Replies:
    """The SDK's write stream, noting each reply in `inflight` once it is on its way to stdout."""

    def __init__(self, stream: Any, inflight: InFlight) -> None:
        self._stream = stream
        self._inflight = inflight

    async def send(self, item: SessionMessage, /) -> None:
        await self._stream.send(item)
        self._inflight.sent(item.message)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Replies:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()
