"""A total deadline per LLM request, however slowly the server drips its reply.

The HTTP client's timeouts bound each socket read, not the request: a server that sends one chunk
a second held a "3 s" request for 19 s, and a slower drip holds it for as long as it likes.
`DeadlineTransport` wraps the HTTP transport the openai client uses. Each request gets a watchdog
timer; at the deadline it shuts the request's socket down, which wakes a read blocked on it at once,
and the request fails with the HTTP library's `ReadTimeout` — which openai reports as a timeout,
so retries and the error message work as for any other timeout.

The watchdog learns the socket from the connection's `trace` events (the HTTP library's documented
hook). Connections are therefore not kept alive between requests: each request opens its own, at
the cost of a TCP connect (and a TLS handshake for a remote endpoint), small next to an LLM call.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx2

# The connection events whose return value is the stream a request reads from (TLS wraps TCP).
_CONNECTED = ("connection.connect_tcp.complete", "connection.start_tls.complete")


class _Watchdog:
    """Shuts down the sockets of one request when its deadline passes."""

    def __init__(self, seconds: float) -> None:
        self.fired = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, stream: Any) -> None:
        """Follow the socket of a stream the request connected (shut at once if the deadline has passed)."""
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.append(sock)
            late = self.fired.is_set()
        if late:
            _shutdown(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired.set()
            sockets = list(self._sockets)
        for sock in sockets:
            _shutdown(sock)

    def cancel(self) -> None:
        """The request is over: stop the timer."""
        self._timer.cancel()


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: the request ended on its own
        sock.shutdown(socket.SHUT_RDWR)


class _DeadlineStream(httpx2.SyncByteStream):
    """A response body that ends in ReadTimeout when the watchdog has cut the connection."""

    def __init__(self, inner: httpx2.SyncByteStream, watchdog: _Watchdog, message: str) -> None:
        self._inner = inner
        self._watchdog = watchdog
        self._message = message

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner:
                if self._watchdog.fired.is_set():
                    raise httpx2.ReadTimeout(self._message)
                yield chunk
        except httpx2.TransportError as exc:
            if self._watchdog.fired.is_set() and not isinstance(exc, httpx2.ReadTimeout):
                raise httpx2.ReadTimeout(self._message) from exc
            raise

    def close(self) -> None:
        self._watchdog.cancel()
        self._inner.close()


class DeadlineTransport(httpx2.BaseTransport):
    """An HTTP transport that ends every request at `seconds` after it began, headers and body included."""

    def __init__(self, seconds: float, inner: httpx2.BaseTransport | None = None) -> None:
        self.seconds = seconds
        # No keep-alive: each request's socket is its own, so the watchdog never cuts another's.
        self.inner = inner or httpx2.HTTPTransport(limits=httpx2.Limits(max_keepalive_connections=0))

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send the request under a watchdog; ReadTimeout once the deadline passes."""
        message = f"no complete reply within {self.seconds:g} s"
        watchdog = _Watchdog(self.seconds)
        outer = request.extensions.get("trace")

        def trace(event: str, info: dict[str, Any]) -> None:
            if event in _CONNECTED:
                watchdog.watch(info.get("return_value"))
            if outer is not None:
                outer(event, info)

        request.extensions = {**request.extensions, "trace": trace}
        try:
            response = self.inner.handle_request(request)
        except httpx2.TransportError as exc:
            watchdog.cancel()
            if watchdog.fired.is_set() and not isinstance(exc, httpx2.ReadTimeout):
                raise httpx2.ReadTimeout(message, request=request) from exc
            raise
        assert isinstance(response.stream, httpx2.SyncByteStream)
        response.stream = _DeadlineStream(response.stream, watchdog, message)
        return response

    def close(self) -> None:
        """Close the pooled connections."""
        self.inner.close()
