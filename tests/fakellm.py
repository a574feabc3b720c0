"""A scripted, OpenAI-compatible HTTP server for tests (stdlib only).

Each POST /v1/chat/completions pops the next reply spec from a FIFO queue (or
uses the default when the queue is empty) and records the parsed request body,
so tests drive the real `openai` client over real HTTP and then assert on what
was sent.

    with FakeLLM() as fake:
        fake.push(FakeLLM.status(500), {"facts": []})
        ...  # point LLMSettings(base_url=fake.base_url, ...) at it
        assert len(fake.requests) == 2

A spec is one of:
- a dict: returned as the message content (JSON-encoded), finish_reason "stop";
- a str: returned verbatim as the message content (e.g. malformed JSON);
- a `Reply` built by the helpers below (tool calls, status errors, truncation, refusal, delay);
- a callable `fn(request_json) -> spec`, resolved per request.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fake-model"
USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
# openai honours retry-after-ms, so error replies carrying it make the
# client's own retries near-instant instead of 0.5-8 s of backoff.
FAST_RETRY = {"retry-after-ms": "1"}
# Tool call ids are unique across replies, as a real model's are (openai-agents checks).
_CALL_IDS = itertools.count()


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP reply: status, JSON body, extra headers, and a delay before sending."""

    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


Spec = Reply | dict | str | Callable[[dict], Any]


def _completion(
    content: str | None, finish_reason: str = "stop", refusal: str | None = None
) -> dict[str, Any]:
    """Build a chat.completion body the way OpenAI shapes it."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": dict(USAGE),
    }


class FakeLLM:
    """Context manager running the fake server on 127.0.0.1 in a background thread."""

    def __init__(self, default: Spec | None = None) -> None:
        self.default: Spec = default if default is not None else {"ok": True}
        self._queue: deque[Spec] = deque()
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------

    def start(self) -> FakeLLM:
        """Bind a free port and serve in a daemon thread."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # Don't join handler threads on close: a handler may still be sleeping
        # through a delay spec after the client gave up (the timeout tests).
        self._server.block_on_close = False
        # A short poll interval keeps shutdown() (and so each test's teardown) fast.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake any delayed handlers, and free the port."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        """The request handler; a subclass serving another route overrides this."""
        return _make_handler(self)

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- scripting and inspection ----------------------------------------

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        assert self._server is not None, "FakeLLM is not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *specs: Spec) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self._queue.extend(specs)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A copy of every chat-completions request body received so far."""
        with self._lock:
            return list(self._requests)

    @property
    def headers(self) -> list[dict[str, str]]:
        """The (lower-cased) request headers, parallel to `requests`."""
        with self._lock:
            return list(self._headers)

    def _next(self, request: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self._requests.append(request)
            self._headers.append(headers)
            spec = self._queue.popleft() if self._queue else self.default
        return _resolve(spec, request)

    # --- spec builders ---------------------------------------------------

    @staticmethod
    def json_reply(obj: Any) -> Reply:
        """A well-formed reply whose content is `obj` as JSON."""
        return Reply(body=_completion(json.dumps(obj)))

    @staticmethod
    def text(content: str | None, finish_reason: str = "stop") -> Reply:
        """A reply with raw content text (malformed JSON, fenced JSON, empty...)."""
        return Reply(body=_completion(content, finish_reason))

    @staticmethod
    def tool_calls(*calls: tuple[str, str]) -> Reply:
        """A reply asking for tool calls, each a (name, arguments as a JSON string) pair."""
        body = _completion(None, "tool_calls")
        body["choices"][0]["message"]["tool_calls"] = [
            {"id": f"call_{next(_CALL_IDS)}", "type": "function", "function": {"name": name, "arguments": arguments}}
            for name, arguments in calls
        ]
        return Reply(body=body)

    @staticmethod
    def truncated(content: str = '{"facts": ["cut of') -> Reply:
        """A reply cut off at the token limit (finish_reason "length")."""
        return Reply(body=_completion(content, "length"))

    @staticmethod
    def content_filtered() -> Reply:
        """A reply withheld by the content filter."""
        return Reply(body=_completion(None, "content_filter"))

    @staticmethod
    def refusal(message: str = "I can't help with that.") -> Reply:
        """A structured-output refusal (message.refusal set, content null)."""
        return Reply(body=_completion(None, "stop", refusal=message))

    @staticmethod
    def status(
        code: int,
        message: str | None = None,
        type: str = "server_error",
        error_code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        """An HTTP error with an OpenAI-style error body; carries retry-after-ms: 1."""
        body = {
            "error": {
                "message": message or f"fake error {code}",
                "type": type,
                "param": None,
                "code": error_code,
            }
        }
        return Reply(status=code, body=body, headers={**FAST_RETRY, **(headers or {})})

    @staticmethod
    def reject_json_schema() -> Reply:
        """The 400 a server without structured outputs sends for a json_schema response_format."""
        return FakeLLM.status(
            400,
            "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
            type="invalid_request_error",
            error_code="invalid_parameter",
        )

    @staticmethod
    def delay(seconds: float, spec: Spec | None = None) -> Callable[[dict], Reply]:
        """Wait `seconds` before sending `spec` (default: a small JSON reply)."""

        def delayed(request: dict) -> Reply:
            inner = spec if spec is not None else {"ok": True}
            return replace(_resolve(inner, request), delay=seconds)

        return delayed


def _resolve(spec: Spec, request: dict[str, Any]) -> Reply:
    """Turn any accepted spec form into a concrete Reply."""
    if isinstance(spec, Reply):
        return spec
    if isinstance(spec, dict):
        return FakeLLM.json_reply(spec)
    if isinstance(spec, str):
        return FakeLLM.text(spec)
    if callable(spec):
        return _resolve(spec(request), request)
    raise TypeError(f"not a reply spec: {spec!r}")


def _make_handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep pytest output clean

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                body = {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "fake"}]}
                self._send(Reply(body=body))
            else:
                self._send(FakeLLM.status(404, f"no route GET {self.path}", type="not_found"))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(FakeLLM.status(404, f"no route POST {self.path}", type="not_found"))
                return
            try:
                request = json.loads(raw)
            except ValueError:
                self._send(FakeLLM.status(400, "request body is not JSON", type="invalid_request_error"))
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            self._send(fake._next(request, headers))

        def _send(self, reply: Reply) -> None:
            if reply.delay and fake._stopping.wait(reply.delay):
                return  # the server is closing; nobody is waiting for this reply
            data = json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out and hung up first

    return Handler
