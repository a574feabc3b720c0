"""Issue 24 over a real MCP client: a search answer's size is bounded, and long calls report progress."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcpclient import McpClient, spawn

from wolfmem import Config, Memory, limits

FACTS = 60


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpClient]:
    """A server over a vault whose episode lines are long (hand-pasted notes of ~1,900 characters each)."""
    root = tmp_path_factory.mktemp("bounds")
    Memory(root / "vault", Config(state_dir=str(root / "state"))).close()
    filler = " ".join(f"detail{k}" for k in range(220))
    lines = "\n".join(f"- Atlas launch note {n}: {filler}" for n in range(FACTS))
    (root / "vault" / "episodes" / "2026-11-20.md").write_text(f"# 2026-11-20\n\n## 09:00 — notes\n{lines}\n")
    with spawn(root / "vault", root / "state", root / "server.err") as mcp_client:
        yield mcp_client


def hit_chars(data: dict) -> int:
    groups = data.get("queries") or [data]
    return sum(len(hit["text"]) for group in groups for hit in group["results"])


def test_the_largest_search_answer_stays_within_its_budget(client: McpClient) -> None:
    queries = [f"Atlas launch note detail{k}" for k in range(8)]
    result = client.call("memory_search", {"queries": queries, "limit": 50})
    assert not result.is_error, result.content[0].text
    # Unbounded, this answer held 8 × 50 hits of ~1,900 characters (760 kB) twice over.
    assert hit_chars(result.structured_content) <= limits.SEARCH_ANSWER_CHARS
    assert len(result.content[0].text) <= limits.SEARCH_ANSWER_CHARS + 60 * 400  # cut hits + one ref line each
    assert "left out to keep the answer within" in result.content[0].text
    one = client.call("memory_search", {"query": "Atlas launch note", "limit": 50}).structured_content
    assert len(one["results"]) == 50 and hit_chars(one) <= limits.SEARCH_ANSWER_CHARS


def test_the_tool_description_states_the_budget(client: McpClient) -> None:
    search = next(tool for tool in client.list_tools().tools if tool.name == "memory_search")
    assert f"{limits.SEARCH_ANSWER_CHARS:,} characters" in search.description


def test_a_batch_search_reports_progress_for_each_phrasing(client: McpClient) -> None:
    queries = [f"Atlas note detail{k}" for k in range(4)]
    result, heard = client.call_with_progress("memory_search", {"queries": queries})
    assert not result.is_error
    messages = [message for _, _, message in heard]
    assert [m for m in messages if m and m.startswith("Phrasing")] == [f"Phrasing {n} of 4" for n in range(1, 5)]
    assert [done for done, _, _ in heard] == sorted({done for done, _, _ in heard})  # strictly increasing
    # A client that does not ask hears no progress.
    before = len(client.notifications)
    client.call("memory_search", {"queries": queries})
    assert not any("progress" in type(n).__name__.lower() or "progress" in str(n)[:80].lower()
                   for n in client.notifications[before:])
