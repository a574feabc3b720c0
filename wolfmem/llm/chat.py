"""Structured JSON completions from any OpenAI-compatible endpoint, for curation and the audit."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import (
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)

from wolfmem.config import Config, llm_api_key
from wolfmem.errors import LLMError
from wolfmem.llm.deadline import DeadlineTransport

OPENAI_BASE_URL = "https://api.openai.com/v1"
# Local servers (Ollama, llama.cpp, LM Studio) ignore the key, but the client insists on one.
PLACEHOLDER_KEY = "not-needed"
# Words in a 400/422 that mean the server does not support structured outputs.
_SCHEMA_HINTS = ("response_format", "json_schema", "structured output")
_FENCE = re.compile(r"^```[A-Za-z]*[ \t]*\n?(.*?)\n?```$", re.DOTALL)
# Reasoning models served locally (qwen3, deepseek-r1) may prepend their thinking.
_THINK = re.compile(r"^<think>.*?</think>\s*", re.DOTALL)
_MAX_QUOTE = 300


@dataclass(frozen=True)
class LLMSettings:
    """Where and how to reach the LLM; base_url None means api.openai.com."""

    base_url: str | None
    model: str | None
    # repr=False keeps the key out of logs and tracebacks that print the settings.
    api_key: str | None = field(repr=False)
    timeout: float = 120.0
    max_retries: int = 1

    @property
    def configured(self) -> bool:
        """True when a model is set (base_url may default to api.openai.com)."""
        return bool(self.model)

    @property
    def endpoint(self) -> str:
        """The base URL requests go to."""
        return self.base_url or OPENAI_BASE_URL

    @classmethod
    def from_config(cls, config: Config) -> LLMSettings:
        """The LLM settings of a resolved Config, with the key read from the environment now."""
        return cls(
            base_url=config.llm_base_url,
            model=config.llm_model,
            api_key=llm_api_key(config),
            timeout=config.llm_timeout,
            max_retries=config.llm_max_retries,
        )


@dataclass(frozen=True)
class JsonReply:
    """A parsed JSON object from the model, its token usage, and the response_format mode used."""

    data: dict
    usage: dict[str, int]
    mode: str


class LLMClient:
    """Asks an OpenAI-compatible chat endpoint for JSON objects, failing loudly with LLMError."""

    def __init__(self, settings: LLMSettings) -> None:
        if not settings.model:  # not settings.configured
            raise LLMError("no LLM model is configured; set the LLM model (and base URL for a local server)")
        self.settings = settings
        self._model: str = settings.model  # set, as checked just above
        # None until a call succeeds: then "json_schema" or "json_object".
        self.mode: str | None = None
        # Some models (OpenAI reasoning models) only accept the default temperature.
        self._send_temperature = True
        self._client = openai.OpenAI(
            # Passed explicitly so OPENAI_API_KEY / OPENAI_BASE_URL in the environment never leak in.
            api_key=settings.api_key or PLACEHOLDER_KEY,
            base_url=settings.endpoint,
            # openai's default is a 600 s read timeout; connecting should fail fast.
            timeout=openai.Timeout(settings.timeout, connect=min(settings.timeout, 10.0)),
            max_retries=settings.max_retries,
            # Those bound each read; the transport bounds the whole request, however slow the drip.
            http_client=openai.DefaultHttpxClient(transport=DeadlineTransport(settings.timeout)),
        )

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self._client.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete_json(self, system: str, user: str, schema: dict, name: str) -> JsonReply:
        """Ask for one JSON object matching `schema`; raise LLMError rather than return partial data."""
        try:
            if self.mode != "json_object":
                try:
                    completion = self._chat(
                        [_system(system), _user(user)],
                        response_format={
                            "type": "json_schema",
                            "json_schema": {"name": name, "schema": schema, "strict": True},
                        },
                        temperature=0,
                    )
                    self.mode = "json_schema"
                    return _json_reply(completion, "json_schema")
                except (openai.BadRequestError, openai.UnprocessableEntityError) as err:
                    if not self._schema_rejected(err):
                        raise
            completion = self._chat(
                [_system(_with_schema(system, schema)), _user(user)],
                response_format={"type": "json_object"},
                temperature=0,
            )
            self.mode = "json_object"
            return _json_reply(completion, "json_object")
        except openai.OpenAIError as err:
            raise self._error(err) from None

    def ping(self) -> str:
        """Send a tiny request and return a one-line report; raise LLMError saying why it failed."""
        started = time.monotonic()
        messages: list[ChatCompletionMessageParam] = [_user("Reply with the word: ok")]
        try:
            try:
                completion = self._chat(messages, max_tokens=16)
            except openai.BadRequestError as err:
                # Newer OpenAI models reject max_tokens in favour of max_completion_tokens.
                if "max_tokens" not in _server_message(err):
                    raise
                completion = self._chat(messages, max_completion_tokens=16)
        except openai.OpenAIError as err:
            raise self._error(err) from None
        elapsed = time.monotonic() - started
        choices = getattr(completion, "choices", None) or []
        content = (choices[0].message.content or "").strip() if choices else ""
        said = f"replied {_quote(content, 40)!r}" if content else "answered (empty reply)"
        return f"ok: {self.settings.model} at {self.settings.endpoint} {said} in {elapsed:.1f} s"

    # --- internals -------------------------------------------------------

    def _chat(self, messages: list[ChatCompletionMessageParam], **params: Any) -> Any:
        """One chat.completions.create call, dropping `temperature` for models that refuse it."""
        if not self._send_temperature:
            params.pop("temperature", None)
        try:
            return self._client.chat.completions.create(
                model=self._model, messages=messages, **params
            )
        except openai.BadRequestError as err:
            if "temperature" not in params or "temperature" not in _server_message(err).lower():
                raise
            self._send_temperature = False
            del params["temperature"]
            return self._client.chat.completions.create(
                model=self._model, messages=messages, **params
            )

    def _schema_rejected(self, err: openai.APIStatusError) -> bool:
        """Whether a 400/422 to a json_schema request means "structured outputs unsupported"."""
        message = _server_message(err).lower()
        if any(hint in message for hint in _SCHEMA_HINTS):
            return True
        # Until json_schema has worked once, any 400 is most likely the response_format.
        return self.mode is None and err.status_code == 400

    def _error(self, err: openai.OpenAIError) -> LLMError:
        """Translate an openai exception into an LLMError that says how to fix it, without the key."""
        url = self.settings.endpoint
        attempts = self.settings.max_retries + 1
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(err, openai.APITimeoutError):
            text = (
                f"the LLM at {url} did not answer within {self.settings.timeout:g} s ({tries}); "
                "raise the LLM timeout or use a faster model"
            )
        elif isinstance(err, openai.APIConnectionError):
            cause = err.__cause__ or err.__context__
            reason = str(cause) if cause is not None and str(cause) else "connection failed"
            text = (
                f"cannot reach the LLM endpoint {url} ({reason}); "
                "check that the server is running and the base URL is right"
            )
        elif isinstance(err, openai.AuthenticationError):
            # The server's text often echoes part of the key, so it is left out.
            text = f"the LLM endpoint {url} rejected the API key (401); check the configured key"
        elif isinstance(err, openai.PermissionDeniedError):
            text = f"the LLM endpoint {url} denied access (403): {_server_message(err)}"
        elif isinstance(err, openai.NotFoundError):
            text = (
                f"model {self.settings.model!r} or its chat endpoint was not found at {url} (404): "
                f"{_server_message(err)}; check the model name and that the base URL ends in /v1"
            )
        elif isinstance(err, openai.RateLimitError):
            text = f"the LLM endpoint {url} is rate limiting (429) after {tries}: {_server_message(err)}"
        elif isinstance(err, openai.APIStatusError) and err.status_code >= 500:
            text = (
                f"the LLM endpoint {url} failed with HTTP {err.status_code} after {tries}: "
                f"{_server_message(err)}"
            )
        elif isinstance(err, openai.APIStatusError):
            text = (
                f"the LLM endpoint {url} rejected the request (HTTP {err.status_code}): "
                f"{_server_message(err)}"
            )
        else:
            text = f"unusable reply from the LLM endpoint {url}: {err}"
        return LLMError(self._scrub(text))

    def _scrub(self, text: str) -> str:
        key = self.settings.api_key
        # A very short "key" is a placeholder; replacing it would garble the message.
        return text.replace(key, "***") if key and len(key) >= 4 else text


def _system(content: str) -> ChatCompletionSystemMessageParam:
    return {"role": "system", "content": content}


def _user(content: str) -> ChatCompletionUserMessageParam:
    return {"role": "user", "content": content}


def _with_schema(system: str, schema: dict) -> str:
    """The json_object fallback can't enforce the schema, so the prompt has to carry it."""
    return (
        f"{system}\n\nReply with one JSON object only, no prose and no code fence. "
        f"It must match this JSON schema:\n{json.dumps(schema, indent=2)}"
    )


