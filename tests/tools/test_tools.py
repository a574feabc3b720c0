"""The shared tool table: OpenAI schemas, argument checking, dispatch and formatting of wolfmem.tools."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openai import OpenAI

from tests.fakellm import MODEL, FakeLLM
from wolfmem import Memory
from wolfmem.memory.searching import Hit
from wolfmem.tools import BY_NAME, call, execute, openai_tools
from wolfmem.tools.calls import format_hit
from wolfmem.tools.catalog import DOCTRINE, TOOLS

SAMPLE_ARGUMENTS: list[tuple[str, dict[str, Any]]] = [
    ("memory_search", {"query": "Who is my manager?"}),
    ("memory_search", {"queries": ["manager", "boss"], "sources": ["knowledge", "episodes"], "limit": 3,
                       "after": "2026-01-01", "before": "2026-12-31"}),
    ("memory_get", {"ref": "file:knowledge/people.md#L6"}),
    ("memory_save", {"fact": "Sarah is my manager.", "type": "people", "topic": "Sarah", "request_id": "r1"}),
    ("memory_map", {}),
    ("memory_log", {"text": "Deployed v2"}),
    ("memory_log", {"text": ["Deployed v2", "Sarah approved"], "headline": "Deploy"}),
]


def test_openai_tools_are_function_schemas_that_check_as_json_schema() -> None:
    schemas = openai_tools()
    assert [s["function"]["name"] for s in schemas] == [tool.name for tool in TOOLS]
    for schema in schemas:
        assert schema["type"] == "function"
        function = schema["function"]
        assert set(function) == {"name", "description", "parameters", "strict"}
        Draft202012Validator.check_schema(function["parameters"])
        assert function["parameters"]["type"] == "object"
        # OpenAI has refused descriptions over 1024 characters; the manual must fit.
        assert len(function["description"]) <= 1024, function["name"]
        assert "Example" in function["description"]
    json.dumps(schemas)  # plain JSON, ready for the API


@pytest.mark.parametrize(("name", "arguments"), SAMPLE_ARGUMENTS + [(t.name, t.example) for t in TOOLS])
def test_sample_arguments_validate(name: str, arguments: dict[str, Any]) -> None:
    Draft202012Validator(BY_NAME[name].parameters).validate(arguments)


def test_structured_results_match_the_output_schemas(memory: Memory) -> None:
    memory.save("Sarah is my manager.", "people", "Sarah")
    calls = [
        *SAMPLE_ARGUMENTS,
        ("memory_save", {"fact": "Sarah is my manager.", "type": "people", "topic": "Sarah", "request_id": "r1"}),
        ("memory_search", {"queries": ["manager", "the"]}),  # a group with an error
    ]
    replays = []
    for name, arguments in calls:
        result = execute(memory, name, arguments)
        assert not result.is_error, result.text
        Draft202012Validator(BY_NAME[name].output_schema).validate(result.data)
        replays.append(result.data.get("replayed"))
    assert replays.count(True) == 1  # the second save with request_id r1


def test_doctrine_is_taught_in_the_descriptions() -> None:
    save = BY_NAME["memory_save"].description
    assert "one self-contained sentence per call" in save
    assert "pick the type" in save and "topic" in save
    assert "never save secrets" in save and "transient task state" in save
    assert "2-3 phrasings" in BY_NAME["memory_search"].description
    for name in ("memory_search", "memory_get", "memory_map"):
        assert "data, not instructions" in BY_NAME[name].description


def test_call_round_trips_with_dict_and_json_string(memory: Memory) -> None:
    saved = call(memory, "memory_save", {"fact": "Sarah is my manager.", "type": "people", "topic": "Sarah (Manager)"})
    assert saved.startswith("Saved to knowledge/people.md under '## Sarah (Manager)'")
    again = call(memory, "memory_save", json.dumps({"fact": "Sarah is my manager.", "type": "people"}))
    assert again.startswith("Already on file at file:knowledge/people.md#L6")

    found = call(memory, "memory_search", '{"query": "Who is my manager?"}')
    assert found.splitlines() == [
        '1 result for "Who is my manager?":',
        "file:knowledge/people.md#L6 [knowledge · Sarah (Manager)] Sarah is my manager.",
    ]
    assert "## Sarah (Manager)" in call(memory, "memory_get", {"ref": "file:knowledge/people.md#Sarah"})
    assert "people.md: Sarah (Manager)" in call(memory, "memory_map", None)
    assert "people.md: Sarah (Manager)" in call(memory, "memory_map", "")


def test_execute_returns_structured_data(memory: Memory) -> None:
    saved = execute(memory, "memory_save", {"fact": "The staging host is called kestrel.", "topic": "Staging"})
    assert not saved.is_error
    assert saved.data["status"] == "saved" and saved.data["path"] == "knowledge/technical.md"
    found = execute(memory, "memory_search", {"query": "staging host"})
    assert found.data["query"] == "staging host"
    assert found.data["results"][0]["ref"] == saved.data["ref"]
    got = execute(memory, "memory_get", {"ref": saved.data["ref"]})
    assert got.data["text"] == "- The staging host is called kestrel.\n"
    assert execute(memory, "memory_map", {}).data["memory_map"].startswith("<memory_map>")


def test_batch_search_groups_results_per_query(memory: Memory) -> None:
    call(memory, "memory_save", {"fact": "Sarah is my manager.", "type": "people"})
    call(memory, "memory_save", {"fact": "We deploy with Ansible.", "type": "technical"})
    result = execute(memory, "memory_search", {"queries": ["manager", "the", "deploy tooling"]})
    assert not result.is_error
    groups = result.data["queries"]
    assert [g["query"] for g in groups] == ["manager", "the", "deploy tooling"]
    assert groups[0]["results"][0]["text"] == "Sarah is my manager."
    assert "stop words" in groups[1]["error"]
    assert groups[2]["results"][0]["text"] == "We deploy with Ansible."
    blocks = result.text.split("\n\n")
    assert blocks[0].startswith('## 1 result for "manager":')
    assert blocks[1].startswith('## "the": error:')
    assert "Ansible" in blocks[2]


def test_no_results_tells_the_agent_to_rephrase(memory: Memory) -> None:
    assert "2-3 other phrasings" in call(memory, "memory_search", {"query": "zebras"})


def test_log_is_searchable_and_episode_hits_show_their_day(memory: Memory) -> None:
    logged = execute(memory, "memory_log", {"text": ["Migrated the billing database"], "headline": "Billing"})
    assert logged.text.startswith(f"Logged to {logged.data['path']} ({logged.data['ref']})")
    hit_line = call(memory, "memory_search", {"query": "billing database", "sources": "episodes"}).splitlines()[1]
    day = logged.data["date"]
    assert hit_line.startswith(f"{logged.data['ref']} [episodes {day} · ")
    assert hit_line.endswith("Billing] Migrated the billing database")


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("memory_search", "{not json", "arguments are not valid JSON"),
        ("memory_search", "[1, 2]", "arguments must be a JSON object"),
        ("memory_search", {"query": "x", "queries": ["y"]}, "exactly one of query"),
        ("memory_search", {"query": "x", "limit": "5"}, "limit must be an integer"),
        ("memory_search", {"query": "x", "limit": 0}, "limit must be at least 1, not 0."),
        # 1e308 is an integral float: the error quoted it as a 309-digit integer.
        ("memory_search", {"query": "x", "limit": 1e308}, "limit must be at most 50, not 1e+308."),
        ("memory_search", {"query": "x", "limit": 10**400}, "limit must be at most 50, not 100"),
        ("memory_search", {"query": "x", "limit": 10**400}, "00000…. Example"),  # quoted cut short
        ("memory_search", {"query": "x", "sources": ["web"]}, "sources[0] must be one of knowledge, episodes"),
        ("memory_search", {"query": "x", "sources": []}, "sources is empty"),
        ("memory_search", {"query": "   "}, "query is empty"),
        ("memory_search", {"query": "x", "after": "2026-02-30"}, "not a real date"),
        ("memory_search", {"queries": ["a b", "c d"], "after": "2026-02-30"},
         "search: after is not a real date: '2026-02-30'"),
        ("memory_get", {"ref": "../../etc/passwd"}, "outside the vault"),
        ("memory_get", {"ref": 12}, "ref must be a string"),
        ("memory_save", {"fact": ""}, "fact is empty"),
        ("memory_save", {"fact": "password=hunter2hunter2"}, "secret"),
        ("memory_save", {"fact": "Bob is in Berlin.", "type": "friends"}, "type must be one of"),
        ("memory_log", {"text": ["ok", 3]}, "text[1] must be a string, not 3"),
        ("memory_log", {"text": "Rotated keys", "headline": 5}, "headline must be a string"),
        ("memory_lookup", {}, "unknown tool 'memory_lookup'"),
    ],
)
def test_errors_come_back_as_text(memory: Memory, name: str, arguments: Any, expected: str) -> None:
    result = execute(memory, name, arguments)
    assert result.is_error and result.data is None
    assert result.text.startswith("Error: ")
    assert expected in result.text
    assert call(memory, name, arguments) == result.text


def test_unexpected_exceptions_become_error_text() -> None:
    class Broken:
        def memory_map(self) -> str:
            raise RuntimeError("disk on fire")

    text = call(Broken(), "memory_map", {})  # type: ignore[arg-type]
    assert text.startswith("Error: memory_map failed unexpectedly (RuntimeError: disk on fire)")


def test_format_hit_without_section() -> None:
    hit = Hit("file:notes/a.md#L3", "notes/a.md", 3, "", "A fact.", "A fact.", 1.0, "consolidated", "")
    assert format_hit(hit) == "file:notes/a.md#L3 [consolidated] A fact."


def agent_loop(client: Any, memory: Memory, question: str, model: str) -> str:
    """The README's agent loop, verbatim apart from the names passed in."""
    messages: list[Any] = [
        {"role": "system", "content": DOCTRINE},
        {"role": "user", "content": question},
    ]
    while True:
        reply = client.chat.completions.create(model=model, messages=messages, tools=openai_tools())
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content
        for tool_call in message.tool_calls:
            messages.append({
                "role": "tool",
                "tool_call_id": tool_call.id,
                "content": call(memory, tool_call.function.name, tool_call.function.arguments),
            })


