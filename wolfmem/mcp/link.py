"""What the MCP server sends a client outside any request: wolfmem's warnings, and resource updates.

Both start on other threads (a Memory call logging a warning, the vault watcher seeing an edit)
and must reach the client from the server's event loop, without ever blocking those threads.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from anyio.from_thread import BlockingPortal
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated

from wolfmem import limits
from wolfmem.mcp.resources import Subscriptions

log = logging.getLogger(__name__)

# Edits come in bursts (an editor writes a temp file, renames it, touches metadata): one look after
# the burst tells whether a subscribed resource changed.
SETTLE_SECONDS = 0.2
# RFC 5424 severities as MCP names them, on Python's logging scale.
LEVELS: dict[types.LoggingLevel, int] = {
    "debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO + 5, "warning": logging.WARNING,
    "error": logging.ERROR, "critical": logging.CRITICAL, "alert": logging.CRITICAL + 5,
    "emergency": logging.CRITICAL + 10,
}


def mcp_level(levelno: int) -> types.LoggingLevel:
    """The MCP level of a Python log level: the most severe one it reaches."""
    reached = [name for name, number in LEVELS.items() if number <= levelno]
    return reached[-1] if reached else "debug"


class ClientLink(logging.Handler):
    """The server's channel to its client between requests: forwards log records and resource updates."""

    def __init__(self, subscriptions: Subscriptions) -> None:
        # 2026-07-28 clients hear of updates on their subscriptions/listen streams, fed by this bus.
        self.bus = InMemorySubscriptionBus()
        # Until the client sets a level, warnings and worse reach it.
        super().__init__(logging.WARNING)
        self.subscriptions = subscriptions
        self._session: ServerSession | None = None
        self._portal: BlockingPortal | None = None
        self._tasks: TaskGroup | None = None
        self._loop_thread: int | None = None
        self._refresh_due = threading.Event()

    # -- wiring -----------------------------------------------------------------
    def start(self, portal: BlockingPortal, tasks: TaskGroup) -> None:
        """Start sending, from the event loop running `portal` and `tasks` (call it on that loop)."""
        self._portal, self._tasks, self._loop_thread = portal, tasks, threading.get_ident()

    def stop(self) -> None:
        """Stop sending; later log records and vault changes are dropped."""
        self._portal = self._tasks = None

    def attach(self, session: ServerSession) -> None:
        """Send to this client session (known once it is initialized or subscribes)."""
        self._session = session

    def set_level(self, level: types.LoggingLevel) -> None:
        """Forward records at this MCP level and above (logging/setLevel)."""
        self.setLevel(LEVELS[level])

    # -- log records ----------------------------------------------------------------
    def emit(self, record: logging.LogRecord) -> None:
        """Forward one wolfmem log record as a notifications/message (never its own, which could loop)."""
        session = self._session
        if session is None or record.name == __name__:
            return
        notification = types.LoggingMessageNotification(params=types.LoggingMessageNotificationParams(
            level=mcp_level(record.levelno), logger=record.name,
            data=limits.cut(record.getMessage(), limits.ERROR_CHARS),
        ))
        self._soon(session.send_notification, notification)

    # -- resource updates ---------------------------------------------------------------
    def vault_changed(self) -> None:
        """Called from the watcher thread on each file event: look for changed subscriptions once it settles."""
        if self._session is None or self._refresh_due.is_set():
            return
        self._refresh_due.set()
        self._soon(self._refresh)

    async def _refresh(self) -> None:
        await anyio.sleep(SETTLE_SECONDS)
        self._refresh_due.clear()  # an event from here on schedules another look
        session = self._session
        for uri in await anyio.to_thread.run_sync(self.subscriptions.changed):
            await self.bus.publish(ResourceUpdated(uri))
            if session is not None:
                await session.send_resource_updated(uri)

    # -- plumbing -------------------------------------------------------------------
    def _soon(self, send: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run `send(*args)` on the event loop soon, from any thread, without waiting for it."""
        portal, tasks = self._portal, self._tasks
        if portal is None or tasks is None:
            return
        try:
            if threading.get_ident() == self._loop_thread:
                tasks.start_soon(_contained, send, *args)
            else:
                portal.start_task_soon(_contained, send, *args)
        except RuntimeError:
            # The loop has stopped: the server is shutting down and nobody is listening.
            log.debug("dropped %s: the server is stopping", getattr(send, "__name__", send))


async def _contained(send: Callable[..., Awaitable[Any]], *args: Any) -> None:
    """Await a send; a client gone or a closed stream costs this one message, never the server."""
    try:
        await send(*args)
    except Exception as exc:
        log.debug("could not notify the client: %s: %s", type(exc).__name__, exc)
