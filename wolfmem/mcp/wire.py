"""Each line a client sends, screened before the SDK sees it: a malformed line with an id gets its JSON-RPC error.

The SDK drops a line it cannot read as one JSON-RPC 2.0 message without a word, so a client that
sent half an emoji (a lone UTF-16 surrogate, as a JavaScript string slice makes), a batch,
`"jsonrpc": "1.0"`, array params, a null or object id, nesting a few hundred deep, or a cut-off
line waited out its timeout. The rule here: a line the SDK would accept passes unchanged; any other
line that has an id is answered with -32700 (not readable JSON) or -32600 (JSON, but not a valid
request), echoing the id when it is a string or an integer and null otherwise; a line without an id
(a notification, a reply, noise) cannot be answered, and is logged.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from wolfmem import limits

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
QUOTE_CHARS = 80  # how much of a bad line a log record quotes

# Strings and brackets: enough to find a top-level "id" in a line too broken or too deep to parse.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]')
_COLON = re.compile(r"\s*:")
_ID_VALUE = re.compile(r'\s*:\s*(-?\d+(?![\d.eE])|"(?:[^"\\]|\\.)*")')
_LAST_ID = re.compile(r'"id"\s*:\s*(-?\d{1,30}|"(?:[^"\\]|\\.){0,200}")\s*}\s*$')  # an id the line ends with
_NO_ID = object()  # the line has no "id" at all (None is "id": null, or one that cannot be read)


@dataclass(frozen=True)
class Screened:
    """What to do with one line: pass it on, answer it with errors, and what to log."""

    line: str | None = None  # the line for the SDK, unchanged
    message: types.JSONRPCMessage | None = None  # the line as the SDK reads it, when passed on
    replies: tuple[types.JSONRPCError, ...] = ()
    problem: str | None = None  # why the line is not passed on
    ids: tuple[Any, ...] = ()  # the ids answered, for the log


def screen(line: str) -> Screened:
    """The verdict on one line from the client."""
    if not line.strip():
        return Screened()
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return _refuse(line, exc)
    if isinstance(message, types.JSONRPCNotification) and _raw_id(line) is not _NO_ID:
        # The SDK reads a request whose id is null, an object or a fraction as a notification,
        # and a notification gets no reply: the client would wait for ever.
        return _answer(INVALID_REQUEST, "the id must be a string or an integer; a notification has no id at all",
                       [None])
    return Screened(line=line, message=message)


def oversized(head: str, tail: str, size: int, cap: int) -> Screened:
    """The verdict on a line over `cap` bytes, of which only its start and end were kept: an error for its id."""
    found = _raw_id(head)
    if found is _NO_ID and (last := _LAST_ID.search(tail)) is not None:
        found = json.loads(last.group(1))
    return _answer(INVALID_REQUEST, f"the line is {size:,} bytes; at most {cap:,} are read (no tool argument "
                                    "needs more): send less", [found])


def _refuse(line: str, invalid: ValidationError) -> Screened:
    """The errors a line the SDK cannot take deserves, and what to log about it."""
    try:
        message = json.loads(line)
    except json.JSONDecodeError as exc:
        return _answer(PARSE_ERROR, f"not valid JSON ({exc.msg} at column {exc.colno})", [_raw_id(line)])
    except RecursionError:
        return _answer(PARSE_ERROR, "nested too deeply to read", [_raw_id(line)])
    except ValueError:  # int() refuses numbers over 4,300 digits
        return _answer(PARSE_ERROR, "holds a number too long to read", [_raw_id(line)])
    if isinstance(message, list):
        ids = [item["id"] if "id" in item and _is_request(item) else _NO_ID for item in message
               if isinstance(item, dict)]
        return _answer(INVALID_REQUEST, "a JSON-RPC batch, which MCP does not take (the 2025-06-18 revision "
                                        "removed batching): send each message on a line of its own", ids)
    if not isinstance(message, dict):
        return _answer(INVALID_REQUEST, "not a JSON-RPC message (a JSON object)", [])
    if not _is_request(message):
        return _answer(INVALID_REQUEST, f"not a valid notification or reply ({_first_error(invalid)})", [])
    return _answer(*_request_problem(message, invalid), [message.get("id", _NO_ID)])


def _is_request(message: dict[str, Any]) -> bool:
    """A request or notification, which can be answered; a reply (result or error, no method) cannot."""
    return "method" in message or not ({"result", "error"} & set(message))


def _request_problem(message: dict[str, Any], invalid: ValidationError) -> tuple[int, str]:
    """What is wrong with a request that parses as JSON but that the SDK refuses."""
    if message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, f'jsonrpc must be "2.0", not {json.dumps(message.get("jsonrpc"))}'
    if "id" in message and not _valid_id(message["id"]):
        return INVALID_REQUEST, ("the id must be a string or an integer, not "
                                 f"{_json_name(message['id'])}; a notification has no id at all")
    if "params" in message and not isinstance(message["params"], dict):
        return INVALID_REQUEST, f"params must be an object, not {_json_name(message['params'])}"
    if not isinstance(message.get("method"), str):
        return INVALID_REQUEST, "method must be a string naming the request, e.g. \"tools/list\""
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        half = exc.object[exc.start:exc.end].encode("utf-16-be", "surrogatepass").hex()
        return PARSE_ERROR, (f"a string holds a lone UTF-16 surrogate (\\u{half}), half a character, as a "
                             "JavaScript string slice makes; send whole characters")
    except (ValueError, RecursionError):
        pass  # a huge number or deep nesting: the SDK's reason below says which
    return PARSE_ERROR if _is_parse_error(invalid) else INVALID_REQUEST, _first_error(invalid)


def _answer(code: int, problem: str, ids: list[Any]) -> Screened:
    """Errors for the ids that can be answered (null for an unreadable one), and the problem to log."""
    answered = tuple(None if not _valid_id(item) else item for item in ids if item is not _NO_ID)
    replies = tuple(
        types.JSONRPCError(jsonrpc="2.0", id=item,
                           error=types.ErrorData(code=code, message=f"Invalid message: {problem}"))
        for item in answered
    )
    return Screened(replies=replies, problem=problem, ids=answered)


def _raw_id(line: str) -> Any:
    """The top-level id of a line that does not parse, found by scanning its strings and brackets."""
    depth = 0
    for token in _TOKEN.finditer(line):
        text = token.group()
        if text in "{[":
            depth += 1
        elif text in "}]":
            depth -= 1
        elif depth == 1 and text == '"id"' and _COLON.match(line, token.end()):
            value = _ID_VALUE.match(line, token.end())
            if value is None:
                return None  # an id, but not one that can be echoed
            try:
                return json.loads(value.group(1))
            except ValueError:  # an integer id over 4,300 digits
                return None
    return _NO_ID


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _is_parse_error(invalid: ValidationError) -> bool:
    return any(error["type"] == "json_invalid" for error in invalid.errors())


def _first_error(invalid: ValidationError) -> str:
    error = invalid.errors()[0]
    where = ".".join(str(part) for part in error["loc"][1:])  # loc[0] names the union member tried
    return limits.cut(f"{where + ': ' if where else ''}{error['msg']}", 300)


_JSON_NAMES = {type(None): "null", list: "an array", dict: "an object", str: "a string", bool: "a boolean",
               int: "a number", float: "a number"}


def _json_name(value: Any) -> str:
    return _JSON_NAMES.get(type(value), type(value).__name__)


def quote(line: str) -> str:
    """A bad line as a log record quotes it: its start, as JSON, so control characters stay visible."""
    return json.dumps(limits.cut(line, QUOTE_CHARS))
