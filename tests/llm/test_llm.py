"""LLMClient against the real openai client talking HTTP to FakeLLM."""

from __future__ import annotations

import socket
import time

import pytest
from fakellm import FakeLLM

from wolfmem.errors import LLMError
from wolfmem.llm.chat import JsonReply, LLMClient, LLMSettings

KEY = "sk-test-SECRET-0123456789abcdef"
SCHEMA = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
    "additionalProperties": False,
}
GOOD = {"facts": ["Sarah manages the platform team."]}


@pytest.fixture
def fake():
    """A running FakeLLM, stopped after the test."""
    with FakeLLM() as server:
        yield server


@pytest.fixture
def make_client(fake):
    """Build LLMClients pointed at `fake`, closed after the test."""
    clients: list[LLMClient] = []

    def make(**overrides) -> LLMClient:
        settings = dict(base_url=fake.base_url, model="fake-model", api_key=KEY, timeout=5.0, max_retries=0)
        settings.update(overrides)
        client = LLMClient(LLMSettings(**settings))
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def ask(client: LLMClient) -> JsonReply:
    return client.complete_json("Extract facts.", "Sarah manages the platform team.", SCHEMA, "facts")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- settings ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "model", "configured"),
    [
        ("http://localhost:11434/v1", "llama3.1", True),
        (None, "gpt-4o-mini", True),
        ("http://localhost:11434/v1", None, False),
        (None, "", False),
    ],
)
def test_configured_needs_a_model(base_url, model, configured):
    assert LLMSettings(base_url=base_url, model=model, api_key=None).configured is configured


def test_settings_repr_hides_the_key():
    assert KEY not in repr(LLMSettings(base_url=None, model="m", api_key=KEY))


def test_unconfigured_client_is_refused():
    with pytest.raises(LLMError, match="no LLM model"):
        LLMClient(LLMSettings(base_url=None, model=None, api_key=None))


# --- complete_json ----------------------------------------------------------


def test_good_json_uses_json_schema(fake, make_client):
    fake.push(GOOD)
    reply = ask(make_client())
    assert reply == JsonReply(
        data=GOOD, usage={"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}, mode="json_schema"
    )
    [sent] = fake.requests
    assert sent["model"] == "fake-model"
    assert sent["temperature"] == 0
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "facts", "schema": SCHEMA, "strict": True},
    }
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert fake.headers[0]["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"facts": ["Sarah manages the platform team."]}\n```',
        '```\n{"facts": ["Sarah manages the platform team."]}\n```',
        '  ```json\n{"facts": ["Sarah manages the platform team."]}```  ',
        '<think>The user wants facts.</think>\n{"facts": ["Sarah manages the platform team."]}',
    ],
)
def test_fenced_json_is_unwrapped(fake, make_client, content):
    fake.push(FakeLLM.text(content))
    assert ask(make_client()).data == GOOD


def test_missing_usage_counts_as_zero(fake, make_client):
    def no_usage(request):
        reply = FakeLLM.json_reply(GOOD)
        del reply.body["usage"]
        return reply

    fake.push(no_usage)
    assert ask(make_client()).usage == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def test_rejected_json_schema_falls_back_to_json_object(fake, make_client):
    client = make_client()
    fake.push(FakeLLM.reject_json_schema(), GOOD, GOOD)

    first = ask(client)
    assert first.data == GOOD and first.mode == "json_object"
    rejected, fallback = fake.requests
    assert rejected["response_format"]["type"] == "json_schema"
    assert fallback["response_format"] == {"type": "json_object"}
    system = fallback["messages"][0]["content"]
    assert system.startswith("Extract facts.")
    assert '"additionalProperties": false' in system and '"facts"' in system

    # The client remembers: the next call goes straight to json_object.
    assert ask(client).mode == "json_object"
    assert len(fake.requests) == 3
    assert fake.requests[2]["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize(
    "rejection",
    [
        FakeLLM.status(422, "json_schema response_format is not supported"),
        # Until json_schema has worked once, any 400 is taken as "not supported".
        FakeLLM.status(400, "unknown field", type="invalid_request_error"),
    ],
)
def test_other_rejections_fall_back(fake, make_client, rejection):
    fake.push(rejection, GOOD)
    assert ask(make_client()).mode == "json_object"
    assert len(fake.requests) == 2


def test_working_json_schema_is_not_abandoned_on_an_unrelated_400(fake, make_client):
    client = make_client()
    fake.push(GOOD, FakeLLM.status(400, "context length exceeded", type="invalid_request_error"))
    assert ask(client).mode == "json_schema"
    with pytest.raises(LLMError, match="context length exceeded"):
        ask(client)
    assert len(fake.requests) == 2
    assert client.mode == "json_schema"


