"""`llm.timeout` is a total deadline per request, even against a server that drips its reply.

A raw-socket server on 127.0.0.1 answers with a valid chat completion, but one byte at a time,
with a pause between bytes shorter than the timeout: every socket read succeeds, so only a total
deadline can end the request. The real openai client talks to it through wolfmem's LLMClient.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest

from wolfmem import Config, Memory
from wolfmem.curation.run import make_curator, run
from wolfmem.errors import LLMError
from wolfmem.llm.chat import LLMClient, LLMSettings

REPLY = {"status": "unchanged", "summary": "", "content": "", "changes": []}
PAUSE = 0.05  # between bytes: far below any read timeout, so the drip never trips one


def _completion() -> bytes:
    body = json.dumps({
        "id": "chatcmpl-drip", "object": "chat.completion", "created": 0, "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps(REPLY)},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    return head + body


class DripServer:
    """Answers every request with a full completion, dripping `where` ("body" or "headers") byte by byte."""

    def __init__(self, where: str, pause: float = PAUSE) -> None:
        self.where = where
        self.pause = pause
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.stop = threading.Event()
        self.served = 0
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"

    def _serve(self) -> None:
        self.listener.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length"))
            while len(body) < length:
                body += conn.recv(65536)
            self.served += 1
            reply = _completion()
            split = reply.index(b"\r\n\r\n") + 4
            fast, slow = (reply[:split], reply[split:]) if self.where == "body" else (b"", reply)
            try:
                conn.sendall(fast)
                for byte in slow:
                    if self.stop.wait(self.pause):
                        return
                    conn.sendall(bytes([byte]))
            except OSError:
                return  # the client hung up: the deadline worked

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


@pytest.fixture(params=["body", "headers"])
def drip(request) -> Iterator[DripServer]:
    server = DripServer(request.param)
    yield server
    server.close()


def settings(drip: DripServer, timeout: float) -> LLMSettings:
    return LLMSettings(base_url=drip.base_url, model="fake-model", api_key=None, timeout=timeout, max_retries=0)


def test_a_dripping_server_is_cut_off_at_the_timeout(drip):
    # The whole reply would take about 20 s at this pace; each byte arrives long before a read times out.
    assert len(_completion()) * PAUSE > 15
    with LLMClient(settings(drip, 1.0)) as client:
        started = time.monotonic()
        with pytest.raises(LLMError, match="did not answer within 1 s"):
            client.complete_json("system", "user", {"type": "object"}, "drip")
        elapsed = time.monotonic() - started
    assert drip.served == 1
    assert 0.9 <= elapsed < 5, elapsed  # the deadline, not the drip, ended it


def test_retries_each_get_their_own_deadline(drip):
    settings = LLMSettings(base_url=drip.base_url, model="fake-model", api_key=None, timeout=0.5, max_retries=1)
    with LLMClient(settings) as client, pytest.raises(LLMError, match=r"did not answer within 0\.5 s \(2 attempts\)"):
        client.complete_json("system", "user", {"type": "object"}, "drip")
    assert drip.served == 2


def test_a_reply_within_the_deadline_is_unaffected():
    server = DripServer("body", pause=0.001)
    try:
        # A deadline longer than the drip: the reply arrives whole.
        with LLMClient(settings(server, 30.0)) as client:
            reply = client.complete_json("system", "user", {"type": "object"}, "drip")
        assert reply.data == REPLY
    finally:
        server.close()


def test_curation_against_a_dripping_server_fails_the_file_and_writes_nothing(tmp_path, drip):
    config = Config(state_dir=str(tmp_path / "state"), llm_base_url=drip.base_url, llm_model="fake-model",
                    llm_api_key_env="WOLFMEM_TEST_NO_SUCH_KEY", llm_timeout=0.5, llm_max_retries=0)
    now = datetime(2026, 11, 29, 3, 0, tzinfo=UTC)
    with Memory(tmp_path / "vault", config, clock=lambda: now) as memory:
        memory.save("Tom lives in Berlin.", "people", "Tom")
        before = (memory.vault.root / "knowledge/people.md").read_text("utf-8")
        curator = make_curator(config)
        try:
            started = time.monotonic()
            result = run(memory.services, curator, date(2026, 11, 29))
            elapsed = time.monotonic() - started
        finally:
            curator.close()
        assert result.files["knowledge/people.md"].status == "failed"
        assert "did not answer within 0.5 s" in result.files["knowledge/people.md"].reasons[0]
        assert (memory.vault.root / "knowledge/people.md").read_text("utf-8") == before
        assert elapsed < 5, elapsed
