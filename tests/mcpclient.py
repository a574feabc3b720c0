"""A real `wolfmem mcp` subprocess driven by the official MCP client over stdio, for plain (non-async) tests."""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Future
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]


class McpClient:
    """A synchronous handle on one spawned server: calls, the notifications it sent, and its stderr log."""

    def __init__(self, portal: BlockingPortal, session: ClientSession, errlog: Path,
                 notifications: list[Any]) -> None:
        self.portal = portal
        self.session = session
        self.errlog = errlog
        self.notifications = notifications

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        """Call a tool and return its result (errors included)."""
        return self.portal.call(functools.partial(self.session.call_tool, name, arguments, read_timeout_seconds=30))

    def call_soon(self, name: str, arguments: dict[str, Any] | None = None) -> Future[types.CallToolResult]:
        """Send a tool call without waiting; cancelling the future cancels the request, as a client does."""
        return self.portal.start_task_soon(functools.partial(self.session.call_tool, name, arguments))

    def text(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """Call a tool that must succeed and return its text."""
        result = self.call(name, arguments)
        assert not result.is_error, result.content[0].text
        return result.content[0].text

    def log(self) -> str:
        """What the server has written to stderr so far."""
        return self.errlog.read_text("utf-8", errors="replace")

    @property
    def pid(self) -> int:
        """The server's process id, from the line it logs on start."""
        return int(re.search(r"\(pid (\d+)\)", self.log()).group(1))

    def __getattr__(self, method: str) -> Any:
        """Any other session method, run in the portal: client.list_tools(), client.read_resource(uri)."""
        return lambda *args, **kwargs: self.portal.call(functools.partial(getattr(self.session, method), *args,
                                                                          **kwargs))


@asynccontextmanager
async def _session(
    params: StdioServerParameters, errlog: Any, notifications: list[Any]
) -> AsyncIterator[ClientSession]:
    async def keep(message: Any) -> None:
        notifications.append(message)

    async with (
        stdio_client(params, errlog=errlog) as (read_stream, write_stream),
        ClientSession(read_stream, write_stream, read_timeout_seconds=30, message_handler=keep) as session,
    ):
        await session.initialize()
        yield session


@contextmanager
def spawn(vault: Path, state_dir: Path, errlog_path: Path) -> Iterator[McpClient]:
    """Start `wolfmem mcp --vault VAULT` with isolated state and connect a client."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "wolfmem", "mcp", "--vault", str(vault)],
        env={"WOLFMEM_STATE_DIR": str(state_dir), "XDG_CONFIG_HOME": str(state_dir / "no-config-home")},
        cwd=str(ROOT),
    )
    notifications: list[Any] = []
    with (
        open(errlog_path, "w") as errlog,
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_session(params, errlog, notifications)) as session,
    ):
        yield McpClient(portal, session, errlog_path, notifications)