def test_fallback_that_also_fails_reports_the_server_message(fake, make_client):
    client = make_client()
    fake.push(
        FakeLLM.reject_json_schema(),
        FakeLLM.status(400, "model does not support JSON mode", type="invalid_request_error"),
    )
    with pytest.raises(LLMError, match="does not support JSON mode"):
        ask(client)
    assert client.mode is None


def test_temperature_is_dropped_for_models_that_refuse_it(fake, make_client):
    client = make_client()
    fake.push(
        FakeLLM.status(400, "Unsupported value: 'temperature' does not support 0 with this model."),
        GOOD,
        GOOD,
    )
    assert ask(client).mode == "json_schema"
    assert ask(client).data == GOOD
    first, second, third = fake.requests
    assert first["temperature"] == 0
    assert "temperature" not in second and "temperature" not in third
    assert second["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        (FakeLLM.text('{"facts": ["unterminated'), "not valid JSON"),
        (FakeLLM.text("Sure! Here are the facts."), "not valid JSON"),
        (FakeLLM.text('["a", "b"]'), "JSON list, not the JSON object"),
        (FakeLLM.text(""), "empty reply"),
        (FakeLLM.text(None), "empty reply"),
        (FakeLLM.truncated(), "cut off"),
        (FakeLLM.truncated('{"facts": []}'), "cut off"),  # even parseable text is partial
        (FakeLLM.refusal("I can't help with that."), "refused: I can't help with that"),
        (FakeLLM.content_filtered(), "content filter"),
    ],
)
def test_unusable_replies_raise(fake, make_client, spec, reason):
    fake.push(spec)
    with pytest.raises(LLMError, match=reason):
        ask(make_client())


def test_server_errors_are_retried_by_the_client(fake, make_client):
    fake.push(FakeLLM.status(500), FakeLLM.status(503), GOOD)
    assert ask(make_client(max_retries=2)).data == GOOD
    assert len(fake.requests) == 3


def test_server_error_without_retries_fails_after_one_request(fake, make_client):
    fake.push(FakeLLM.status(500, "upstream exploded"), FakeLLM.status(500))
    with pytest.raises(LLMError, match=r"HTTP 500 after 1 attempt: upstream exploded"):
        ask(make_client(max_retries=0))
    assert len(fake.requests) == 1


def test_timeout_raises(fake, make_client):
    fake.push(FakeLLM.delay(3, GOOD))
    started = time.monotonic()
    with pytest.raises(LLMError, match=r"did not answer within 0.5 s"):
        ask(make_client(timeout=0.5, max_retries=0))
    assert time.monotonic() - started < 2.5


def test_unknown_model_says_so(fake, make_client):
    fake.push(FakeLLM.status(404, "model 'nope' not found", type="not_found_error"))
    with pytest.raises(LLMError, match=r"model 'fake-model' .*not found.*404"):
        ask(make_client())


# --- ping -------------------------------------------------------------------


def test_ping_ok(fake, make_client):
    fake.push(FakeLLM.text("ok"))
    report = make_client().ping()
    assert report.startswith("ok: fake-model at http://127.0.0.1:")
    assert "'ok'" in report and "\n" not in report
    [sent] = fake.requests
    assert sent["max_tokens"] == 16
    assert "response_format" not in sent


def test_ping_retries_with_max_completion_tokens(fake, make_client):
    fake.push(
        FakeLLM.status(400, "Unsupported parameter: 'max_tokens' is not supported with this model."),
        FakeLLM.text("ok"),
    )
    assert make_client().ping().startswith("ok:")
    assert fake.requests[1]["max_completion_tokens"] == 16
    assert "max_tokens" not in fake.requests[1]


def test_ping_closed_port_is_readable(make_client):
    client = make_client(base_url=f"http://127.0.0.1:{closed_port()}/v1")
    with pytest.raises(LLMError) as caught:
        client.ping()
    message = str(caught.value)
    assert message.startswith("cannot reach the LLM endpoint http://127.0.0.1:")
    assert "server is running" in message


def test_bad_key_is_reported_without_the_key(fake, make_client):
    # Real servers echo (part of) the key back; the error must not carry it on.
    fake.push(
        FakeLLM.status(
            401, f"Incorrect API key provided: {KEY}", type="invalid_request_error", error_code="invalid_api_key"
        )
    )
    with pytest.raises(LLMError, match="rejected the API key") as caught:
        make_client().ping()
    assert KEY not in str(caught.value)
    assert len(fake.requests) == 1  # 401 is not retried


@pytest.mark.parametrize("code", [400, 403, 429, 500])
def test_key_never_appears_in_errors(fake, make_client, code):
    fake.push(FakeLLM.status(code, f"something about {KEY}"))
    with pytest.raises(LLMError) as caught:
        make_client(max_retries=0).ping()
    assert KEY not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_missing_key_sends_placeholder(fake, make_client):
    fake.push(FakeLLM.text("ok"))
    make_client(api_key=None).ping()
    assert fake.headers[0]["authorization"] == "Bearer not-needed"
