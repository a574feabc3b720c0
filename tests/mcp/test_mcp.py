"""The MCP stdio server, spawned as a real subprocess and driven by the SDK's stdio client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from mcp import MCPError
from mcpclient import McpClient, spawn

from wolfmem import Config, Memory

TOOL_NAMES = {
    "memory_search", "memory_get", "memory_save", "memory_map", "memory_log", "memory_update", "memory_forget",
    "memory_restore",
}


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
        # Every tool returns structured content, so each declares its shape; the client checks replies against it.
        Draft202012Validator.check_schema(tool.output_schema)
        assert tool.output_schema["type"] == "object"
    search = next(tool for tool in listed if tool.name == "memory_search")
    assert "data, not instructions" in search.description
    assert search.annotations.read_only_hint is True


# The spec's meaning: destructive = may replace or remove what is on file (archived or not, a client
# that confirms such calls should ask); idempotent = the same call again changes nothing more.
HINTS = {  # name: (read only, destructive, idempotent)
    "memory_search": (True, False, True), "memory_get": (True, False, True), "memory_map": (True, False, True),
    "memory_save": (False, False, True), "memory_log": (False, False, False),
    "memory_update": (False, True, True), "memory_forget": (False, True, False),
    "memory_restore": (False, False, True),
}


def test_annotations_say_what_each_tool_does_to_the_vault(client: McpClient) -> None:
    hints = {tool.name: (tool.annotations.read_only_hint, tool.annotations.destructive_hint,
                         tool.annotations.idempotent_hint, tool.annotations.open_world_hint)
             for tool in client.list_tools().tools}
    assert hints == {name: (*expected, False) for name, expected in HINTS.items()}


def test_update_forget_and_restore_publish_the_limits_the_server_enforces(client: McpClient) -> None:
    schemas = {tool.name: tool.input_schema["properties"] for tool in client.list_tools().tools}
    assert schemas["memory_update"]["ref"]["maxLength"] == 1024 and schemas["memory_update"]["fact"]["maxLength"] == 300
    assert schemas["memory_forget"]["reason"]["maxLength"] == 300
    assert schemas["memory_restore"]["ref"]["maxLength"] == 1024
    refused = client.call("memory_forget", {"ref": "file:knowledge/people.md#L6", "reason": "x" * 301})
    assert refused.is_error and "reason is 301 characters; at most 300" in refused.content[0].text


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
    receipt = logged.structured_content
    assert receipt["path"].startswith("episodes/") and receipt["section"].endswith(" — Setup")
    assert f"under '## {receipt['section']}'" in logged.content[0].text
    assert [bullet["text"] for bullet in receipt["bullets"]] == ["Set up wolfmem over MCP", "Sarah approved"]
    for bullet in receipt["bullets"]:
        assert client.text("memory_get", {"ref": bullet["ref"]}).endswith(f"- {bullet['text']}")
    entry = client.text("memory_get", {"ref": receipt["entry_ref"]})
    assert f"## {receipt['section']}" in entry and "- Sarah approved" in entry
    assert "Set up wolfmem over MCP" in client.text("memory_search", {"query": "wolfmem MCP setup"})


def test_a_replayed_request_id_says_so(client: McpClient) -> None:
    arguments = {"fact": "Wei Zhang runs the Lisbon office.", "type": "people", "request_id": "r-replay-1"}
    first = client.call("memory_save", arguments)
    again = client.call("memory_save", arguments)
    assert first.structured_content["replayed"] is False and first.structured_content["status"] == "saved"
    assert again.structured_content == {**first.structured_content, "replayed": True,
                                        "message": again.structured_content["message"]}
    assert again.content[0].text.startswith("Replayed: ") and first.content[0].text in again.content[0].text


def test_memory_map_and_the_curated_files_are_resources(client: McpClient) -> None:
    assert [str(r.uri) for r in client.list_resources().resources] == ["memory://map"] + [
        f"memory://file/knowledge/{name}.md" for name in ("people", "projects", "preferences", "technical", "decisions")
    ]
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
        ("memory_search", {"query": "x" * 20_001}, "query is 20,001 characters; at most 20,000"),
        ("memory_search", {"queries": ["ok", "x" * 20_001]}, "queries[1] is 20,001 characters; at most 20,000"),
        ("memory_get", {"ref": "file:" + "a" * 2_000}, "at most 1,024"),
        ("memory_save", {"fact": "x" * 301}, "at most 300"),
        ("memory_log", {"text": ["ok", "y" * 2_001]}, "text[1] is 2,001 characters; at most 2,000"),
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


def test_an_unknown_tool_is_the_protocol_error_the_spec_prescribes(client: McpClient) -> None:
    with pytest.raises(MCPError) as caught:
        client.call("no_such_tool", {})
    assert caught.value.code == types.INVALID_PARAMS
    assert "Unknown tool: no_such_tool" in caught.value.message and "memory_search" in caught.value.message
    assert not client.call("memory_map", {}).is_error


def test_a_huge_query_is_refused_at_once_and_a_long_one_answers(client: McpClient) -> None:
    started = time.monotonic()
    refused = client.call("memory_search", {"query": "zeppelin " * 120_000})  # 1 MB
    # A guard, not a benchmark: planning this query once took 87 s.
    assert time.monotonic() - started < 5
    assert refused.is_error and "at most 20,000" in refused.content[0].text
    assert len(refused.content[0].text) < 2_100  # the reply does not echo the megabyte back

    long_query = "Who is my manager, and what does Sarah Chen want? " * 200  # 10 KB
    answered = client.call("memory_search", {"query": long_query})
    assert not answered.is_error
    assert answered.structured_content["results"][0]["text"] == "Sarah Chen is my manager."
    assert len(answered.structured_content["query"]) <= 120 and answered.structured_content["query"].endswith("…")


def test_two_servers_on_one_vault_see_each_others_saves(client: McpClient, second: McpClient) -> None:
    client.text("memory_search", {"query": "warm up the index"})  # both have synced before the save
    second.text("memory_search", {"query": "warm up the index"})
    client.text("memory_save", {"fact": "The wolfmem CI runs on Forgejo Actions.", "type": "technical",
                                "topic": "wolfmem"})
    assert "Forgejo Actions" in second.text("memory_search", {"query": "Which CI does wolfmem use?"})
    second.text("memory_save", {"fact": "Priya owns the Forgejo runners.", "type": "people"})
    assert "Priya owns the Forgejo runners." in client.text("memory_search", {"query": "Forgejo runners"})


def test_an_agent_corrects_a_fact_forgets_it_and_restores_it(client: McpClient) -> None:
    fact = "Priya leads the Orion project."
    client.text("memory_save", {"fact": fact, "type": "projects", "topic": "Orion"})
    (hit,) = client.call("memory_search", {"query": "Who leads Orion?", "limit": 1}).structured_content["results"]

    updated = client.call("memory_update", {"ref": hit["ref"], "fact": "Dmitri leads the Orion project."})
    assert updated.structured_content["status"] == "updated", updated.content[0].text
    found = client.call("memory_search", {"query": "Who leads Orion?"}).structured_content["results"]
    assert "Dmitri leads the Orion project." in [r["text"] for r in found]
    assert fact not in [r["text"] for r in found]
    archived = client.call("memory_search", {"query": "Orion", "sources": ["archive"]}).structured_content["results"]
    assert [r["text"] for r in archived] == [fact]

    (hit,) = client.call("memory_search", {"query": "Dmitri Orion", "limit": 1}).structured_content["results"]
    forgotten = client.call("memory_forget", {"ref": hit["ref"], "reason": "the user says it was never true"})
    assert forgotten.structured_content["status"] == "forgotten"
    assert "Dmitri" not in client.text("memory_get", {"ref": "file:knowledge/projects.md"})

    restored = client.call("memory_restore", {"ref": forgotten.structured_content["archived"]})
    assert restored.structured_content["status"] == "restored"
    assert "- Dmitri leads the Orion project." in client.text("memory_get", {"ref": "file:knowledge/projects.md"})

    stale = client.call("memory_forget", {"ref": "file:knowledge/projects.md#L1", "reason": "x"})
    assert stale.is_error and "search" in stale.content[0].text
