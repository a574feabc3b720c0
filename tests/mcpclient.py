"""A real `wolfmem mcp` subprocess driven by the official MCP client over stdio, for plain (non-async) tests."""

from __future__ import annotations

import functools
import json
import os
import re
import select
import subprocess
import sys
import time
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

    def call_with_progress(
        self, name: str, arguments: dict[str, Any] | None = None
    ) -> tuple[types.CallToolResult, list[tuple[float, float | None, str | None]]]:
        """Call a tool asking for progress notifications; its result and the (progress, total, message) heard."""
        heard: list[tuple[float, float | None, str | None]] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            heard.append((done, total, message))

        result = self.portal.call(functools.partial(
            self.session.call_tool, name, arguments, read_timeout_seconds=30, progress_callback=progress))
        return result, heard

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


class RawServer:
    """A `wolfmem mcp` subprocess spoken to in raw lines: what a buggy or hostile client sends.

    Its stdout is read with select, not by a thread, so the test can close it as a killed client would.
    """

    def __init__(self, process: subprocess.Popen[bytes], errlog: Path) -> None:
        self.process = process
        self.errlog = errlog
        self._buffer = b""

    def _line(self, timeout: float) -> bytes | None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def send(self, line: bytes | str) -> None:
        """Write one line (a newline is added) to the server's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write((line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line) + b"\n")
        self.process.stdin.flush()

    def reply(self, timeout: float = 1.0) -> dict[str, Any]:
        """The next line the server writes, parsed; fails if none comes within `timeout` seconds."""
        line = self._line(timeout)
        if line is None:
            raise AssertionError(f"no reply within {timeout} s; server log:\n{self.log()}")
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None, id: int = 1) -> dict[str, Any]:
        """Send a well-formed request and return its reply, passing over notifications."""
        self.send(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, **({"params": params} if params else {})}))
        while "id" not in (message := self.reply(timeout=30)):
            pass
        return message

    def log(self) -> str:
        """What the server has written to stderr so far."""
        return self.errlog.read_text("utf-8", errors="replace")


@contextmanager
def spawn_raw(vault: Path, state_dir: Path, errlog_path: Path, initialize: bool = True) -> Iterator[RawServer]:
    """Start `wolfmem mcp --vault VAULT` with pipes for raw lines, initialised unless told not to."""
    env = {**os.environ, "WOLFMEM_STATE_DIR": str(state_dir), "XDG_CONFIG_HOME": str(state_dir / "no-config-home")}
    with open(errlog_path, "wb") as errlog:
        process = subprocess.Popen([sys.executable, "-m", "wolfmem", "mcp", "--vault", str(vault)], cwd=ROOT,
                                   env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog)
    server = RawServer(process, errlog_path)
    try:
        if initialize:
            server.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                          "clientInfo": {"name": "raw", "version": "0"}}, id=0)
            server.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        yield server
    finally:
        if process.poll() is None:
            process.stdin.close()  # type: ignore[union-attr]
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
