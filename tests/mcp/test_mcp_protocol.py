"""The rest of the protocol over stdio: resource templates, update notifications, prompts and log messages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
from conftest import wait_until
from mcp import MCPError
from mcpclient import McpClient, spawn

from wolfmem import Config, Memory
from wolfmem.tools.catalog import DOCTRINE

PEOPLE_URI = "memory://file/knowledge/people.md"
# The client warns that subscriptions and logging change in the 2026-07-28 protocol; over stdio
# today's clients negotiate 2025-11-25, where they are how a server notifies.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault with one fact on file, and its state folder."""
    root = tmp_path_factory.mktemp("mcp-protocol")
    with Memory(root / "vault", Config(state_dir=str(root / "state"))) as memory:
        memory.save("Sarah Chen is my manager.", "people", "Sarah Chen")
    return root


@pytest.fixture(scope="module")
def client(home: Path) -> Iterator[McpClient]:
    with spawn(home / "vault", home / "state", home / "server.err") as mcp_client:
        yield mcp_client


def updates(client: McpClient, uri: str) -> int:
    """How many resources/updated notifications for `uri` the client has received."""
    return sum(1 for n in client.notifications
               if isinstance(n, types.ResourceUpdatedNotification) and n.params.uri == uri)


def test_capabilities_include_subscriptions_prompts_and_logging(client: McpClient) -> None:
    capabilities = client.session.server_capabilities
    assert capabilities.resources.subscribe is True
    assert capabilities.prompts is not None and capabilities.logging is not None


def test_templates_name_vault_files_and_sections(client: McpClient) -> None:
    templates = {t.name: t.uri_template for t in client.list_resource_templates().resource_templates}
    assert templates == {"vault_file": "memory://file/{+path}", "vault_section": "memory://file/{+path}{#section}"}


def test_a_template_reads_a_file_a_section_and_a_line_range(client: McpClient) -> None:
    whole = client.read_resource(PEOPLE_URI).contents[0]
    assert whole.mime_type == "text/markdown" and "- Sarah Chen is my manager." in whole.text
    assert whole.text == client.text("memory_get", {"ref": "file:knowledge/people.md"}).split("\n", 1)[1] + "\n"
    section = client.read_resource(PEOPLE_URI + "#Sarah%20Chen").contents[0].text
    assert section.startswith("## Sarah Chen") and "Sarah Chen is my manager." in section
    line = client.read_resource(PEOPLE_URI + "#L1").contents[0].text
    assert line == whole.text.splitlines(keepends=True)[0]


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("memory://file/../../etc/passwd", "outside the vault"),
        ("memory://file/knowledge/nope.md", "no file knowledge/nope.md"),
        ("memory://file/knowledge/people.md#Nobody", "has no section #Nobody"),
        ("memory://elsewhere", "unknown resource"),
        ("file:///etc/passwd", "unknown resource"),
    ],
)
def test_templates_are_confined_like_memory_get(client: McpClient, uri: str, expected: str) -> None:
    with pytest.raises(MCPError, match=expected) as caught:
        client.read_resource(uri)
    assert caught.value.code == types.INVALID_PARAMS


def test_a_hand_edited_heading_updates_the_map_and_a_fact_edit_only_the_file(client: McpClient, home: Path) -> None:
    client.subscribe_resource("memory://map")
    client.subscribe_resource(PEOPLE_URI)
    people = home / "vault" / "knowledge" / "people.md"

    people.write_text(people.read_text("utf-8") + "- Sarah Chen likes short updates.\n", "utf-8")
    wait_until(lambda: updates(client, PEOPLE_URI) == 1)
    # The same look at the vault found the map unchanged: a new fact is not a new heading.
    assert updates(client, "memory://map") == 0

    people.write_text(people.read_text("utf-8") + "\n## Priya Natarajan\n\n- Priya runs the data team.\n", "utf-8")
    wait_until(lambda: updates(client, "memory://map") == 1)
    assert "Priya Natarajan" in client.read_resource("memory://map").contents[0].text

    client.unsubscribe_resource("memory://map")
    people.write_text(people.read_text("utf-8") + "\n## Omar Haddad\n", "utf-8")
    wait_until(lambda: updates(client, PEOPLE_URI) == 3)
    assert updates(client, "memory://map") == 1


def test_subscribing_to_an_unreadable_resource_is_refused(client: McpClient) -> None:
    with pytest.raises(MCPError, match="outside the vault"):
        client.subscribe_resource("memory://file/../secrets.md")


def test_prompts_are_listed_as_commands(client: McpClient) -> None:
    listed = {prompt.name: prompt for prompt in client.list_prompts().prompts}
    assert {name: prompt.title for name, prompt in listed.items()} == {
        "remember": "Remember this", "recall": "Recall", "wrap_up": "Wrap up the session",
    }
    assert [(a.name, a.required) for a in listed["recall"].arguments] == [("question", True)]


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("remember", {"what": "Priya prefers async standups."}, ["memory_save", "one self-contained sentence",
                                                                 "Priya prefers async standups."]),
        ("remember", {}, ["Remember what I just told you", "memory_save"]),
        ("recall", {"question": "Who reviews billing?"}, ["memory_search", "2-3 phrasings", "Who reviews billing?"]),
        ("wrap_up", {}, ["memory_log", "memory_save", "open threads"]),
    ],
)
def test_prompts_build_on_the_doctrine(client: McpClient, name: str, arguments: dict, expected: list[str]) -> None:
    result = client.get_prompt(name, arguments)
    [message] = result.messages
    assert message.role == "user"
    for phrase in expected:
        assert phrase in message.content.text
    assert message.content.text.endswith(DOCTRINE)


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("recall", {}, "needs question"),
        ("recall", {"question": "x", "mood": "y"}, "takes question, not mood"),
        ("recall", {"question": "x" * 20_001}, "at most 20,000"),
        ("forget_everything", {}, "Unknown prompt"),
    ],
)
def test_bad_prompt_requests_are_invalid_params(client: McpClient, name: str, arguments: dict, expected: str) -> None:
    with pytest.raises(MCPError, match=expected) as caught:
        client.get_prompt(name, arguments)
    assert caught.value.code == types.INVALID_PARAMS


def test_warnings_reach_the_client_as_log_messages(client: McpClient, home: Path) -> None:
    client.set_logging_level("warning")
    (home / "vault" / "knowledge" / "blob.md").write_bytes(b"\x00\x01" * 512)  # mostly NUL: binary
    client.text("memory_search", {"query": "Sarah"})  # the search's sync skips the file, with a warning

    def skipped() -> list[types.LoggingMessageNotificationParams]:
        return [n.params for n in client.notifications if isinstance(n, types.LoggingMessageNotification)
                and "skipped knowledge/blob.md" in n.params.data]

    [message] = wait_until(skipped)
    assert message.level == "warning" and message.logger == "wolfmem.search.documents"