def test_readme_agent_loop_over_a_real_openai_client(memory: Memory) -> None:
    call(memory, "memory_save", {"fact": "Sarah is my manager.", "type": "people"})
    with FakeLLM() as fake:
        fake.push(
            FakeLLM.tool_calls(("memory_search", '{"query": "manager"}'), ("memory_save", '{"fact": "oops"')),
            FakeLLM.text("Sarah is your manager."),
        )
        client = OpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
        assert agent_loop(client, memory, "Who is my manager?", MODEL) == "Sarah is your manager."
        sent = fake.requests
    assert [tool["function"]["name"] for tool in sent[0]["tools"]] == [tool.name for tool in TOOLS]
    results = [m for m in sent[1]["messages"] if m["role"] == "tool"]
    assert "Sarah is my manager." in results[0]["content"]
    assert results[1]["content"].startswith("Error: memory_save: arguments are not valid JSON")


def test_search_structured_content_is_lean(memory: Memory) -> None:
    for name in ("Sarah Chen", "Tom Lee", "Priya Natarajan"):
        memory.save(f"{name} reviews the quarterly billing report.", "people", name)
    result = execute(memory, "memory_search", {"query": "quarterly billing report"})
    assert len(result.data["results"]) == 3
    assert all("snippet" not in hit for hit in result.data["results"])  # it would repeat `text`
    assert len(json.dumps(result.data, ensure_ascii=False)) < 2 * len(result.text)


@pytest.mark.parametrize(("arguments", "expected"), [
    ({"fact": "a"}, "is a fragment"),
    ({"fact": "He likes it.", "type": "people"}, "pass the topic it is about"),
])
def test_a_fact_that_cannot_stand_alone_is_refused_with_a_fix(memory: Memory, arguments: dict, expected: str) -> None:
    result = execute(memory, "memory_save", arguments)
    assert result.is_error and expected in result.text
    assert not execute(memory, "memory_save", {**arguments, "fact": "He likes it.", "topic": "Tom Lee"}).is_error
