"""The agent tools' dispatch: checking a call's arguments against its tool's schema, running it, and its errors."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from wolfmem import limits
from wolfmem.cancellation import Cancelled
from wolfmem.errors import UsageError, WolfmemError, shown
from wolfmem.memory.facade import Memory
from wolfmem.tools.calls import ToolResult
from wolfmem.tools.catalog import TOOLS, Tool

log = logging.getLogger(__name__)


MAX_ARGUMENT_CHARS = limits.ARGUMENT_CHARS
ERROR_CHARS = limits.ERROR_CHARS

BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}
_VALIDATORS = {tool.name: Draft202012Validator(tool.parameters) for tool in TOOLS}


def openai_tools(strict: bool = True) -> list[dict[str, Any]]:
    """Every tool as an OpenAI function-calling schema, for `tools=`; strict (the default) sets `strict: true`."""
    return [tool.openai(strict) for tool in TOOLS]


def execute(memory: Memory, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolResult:
    """Run one tool call; every failure becomes an error result, and only a cancelled call raises (Cancelled)."""
    tool = BY_NAME.get(name) if isinstance(name, str) else None
    if tool is None:
        return _error(f"unknown tool {shown(name)}; the tools are: {', '.join(BY_NAME)}")
    try:
        args = parse_arguments(tool, arguments)
        return tool.run(memory, args)
    except Cancelled:
        raise  # not a failure to show the model: the caller stopped waiting for this call
    except WolfmemError as exc:
        return _error(f"{name}: {exc}")
    except Exception as exc:
        # The adapter's edge: a bug must not kill the conversation or the server.
        log.exception("unexpected error in %s", name)
        return _error(f"{name} failed unexpectedly ({type(exc).__name__}: {exc}); "
                      "try again, or report this as a wolfmem bug")


def call(memory: Memory, name: str, arguments: Mapping[str, Any] | str | None = None) -> str:
    """Run one tool call (arguments as a dict or a JSON string) and return the text for the model."""
    return execute(memory, name, arguments).text


def parse_arguments(tool: Tool, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
    """The call's arguments as a dict checked against the tool's schema, or a UsageError saying what to fix."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        args: Any = {}
    elif isinstance(arguments, str):
        if len(arguments) > MAX_ARGUMENT_CHARS:
            raise UsageError(
                f"arguments are {len(arguments):,} characters; at most {MAX_ARGUMENT_CHARS:,} — "
                f"pass an object like {json.dumps(tool.example)}"
            )
        try:
            args = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"arguments are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                f"pass an object like {json.dumps(tool.example)}"
            ) from None
        except RecursionError:
            raise UsageError(
                f"arguments are nested too deeply; pass an object like {json.dumps(tool.example)}") from None
        except ValueError:  # not a syntax error (caught above): int() refuses numbers over 4,300 digits
            raise UsageError(
                f"arguments hold a number too large to read; pass an object like {json.dumps(tool.example)}"
            ) from None
    else:
        args = arguments
    if not isinstance(args, Mapping):
        raise UsageError(f"arguments must be a JSON object like {json.dumps(tool.example)}, "
                         f"not {_JSON_NAMES.get(type(args), type(args).__name__)}")
    if not all(isinstance(key, str) for key in args):
        raise UsageError(f"argument names must be text, e.g. {json.dumps(tool.example)}")
    args = _forgive(tool, dict(args))
    for key, value in args.items():
        try:
            json.dumps(value, default=repr)
        except (ValueError, RecursionError):
            # The schema check would fail the same way, printing the value in its message.
            raise UsageError(
                f"{key} is too large or too deeply nested to be an argument (a number over 4,300 digits, "
                f"nesting hundreds deep, or a loop). Example: {json.dumps(tool.example)}"
            ) from None
    error = best_match(_VALIDATORS[tool.name].iter_errors(args))
    if error is not None:
        raise UsageError(f"{_describe(error, tool)}. Example: {json.dumps(tool.example)}")
    return args


_JSON_NAMES = {type(None): "null", list: "an array", str: "a string", int: "a number", float: "a number",
               bool: "a boolean"}


def _forgive(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    """Undo the harmless slips models make, so the schema only refuses what is really wrong."""
    required = set(tool.parameters.get("required", ()))
    # Strict function calling sends every optional argument, as null when unused.
    args = {key: value for key, value in args.items() if value is not None or key in required}
    if tool.name == "memory_search":
        if isinstance(args.get("sources"), str):
            args["sources"] = [args["sources"]]  # a lone source
        for key in ("after", "before"):
            if isinstance(args.get(key), str):
                args[key] = args[key].strip()
        limit = args.get("limit")
        if isinstance(limit, float) and limit.is_integer() and abs(limit) <= 2**53:
            args["limit"] = int(limit)  # JSON Schema already counts 5.0 as an integer (1e308 stays as sent)
    return args


def _describe(error: ValidationError, tool: Tool) -> str:
    """A validation error in the words an agent can act on."""
    where = ""
    for part in error.absolute_path:  # text[1], sources[0]
        where += f"[{part}]" if isinstance(part, int) else f"{'.' if where else ''}{part}"
    known = ", ".join(tool.parameters["properties"]) or "no arguments"
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        return f"missing required argument {missing[0]!r}"
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(tool.parameters["properties"]))
        return f"unexpected argument(s) {', '.join(map(repr, extra))}; {tool.name} takes: {known}"
    if error.validator == "enum":
        return f"{where} must be one of {', '.join(map(str, error.validator_value))}, not {shown(error.instance)}"
    if error.validator == "type":
        kind = error.validator_value
        return f"{where} must be {'an' if kind in ('integer', 'array', 'object') else 'a'} {kind}, " \
               f"not {json.dumps(error.instance, default=repr)}"
    if error.validator == "anyOf":
        return f"{where} must be text or a list of texts, not {json.dumps(error.instance, default=repr)}"
    if error.validator in ("minLength", "minItems"):
        return f"{where} is empty"
    if error.validator == "maxLength":
        name = next(part for part in error.absolute_path if isinstance(part, str))
        return limits.BY_ARGUMENT[name].message(len(error.instance), where)
    if error.validator == "maxItems":
        return f"{where} has {len(error.instance)} items; at most {error.validator_value} are allowed"
    if error.validator in ("minimum", "maximum"):
        bound = "at least" if error.validator == "minimum" else "at most"
        return f"{where} must be {bound} {error.validator_value}, not {shown(error.instance)}"
    if error.validator == "pattern":
        return f"{where} must be a date like 2026-11-29, not {shown(error.instance)}"
    return f"{where or 'arguments'}: {error.message}"


def _error(message: str) -> ToolResult:
    if len(message) > ERROR_CHARS:
        message = message[: ERROR_CHARS - 1] + "…"  # an error quoting a huge argument
    return ToolResult(f"Error: {message}", None, True)
