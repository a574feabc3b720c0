"""Vectors from any OpenAI-compatible /v1/embeddings endpoint; the only module that asks for embeddings.

Imported only when `embeddings.model` is set, so a lexical-only setup never pays for openai or numpy.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import openai

from wolfmem.config import Config, embeddings_api_key
from wolfmem.errors import WolfmemError
from wolfmem.llm.chat import OPENAI_BASE_URL, PLACEHOLDER_KEY

Kind = Literal["query", "document"]
_MAX_QUOTE = 200


class EmbeddingsUnavailable(WolfmemError):
    """The embeddings endpoint could not give vectors now; search falls back to lexical ranking."""


class EmbeddingsTimeout(EmbeddingsUnavailable):
    """The endpoint did not answer in time: it may be busy (a background batch) rather than down."""


@dataclass(frozen=True)
class EmbeddingSettings:
    """Where and how to reach the embeddings endpoint; base_url None means api.openai.com."""

    base_url: str | None
    model: str | None
    # repr=False keeps the key out of logs and tracebacks that print the settings.
    api_key: str | None = field(repr=False)
    timeout: float = 30.0
    batch: int = 64
    query_prefix: str = ""
    document_prefix: str = ""

    @property
    def endpoint(self) -> str:
        """The base URL requests go to."""
        return self.base_url or OPENAI_BASE_URL

    @property
    def identity(self) -> str:
        """A short name for the vector space: vectors of another model or prefix are not comparable."""
        space = [self.endpoint.rstrip("/"), self.model, self.query_prefix, self.document_prefix]
        digest = hashlib.sha1(json.dumps(space).encode()).hexdigest()[:10]
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in self.model or "")[:40]
        return f"{safe}-{digest}"

    @classmethod
    def from_config(cls, config: Config) -> EmbeddingSettings:
        """The embedding settings of a resolved Config, with the key read from the environment now."""
        return cls(
            base_url=config.embeddings_base_url,
            model=config.embeddings_model,
            api_key=embeddings_api_key(config),
            timeout=config.embeddings_timeout,
            batch=max(1, config.embeddings_batch),
            query_prefix=config.embeddings_query_prefix,
            document_prefix=config.embeddings_document_prefix,
        )


class EmbeddingClient:
    """Turns texts into unit-length float32 vectors, or raises EmbeddingsUnavailable saying why not."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        if not settings.model:
            raise EmbeddingsUnavailable("no embeddings model is configured; set embeddings.model")
        self.settings = settings
        self._model: str = settings.model  # set, as checked just above
        self._client = openai.OpenAI(
            # Passed explicitly so OPENAI_API_KEY / OPENAI_BASE_URL in the environment never leak in.
            api_key=settings.api_key or PLACEHOLDER_KEY,
            base_url=settings.endpoint,
            timeout=openai.Timeout(settings.timeout, connect=min(settings.timeout, 5.0)),
            # Callers retry on their own schedule: the daemon backs off, a search answers lexically.
            max_retries=0,
        )

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self._client.close()

    def embed(self, texts: list[str], kind: Kind, timeout: float | None = None) -> np.ndarray:
        """One request for len(texts) vectors, L2-normalised, in the order of `texts`."""
        prefix = self.settings.query_prefix if kind == "query" else self.settings.document_prefix
        # An empty string is refused by some servers; a single space embeds as "nothing".
        inputs = [prefix + text if (prefix + text).strip() else " " for text in texts]
        try:
            client = self._client if timeout is None else self._client.with_options(
                timeout=openai.Timeout(timeout, connect=min(timeout, 5.0)))
            reply = client.embeddings.create(model=self._model, input=inputs, encoding_format="float")
        except openai.APIStatusError as err:
            raise EmbeddingsUnavailable(self._scrub(
                f"the embeddings endpoint {self.settings.endpoint} answered HTTP {err.status_code}: "
                f"{_quote(str(err.message))}; check embeddings.model and that the base URL ends in /v1"
            )) from None
        except openai.APITimeoutError:
            raise EmbeddingsTimeout(
                f"the embeddings endpoint {self.settings.endpoint} did not answer within "
                f"{timeout or self.settings.timeout:g} s"
            ) from None
        except openai.APIConnectionError as err:
            raise EmbeddingsUnavailable(
                f"cannot reach the embeddings endpoint {self.settings.endpoint}: {_quote(str(err.__cause__ or err))}"
            ) from None
        except openai.OpenAIError as err:
            raise EmbeddingsUnavailable(self._scrub(f"unusable reply from {self.settings.endpoint}: {err}")) from None
        return _matrix(reply, len(texts), self.settings.endpoint)

    def _scrub(self, text: str) -> str:
        key = self.settings.api_key
        return text.replace(key, "***") if key and len(key) >= 4 else text


def _matrix(reply: object, expected: int, endpoint: str) -> np.ndarray:
    """The reply's vectors as rows in input order, normalised; refuses a reply of the wrong shape."""
    data = getattr(reply, "data", None) or []
    if len(data) != expected:
        raise EmbeddingsUnavailable(f"{endpoint} returned {len(data)} embeddings for {expected} texts")
    # The API carries each vector's input position; servers may answer out of order.
    ordered = sorted(data, key=lambda item: getattr(item, "index", 0))
    try:
        matrix = np.asarray([item.embedding for item in ordered], dtype=np.float32)
    except (TypeError, ValueError):
        raise EmbeddingsUnavailable(f"{endpoint} returned embeddings that are not lists of numbers") from None
    if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
        raise EmbeddingsUnavailable(f"{endpoint} returned embeddings of an unusable shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_QUOTE else text[: _MAX_QUOTE - 1] + "…"
