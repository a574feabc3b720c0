"""A deterministic OpenAI-compatible /v1/embeddings server for tests (stdlib only).

Each text becomes a bag of its words hashed into DIM dimensions and normalised, so texts sharing
words are close, and words of one CONCEPTS group count as the same word: "charity event" and
"benefit game" share no word yet are near each other, which only a dense ranking can find.

    with FakeEmbed() as server:
        ...  # point embeddings.base_url at server.base_url
        assert server.texts == [...]   # every text embedded so far
        server.down = True             # later requests get HTTP 503
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from fakellm import FakeLLM, Reply

DIM = 64
MODEL = "fake-embed"
CONCEPTS = (
    ("charity", "benefit", "fundraiser"),
    ("event", "game", "gala", "match"),
    ("cat", "kitten", "feline"),
    ("car", "automobile", "vehicle"),
)
_CONCEPT = {word: group[0] for group in CONCEPTS for word in group}
_STOP = frozenset("a an the is are was to of in on at for and or what who did do does my i".split())


def embed(text: str, dim: int = DIM) -> list[float]:
    """The fake model: hashed concept counts, L2-normalised."""
    vector = [0.0] * dim
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in _STOP:
            continue
        word = _CONCEPT.get(word.rstrip("s"), _CONCEPT.get(word, word))
        digest = hashlib.sha1(word.encode()).digest()
        vector[int.from_bytes(digest[:4], "big") % dim] += 1.0 if digest[4] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class FakeEmbed(FakeLLM):
    """The fake embeddings server; `down` makes it answer 503, `texts` lists what it embedded."""

    def __init__(self, dim: int = DIM) -> None:
        super().__init__()
        self.dim = dim
        self.down = False
        self._texts: list[str] = []
        self._calls = 0
        self._guard = threading.Lock()

    @property
    def texts(self) -> list[str]:
        """Every input text received, in order."""
        with self._guard:
            return list(self._texts)

    @property
    def calls(self) -> int:
        """How many embedding requests arrived (including refused ones)."""
        with self._guard:
            return self._calls

    def _answer(self, request: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self._requests.append(request)
            self._headers.append(headers)
        with self._guard:
            self._calls += 1
            if self.down:
                return FakeLLM.status(503, "the fake embedder is down")
            inputs = request.get("input")
            inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
            self._texts.extend(inputs)
        data = [{"object": "embedding", "index": i, "embedding": embed(text, self.dim)}
                for i, text in enumerate(inputs)]
        # Reversed on purpose: clients must order by "index", not by position.
        return Reply(body={"object": "list", "data": data[::-1], "model": MODEL,
                           "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(super()._handler_class()):  # type: ignore[misc]
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/") != "/v1/embeddings":
                    self._send(FakeLLM.status(404, f"no route POST {self.path}"))
                    return
                self._send(fake._answer(json.loads(raw), {k.lower(): v for k, v in self.headers.items()}))

        return Handler
