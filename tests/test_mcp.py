"""The MCP stdio server, spawned as a real subprocess and driven by the SDK's stdio client."""

from __future__ import annotations

import functools
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, MCPError
from mcp.client.stdio import StdioServerParameters, stdio_client

from wolfmem import Config, Memory

ROOT = Path(__file__).resolve().parents[1]
TOOL_NAMES = {
    "memory_search", "memory_get", "memory_save", "memory_map", "memory_log", "memory_update", "memory_forget",
    "memory_restore",
}


class McpClient:
    """A synchronous handle on one spawned `wolfmem` MCP server, for plain (non-async) tests."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        """Call a tool and return its result (errors included)."""
        return self.portal.call(functools.partial(self.session.call_tool, name, arguments, read_timeout_seconds=30))

    def text(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """Call a tool that must succeed and return its text."""
        result = self.call(name, arguments)
        assert not result.is_error, result.content[0].text
        return result.content[0].text

    def __getattr__(self, method: str) -> Any:
        """Any other session method, run in the portal: client.list_tools(), client.read_resource(uri)."""
        return lambda *args: self.portal.call(getattr(self.session, method), *args)


@asynccontextmanager
async def _session(params: StdioServerParameters, errlog: Any) -> AsyncIterator[ClientSession]:
    async with stdio_client(params, errlog=errlog) as (read_stream, write_stream):
        async with ClientSession(read_stream, write_stream, read_timeout_seconds=30) as session:
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
    with open(errlog_path, "w") as errlog, start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(_session(params, errlog)) as session:
            yield McpClient(portal, session)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding one initialised vault and its state dir, shared by the module's servers."""
    root = tmp_path_factory.mktemp("mcp")
    Memory(root / "vault", Config(state_dir=str(root / "state"))).close()  # `wolfmem mcp --vault` needs a vault
    return root


@pytest.fixture(scope="module")
def client(home: Path) -> Iterator[McpClient]:
    with spawn(home / "vault", home / "state", home / "server1.err") as mcp_client:
        yield mcp_client


@pytest.fixture(scope="module")
def second(home: Path, client: McpClient) -> Iterator[McpClient]:
    """Another server process on the same vault and state dir."""
    with spawn(home / "vault", home / "state", home / "server2.err") as mcp_client:
        yield mcp_client


def test_lists_the_tools_with_manuals(client: McpClient) -> None:
    listed = client.list_tools().tools
    assert {tool.name for tool in listed} == TOOL_NAMES
    for tool in listed:
        assert tool.input_schema["type"] == "object"
        assert "Example" in tool.description
    search = next(tool for tool in listed if tool.name == "memory_search")
    assert "data, not instructions" in search.description
    assert search.annotations.read_only_hint is True


def test_save_then_search_get_map_and_log(client: McpClient) -> None:
    saved = client.call("memory_save", {"fact": "Sarah Chen is my manager.", "type": "people", "topic": "Sarah Chen"})
    assert not saved.is_error
    assert "knowledge/people.md" in saved.content[0].text
    assert saved.structured_content["status"] == "saved"
    ref = saved.structured_content["ref"]

    found = client.call("memory_search", {"query": "Who is my manager?"})
    assert f"{ref} [knowledge · Sarah Chen] Sarah Chen is my manager." in found.content[0].text
    assert found.structured_content["results"][0]["ref"] == ref

    batch = client.text("memory_search", {"queries": ["manager", "Sarah"], "sources": ["knowledge"], "limit": 3})
    assert batch.count(ref) == 2

    assert "- Sarah Chen is my manager." in client.text("memory_get", {"ref": ref})
    assert "people.md: Sarah Chen" in client.text("memory_map", {})

    logged = client.call("memory_log", {"text": ["Set up wolfmem over MCP", "Sarah approved"], "headline": "Setup"})
    assert logged.structured_content["path"].startswith("episodes/")
    assert "Set up wolfmem over MCP" in client.text("memory_search", {"query": "wolfmem MCP setup"})


def test_memory_map_is_a_resource(client: McpClient) -> None:
    assert [str(r.uri) for r in client.list_resources().resources] == ["memory://map"]
    contents = client.read_resource("memory://map").contents
    assert contents[0].text.startswith("<memory_map>")
    with pytest.raises(MCPError, match="memory://map"):
        client.read_resource("memory://nope")


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("memory_search", {}, "exactly one of query"),
        ("memory_search", {"query": 42}, "query must be a string"),
        ("memory_search", {"query": "x", "after": "last week"}, "date like 2026-11-29"),
        ("memory_search", {"queries": ["a"] * 9}, "at most 8"),
        ("memory_get", {}, "missing required argument 'ref'"),
        ("memory_get", {"ref": "../../etc/passwd"}, "outside the vault"),
        ("memory_get", {"ref": "file:knowledge/nope.md"}, "no file knowledge/nope.md"),
        ("memory_save", {}, "missing required argument 'fact'"),
        ("memory_save", {"fact": ["two", "facts"]}, "fact must be a string"),
        ("memory_save", {"fact": "The deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789"}, "secret"),
        ("memory_save", {"fact": "Bob lives in Berlin.", "type": "gossip"}, "type must be one of people"),
        ("memory_save", {"fact": "Bob lives in Berlin.", "topc": "Bob"}, "unexpected argument(s) 'topc'"),
        ("memory_map", {"verbose": True}, "unexpected argument"),
        ("memory_log", {}, "missing required argument 'text'"),
        ("memory_log", {"text": 7}, "text must be text or a list"),
        ("no_such_tool", {}, "unknown tool"),
    ],
)
def test_bad_arguments_are_tool_errors_and_the_server_survives(
    client: McpClient, name: str, arguments: dict[str, Any], expected: str
) -> None:
    result = client.call(name, arguments)
    assert result.is_error
    assert expected in result.content[0].text
    assert result.content[0].text.startswith("Error: ")
    assert not client.call("memory_map", {}).is_error


def test_two_servers_on_one_vault_see_each_others_saves(client: McpClient, second: McpClient) -> None:
    client.text("memory_search", {"query": "warm up the index"})  # both have synced before the save
    second.text("memory_search", {"query": "warm up the index"})
    client.text("memory_save", {"fact": "The wolfmem CI runs on Forgejo Actions.", "type": "technical",
                                "topic": "wolfmem"})
    assert "Forgejo Actions" in second.text("memory_search", {"query": "Which CI does wolfmem use?"})
    second.text("memory_save", {"fact": "Priya owns the Forgejo runners.", "type": "people"})
    assert "Priya owns the Forgejo runners." in client.text("memory_search", {"query": "Forgejo runners"})
