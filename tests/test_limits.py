"""The table of limits: every argument bounded on every adapter, replies cut to size, query planning linear."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import run_cli

from wolfmem import Memory, limits
from wolfmem.errors import UsageError
from wolfmem.search import query
from wolfmem.tools import BY_NAME, call, execute

FACT = "Sarah Chen reviews the zeppelin budget."


def test_the_tool_schemas_publish_the_table() -> None:
    published: dict[str, int] = {}
    for tool in BY_NAME.values():
        for name, spec in tool.parameters["properties"].items():
            for variant in spec.get("anyOf", [spec]):
                bound = variant.get("maxLength") or variant.get("items", {}).get("maxLength")
                if bound:
                    published[name] = bound
    assert published == {name: limit.chars for name, limit in limits.BY_ARGUMENT.items()}


def test_a_megabyte_query_is_refused_before_any_work(memory: Memory) -> None:
    started = time.monotonic()
    with pytest.raises(UsageError, match=r"query is 1,000,000 characters; at most 20,000 — ask a question"):
        memory.search("x" * 1_000_000)
    assert time.monotonic() - started < 5  # a guard against planning it, which once took 87 s


def test_a_query_at_the_limit_answers(memory: Memory) -> None:
    memory.save(FACT, "people", "Sarah Chen")
    long_query = ("zeppelin budget review " * 1_000)[: limits.QUERY.chars]
    assert memory.search(long_query)[0].text == FACT


def test_planning_searches_only_the_rarest_terms_a_fact_holds(memory: Memory) -> None:
    memory.save(FACT, "people", "Sarah Chen")
    memory.sync()
    # Hundreds of distinct words no fact holds, and the one rare word that finds the fact.
    text = " ".join(f"qx{n}word" for n in range(500)) + " zeppelin"
    planned = query.plan(memory.index, text)
    assert len(planned.searched) == query.MAX_SEARCHED_TERMS
    assert "zeppelin" in planned.searched
    assert memory.search(text)[0].text == FACT


def test_a_short_query_plans_every_term_as_before(memory: Memory) -> None:
    memory.save(FACT, "people", "Sarah Chen")
    searched = query.plan(memory.index, "Who reviews the zeppelin budget?").searched
    assert set(searched) == {"review", "zeppelin", "budget"}


def test_a_long_line_comes_back_cut_from_search_and_whole_from_get(memory: Memory, vault: Path) -> None:
    line = "The zeppelin manifest lists " + ", ".join(f"crate {n}" for n in range(800)) + "."
    (vault / "knowledge" / "manifest.md").write_text(f"# Manifest\n\n- {line}\n", "utf-8")
    [hit] = memory.search("zeppelin manifest")
    assert len(hit.text) == limits.HIT_TEXT_CHARS and hit.text.endswith("…")
    assert memory.get(hit.ref).text == f"- {line}\n"


@pytest.mark.parametrize(
    ("text", "headline", "expected"),
    [
        ("x" * 2_001, None, "text is 2,001 characters; at most 2,000"),
        (["fine", "y" * 2_001], None, r"text\[1\] is 2,001 characters"),
        ("fine", "h" * 1_001, "headline is 1,001 characters; at most 1,000"),
    ],
)
def test_an_over_long_episode_is_refused_and_nothing_is_written(
    memory: Memory, vault: Path, text: str | list[str], headline: str | None, expected: str
) -> None:
    with pytest.raises(UsageError, match=expected):
        memory.log_episode(text, headline)
    assert not list((vault / "episodes").glob("*.md"))


def test_a_ref_over_the_limit_says_the_limit(memory: Memory) -> None:
    with pytest.raises(UsageError, match="ref is 1,025 characters; at most 1,024"):
        memory.get("file:" + "a" * 1_020)


def test_the_openai_path_refuses_with_the_same_message(memory: Memory) -> None:
    reply = call(memory, "memory_search", json.dumps({"query": "zeppelin " * 3_000}))
    assert reply.startswith("Error: memory_search: query is 27,000 characters; at most 20,000")
    batch = execute(memory, "memory_search", {"queries": ["zeppelin", "y" * 30_000]})
    assert batch.is_error and "queries[1] is 30,000 characters" in batch.text


def test_the_echo_of_a_query_is_cut(memory: Memory) -> None:
    memory.save(FACT, "people", "Sarah Chen")
    result = execute(memory, "memory_search", {"query": "zeppelin " * 1_000})
    assert len(result.data["query"]) == limits.ECHO_CHARS
    assert len(result.text) < 1_000


def test_the_cli_refuses_with_the_same_message(vault: Path) -> None:
    result = run_cli("search", "zeppelin " * 3_000, "--vault", str(vault))
    assert result.returncode == 2
    assert "query is 27,000 characters; at most 20,000" in result.stderr
