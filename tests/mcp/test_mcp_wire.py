"""Every line a client sends gets an answer or a log record: malformed lines through a raw stdio client."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_until
from mcpclient import RawServer, spawn_raw

from wolfmem import Config, Memory
from wolfmem.mcp.stdio import MAX_LINE_BYTES
from wolfmem.mcp.wire import INVALID_REQUEST, PARSE_ERROR, screen

REQUEST = '{"jsonrpc":"2.0","id":%s,"method":"ping"%s}'
SEARCH = '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"%s"}}}'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    root = tmp_path_factory.mktemp("wire")
    Memory(root / "vault", Config(state_dir=str(root / "state"))).close()
    with spawn_raw(root / "vault", root / "state", root / "server.err") as raw:
        yield raw


def response(server: RawServer, within: float = 1.0) -> dict[str, Any]:
    """The next response (not a notification) the server writes, within `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        message = server.reply(timeout=max(deadline - time.monotonic(), 0.01))
        if "id" in message:
            return message


def no_response(server: RawServer, within: float = 0.3) -> bool:
    """Whether the server writes no response (notifications aside) for `within` seconds."""
    try:
        response(server, within)
    except AssertionError:
        return True
    return False


@pytest.mark.parametrize(
    ("line", "code", "expected_id", "says"),
    [
        (SEARCH % (11, "caf\\ud83d"), PARSE_ERROR, 11, "lone UTF-16 surrogate (\\ud83d)"),
        ((REQUEST % (12, "")).replace('"2.0"', '"1.0"'), INVALID_REQUEST, 12, 'jsonrpc must be "2.0", not "1.0"'),
        (REQUEST % (13, ',"params":[1, 2]'), INVALID_REQUEST, 13, "params must be an object, not an array"),
        (REQUEST % ("null", ""), INVALID_REQUEST, None, "the id must be a string or an integer"),
        (REQUEST % ('{"a": 1}', ""), INVALID_REQUEST, None, "the id must be a string or an integer"),
        (REQUEST % ("1.5", ""), INVALID_REQUEST, None, "the id must be a string or an integer"),
        (REQUEST % (14, ',"params":{"x":' + "[" * 5000 + "]" * 5000 + "}"), PARSE_ERROR, 14, "nested too deeply"),
        (REQUEST % (15, ',"params":{"x":' + "[" * 300 + "]" * 300 + "}"), PARSE_ERROR, 15, "recursion limit"),
        (REQUEST % (16, ',"params":{"x":' + "9" * 5000 + "}"), PARSE_ERROR, 16, "a number too long to read"),
        ('{"jsonrpc":"2.0","id":"t-17","method":"tools/call","params":{"name":"memory_se', PARSE_ERROR, "t-17",
         "not valid JSON"),
        ('{"jsonrpc":"2.0","id":18}', INVALID_REQUEST, 18, "method must be a string"),
    ],
    ids=["lone-surrogate", "jsonrpc-1.0", "array-params", "null-id", "object-id", "fraction-id", "5000-deep",
         "300-deep", "5000-digits", "truncated", "no-method"],
)
def test_a_malformed_line_with_an_id_gets_its_error_within_a_second(
    server: RawServer, line: str, code: int, expected_id: Any, says: str
) -> None:
    server.send(line)
    reply = response(server)
    assert reply["id"] == expected_id and reply["error"]["code"] == code
    assert says in reply["error"]["message"]
    assert server.request("ping", id=99) == {"jsonrpc": "2.0", "id": 99, "result": {}}  # still serving


def test_a_batch_gets_an_error_for_each_request_in_it(server: RawServer) -> None:
    server.send(json.dumps([{"jsonrpc": "2.0", "id": 21, "method": "ping"},
                            {"jsonrpc": "2.0", "method": "notifications/initialized"},
                            {"jsonrpc": "2.0", "id": 22, "method": "tools/list"}]))
    replies = [response(server), response(server)]
    assert [r["id"] for r in replies] == [21, 22]
    assert all(r["error"]["code"] == INVALID_REQUEST and "batch" in r["error"]["message"] for r in replies)


@pytest.mark.parametrize("line", ["hello there", '{"jsonrpc":"2.0","method":"notifications/x"', "[]", "42",
                                  '{"jsonrpc":"2.0","id":7,"result":"not an object"}'])
def test_a_line_without_an_id_to_answer_is_logged(server: RawServer, line: str) -> None:
    server.send(line)
    assert no_response(server)
    wait_until(lambda: "refused a line from the client" in server.log() and json.dumps(line)[:40] in server.log())


def test_a_well_formed_call_after_the_noise_is_answered(server: RawServer) -> None:
    server.send("")
    reply = server.request("tools/call", {"name": "memory_search", "arguments": {"query": "café ☕"}}, id=31)
    assert reply["id"] == 31 and "No results" in reply["result"]["content"][0]["text"]


@pytest.mark.parametrize(
    ("line", "passes"),
    [
        (REQUEST % (1, ""), True),
        ('{"jsonrpc":"2.0","method":"id","params":{"id":null}}', True),  # "id" as a value or nested is no id
        ('{"jsonrpc":"2.0","id":1,"result":{}}', True),  # a client's reply to the server
        ('{"jsonrpc":"2.0","method":"notifications/initialized","id":null}', False),
    ],
)
def test_screen_passes_what_the_sdk_reads_unchanged(line: str, passes: bool) -> None:
    screened = screen(line)
    assert (screened.line == line) is passes and (screened.line is None) is not passes


@pytest.mark.parametrize(
    ("method", "params", "says"),
    [
        # Some clients send the arguments as a JSON string, as OpenAI function calling does.
        ("tools/call", {"name": "memory_search", "arguments": '{"query": "Sarah"}'},
         "arguments: Input should be a valid dictionary"),
        ("tools/call", {"arguments": {}}, "name: Field required"),
        ("resources/read", {"name": "map"}, "uri: Field required"),
        ("resources/read", None, "params: Field required"),
        ("prompts/get", {"name": "recall", "arguments": {"question": 5}},
         "arguments.question: Input should be a valid string"),
        ("logging/setLevel", {"level": "verbose"}, "level: Input should be"),
    ],
)
def test_params_the_sdk_refuses_are_explained(server: RawServer, method: str, params: dict | None,
                                              says: str) -> None:
    # The SDK answered each with a bare "Invalid request parameters", data "": nothing to fix by.
    error = server.request(method, params, id=40)["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("Invalid request parameters: ") and says in error["message"], error


def test_a_request_before_initialize_says_to_initialize_first(tmp_path: Path) -> None:
    Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state"))).close()
    with spawn_raw(tmp_path / "vault", tmp_path / "state", tmp_path / "server.err", initialize=False) as raw:
        error = raw.request("tools/list", id=1)["error"]
        assert error["code"] == -32602 and "send initialize first" in error["message"], error
        assert raw.request("ping", id=2)["result"] == {}  # ping is allowed before the handshake
    assert "Traceback" not in raw.log()


@pytest.mark.parametrize("id_last", [False, True], ids=["id-first", "id-last"])
def test_a_line_too_long_to_read_is_answered_without_holding_it(server: RawServer, id_last: bool) -> None:
    before = _peak_kib(server.process.pid)
    arguments = json.dumps({"name": "memory_save", "arguments": {"fact": "z" * 8 * MAX_LINE_BYTES}})
    line = (f'{{"jsonrpc":"2.0","method":"tools/call","params":{arguments},"id":"big"}}' if id_last
            else f'{{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{arguments}}}')
    server.send(line)
    reply = response(server, within=30)
    assert reply["id"] == "big" and reply["error"]["code"] == INVALID_REQUEST
    assert f"at most {MAX_LINE_BYTES:,}" in reply["error"]["message"]
    # Only the line's start and end were held: holding it whole alone would take 64 MB (and parsing it six times that).
    assert _peak_kib(server.process.pid) - before < 2 * MAX_LINE_BYTES // 1024
    server.send(SEARCH % (5, "zeppelin"))  # and the server reads on
    assert response(server, within=30)["id"] == 5


def _peak_kib(pid: int) -> int:
    """The process's peak resident memory, in KiB (Linux)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0])
