"""OpenAI strict function calling: the openai package's own checks, and a strict openai-agents agent per tool."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openai import OpenAI
from openai.lib._parsing._completions import validate_input_tools
from openai.lib._pydantic import _ensure_strict_json_schema

from tests.fakellm import MODEL, FakeLLM
from wolfmem import Memory
from wolfmem.tools import BY_NAME, call, execute, openai_tools
from wolfmem.tools.catalog import TOOLS

# What a strict model sends: every argument, null for the ones it does not use.
STRICT_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("memory_search", {"query": "Who is my manager?", "queries": None, "sources": None, "after": None,
                       "before": None, "limit": None}),
    ("memory_search", {"query": None, "queries": ["manager", "cello"], "sources": ["knowledge"], "after": None,
                       "before": None, "limit": 3}),
    ("memory_get", {"ref": "file:knowledge/people.md#L6"}),
    ("memory_save", {"fact": "Priya Natarajan runs the data team.", "type": "people", "topic": None,
                     "request_id": None}),
    ("memory_map", {}),
    ("memory_log", {"text": ["Deployed v2", "Sarah approved"], "headline": None}),
]


def test_every_tool_is_strict_and_a_fixed_point_of_the_openai_strict_conversion() -> None:
    tools = openai_tools()
    assert validate_input_tools(tools) == tools  # raises "... is not strict" otherwise
    for tool in tools:
        parameters = tool["function"]["parameters"]
        # The openai package's own conversion changes nothing: the schema is strict as published.
        assert _ensure_strict_json_schema(copy.deepcopy(parameters), path=(), root=parameters) == parameters
        assert parameters["required"] == list(parameters["properties"])
        assert "minLength" not in json.dumps(parameters) and "maxLength" not in json.dumps(parameters)
    with pytest.raises(ValueError, match="memory_search` is not strict"):
        validate_input_tools(openai_tools(strict=False))


# The keywords OpenAI's strict mode takes (its Structured Outputs "supported schemas"); any other
# (default, minLength, format, oneOf, allOf, uniqueItems, patternProperties, ...) fails the request.
STRICT_KEYWORDS = {"type", "description", "properties", "required", "additionalProperties", "items", "anyOf",
                   "enum", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                   "multipleOf", "minItems", "maxItems"}


def _subschemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """`schema` and every schema inside it (property maps and lists walked through, not yielded)."""
    yield schema
    for key, value in schema.items():
        children = value.values() if key == "properties" else value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, dict):
                yield from _subschemas(child)


@pytest.mark.parametrize("tool", openai_tools(), ids=lambda tool: tool["function"]["name"])
def test_every_subschema_uses_only_what_strict_mode_takes(tool: dict[str, Any]) -> None:
    parameters = tool["function"]["parameters"]
    assert parameters["type"] == "object" and "anyOf" not in parameters  # the root must be a plain object
    for subschema in _subschemas(parameters):
        assert set(subschema) <= STRICT_KEYWORDS, set(subschema) - STRICT_KEYWORDS
        if subschema.get("type") == "object":
            assert subschema["additionalProperties"] is False
            assert subschema["required"] == list(subschema["properties"])


def test_the_limits_strict_mode_drops_are_said_in_words_and_still_enforced(memory: Memory) -> None:
    [search] = [t for t in openai_tools() if t["function"]["name"] == "memory_search"]
    assert "At most 20,000 characters." in search["function"]["parameters"]["properties"]["query"]["description"]
    [update] = [t for t in openai_tools() if t["function"]["name"] == "memory_update"]
    assert "At most 300 characters." in update["function"]["parameters"]["properties"]["fact"]["description"]
    result = execute(memory, "memory_save", {"fact": "Sarah " + "x" * 400 + ".", "type": None, "topic": None,
                                             "request_id": None})
    assert result.is_error and "at most 300" in result.text


@pytest.mark.parametrize(("name", "arguments"), STRICT_CALLS)
def test_strict_calls_validate_against_the_strict_schema_and_run(memory: Memory, name: str,
                                                                  arguments: dict[str, Any]) -> None:
    memory.save("Sarah Chen is my manager.", "people", "Sarah Chen")
    [tool] = [t for t in openai_tools() if t["function"]["name"] == name]
    Draft202012Validator(tool["function"]["parameters"]).validate(arguments)
    result = execute(memory, name, json.dumps(arguments))
    assert not result.is_error, result.text


@pytest.mark.parametrize("name", ["memory_update", "memory_forget"])
def test_strict_mode_need_not_invent_expected(memory: Memory, name: str) -> None:
    memory.save("Sarah Chen is my manager.", "people", "Sarah Chen")
    ref = execute(memory, "memory_search", {"query": "manager"}).data["results"][0]["ref"]
    extra = {"fact": "Tom Lee is my manager."} if name == "memory_update" else {"reason": "it was wrong"}
    result = execute(memory, name, json.dumps({"ref": ref, **extra, "expected": None}))
    assert not result.is_error, result.text


def test_chat_completions_parse_accepts_the_tools_and_parses_the_arguments() -> None:
    arguments = json.dumps(STRICT_CALLS[0][1])
    with FakeLLM() as fake:
        fake.push(FakeLLM.tool_calls(("memory_search", arguments)))
        client = OpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
        completion = client.chat.completions.parse(model=MODEL, messages=[{"role": "user", "content": "hi"}],
                                                   tools=openai_tools())
        sent = fake.requests[0]["tools"]
    [tool_call] = completion.choices[0].message.tool_calls
    assert tool_call.function.parsed_arguments == STRICT_CALLS[0][1]
    assert all(tool["function"]["strict"] is True for tool in sent)


def _last_tool_output(request: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(request["messages"]) if m["role"] == "tool")


def _ref(pattern: str) -> Any:
    """The first ref matching `pattern` in the last tool output the agent sent back."""

    def find(request: dict[str, Any]) -> str:
        return re.search(pattern, _last_tool_output(request)).group(0)

    return find


def test_a_strict_openai_agents_agent_calls_every_tool(memory: Memory) -> None:
    agents = pytest.importorskip("agents")
    from agents.strict_schema import ensure_strict_json_schema
    from openai import AsyncOpenAI

    memory.save("Sarah Chen is my manager.", "people", "Sarah Chen")
    memory.save("Tom Lee plays the cello.", "people", "Tom Lee")
    outputs: list[tuple[str, str]] = []

    def function_tool(schema: dict[str, Any]) -> Any:
        function = schema["function"]

        async def invoke(context: Any, arguments: str) -> str:
            text = call(memory, function["name"], arguments)
            outputs.append((function["name"], text))
            return text

        # strict_json_schema=True runs agents' own strict conversion over the schema.
        return agents.FunctionTool(name=function["name"], description=function["description"],
                                   params_json_schema=function["parameters"], on_invoke_tool=invoke,
                                   strict_json_schema=True)

    tools = [function_tool(schema) for schema in openai_tools()]
    for tool, schema in zip(tools, openai_tools(), strict=True):
        assert tool.params_json_schema == schema["function"]["parameters"]
        assert ensure_strict_json_schema(copy.deepcopy(tool.params_json_schema)) == tool.params_json_schema

    def tool_call(name: str, **arguments: Any) -> Any:
        def reply(request: dict[str, Any]) -> Any:
            resolved = {key: value(request) if callable(value) else value for key, value in arguments.items()}
            return FakeLLM.tool_calls((name, json.dumps(resolved)))

        return reply

    with FakeLLM() as fake:
        fake.push(
            tool_call("memory_map"),
            tool_call("memory_search", query=None, queries=["manager", "cello"], sources=["knowledge"], after=None,
                      before=None, limit=None),
            tool_call("memory_get", ref=_ref(r"file:knowledge/people\.md#L\d+")),
            tool_call("memory_save", fact="Priya Natarajan runs the data team.", type="people",
                      topic="Priya Natarajan", request_id=None),
            tool_call("memory_log", text="Met Priya about the data team", headline=None),
            tool_call("memory_search", query="Sarah Chen manager", queries=None, sources=None, after=None,
                      before=None, limit=1),
            tool_call("memory_update", ref=_ref(r"file:knowledge/people\.md#L\d+"),
                      fact="Sarah Chen is my skip-level manager.", expected=None),
            tool_call("memory_search", query="Tom Lee cello", queries=None, sources=None, after=None,
                      before=None, limit=1),
            tool_call("memory_forget", ref=_ref(r"file:knowledge/people\.md#L\d+"), reason="the user says so",
                      expected=None),
            tool_call("memory_restore", ref=_ref(r"file:consolidated/archive-[\d-]+\.md#L\d+")),
            FakeLLM.text("Done."),
        )
        client = AsyncOpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
        agent = agents.Agent(name="memory", instructions="Use memory.", tools=tools,
                             model=agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client))
        result = agents.Runner.run_sync(agent, "Tidy my notes.", max_turns=20,
                                        run_config=agents.RunConfig(tracing_disabled=True))
        sent = fake.requests

    assert result.final_output == "Done."
    assert sorted({name for name, _ in outputs}) == sorted(BY_NAME)
    for name, text in outputs:
        assert not text.startswith("Error"), (name, text)
    # Every call the agent made fits the strict schema it published.
    published = {tool["function"]["name"]: tool["function"] for tool in sent[0]["tools"]}
    assert all(function["strict"] is True for function in published.values())
    assert set(published) == {tool.name for tool in TOOLS}
    for request in sent[1:]:
        for message in request["messages"]:
            for made in message.get("tool_calls") or []:
                schema = published[made["function"]["name"]]["parameters"]
                Draft202012Validator(schema).validate(json.loads(made["function"]["arguments"]))
    assert "Sarah Chen is my skip-level manager." in memory.get("file:knowledge/people.md").text
    assert "Tom Lee plays the cello." in memory.get("file:knowledge/people.md").text  # forgotten, then restored