def _server_message(err: openai.APIStatusError) -> str:
    """The server's own error text, from an OpenAI-style body when there is one."""
    body = getattr(err, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str) or not message:
        message = str(body) if body else err.message
    return _quote(message)


def _quote(text: str, limit: int = _MAX_QUOTE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_reply(completion: Any, mode: str) -> JsonReply:
    """Validate a chat completion and parse its content as one JSON object."""
    choices = getattr(completion, "choices", None)
    if not choices:
        raise LLMError("the LLM reply has no choices; the endpoint may not be OpenAI-compatible")
    choice = choices[0]
    message = choice.message
    if getattr(message, "refusal", None):
        raise LLMError(f"the model refused: {_quote(message.refusal)}")
    finish = getattr(choice, "finish_reason", None)
    if finish == "length":
        raise LLMError(
            "the model's reply was cut off at its token limit (finish_reason=length); "
            "use a model with a larger context or send less text"
        )
    if finish == "content_filter":
        raise LLMError("the model's reply was withheld by the provider's content filter")
    content = _unwrap(message.content or "")
    if not content:
        raise LLMError("the model returned an empty reply")
    try:
        data = json.loads(content)
    except json.JSONDecodeError as err:
        raise LLMError(
            f"the model's reply is not valid JSON ({err.msg} at char {err.pos}): {_quote(content, 120)!r}"
        ) from None
    except (RecursionError, ValueError) as err:  # absurd nesting, or a number too long to convert
        raise LLMError(f"the model's reply is JSON wolfmem will not read ({type(err).__name__})") from None
    if not isinstance(data, dict):
        raise LLMError(f"the model replied with a JSON {type(data).__name__}, not the JSON object asked for")
    return JsonReply(data=data, usage=_usage(completion), mode=mode)


def _unwrap(content: str) -> str:
    """Strip a leading <think> block and a ```json fence that some local models add."""
    content = _THINK.sub("", content.strip()).strip()
    fenced = _FENCE.match(content)
    return fenced.group(1).strip() if fenced else content


def _usage(completion: Any) -> dict[str, int]:
    usage = getattr(completion, "usage", None)
    return {
        key: int(getattr(usage, key, 0) or 0)
        for key in ("prompt_tokens", "completion_tokens", "total_tokens")
    }
