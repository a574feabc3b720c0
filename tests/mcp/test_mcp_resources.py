"""Resource URIs as refs, subscription bookkeeping, and log levels: the pure parts of the MCP server, by table."""

from __future__ import annotations

import logging

import pytest

from wolfmem import limits
from wolfmem.errors import NotFound, UsageError
from wolfmem.mcp.link import mcp_level
from wolfmem.mcp.resources import Subscriptions, to_ref


@pytest.mark.parametrize(
    ("uri", "ref"),
    [
        ("memory://file/knowledge/people.md", "file:knowledge/people.md"),
        ("memory://file/knowledge/people.md#Sarah%20Chen", "file:knowledge/people.md#Sarah Chen"),
        ("memory://file/notes/my%20ideas.md#L10-L40", "file:notes/my ideas.md#L10-L40"),
        ("memory://file/episodes/2026-11-29.md", "file:episodes/2026-11-29.md"),
        # Confinement is memory_get's job: the ref is passed on as written, and refused there.
        ("memory://file/../../etc/passwd", "file:../../etc/passwd"),
    ],
)
def test_a_file_uri_is_a_ref(uri: str, ref: str) -> None:
    assert to_ref(uri) == ref


@pytest.mark.parametrize(
    "uri", ["memory://map", "memory://file/", "memory://file/a.md?x=1", "memory://files/a.md", "file:///a.md", ""]
)
def test_other_uris_are_refused(uri: str) -> None:
    with pytest.raises(UsageError, match="unknown resource"):
        to_ref(uri)


def test_subscriptions_report_each_change_once() -> None:
    texts = {"memory://map": "a", "memory://file/a.md": "x"}

    def read(uri: str) -> str:
        if texts[uri] is None:
            raise NotFound(f"{uri} is gone")
        return texts[uri]

    subscriptions = Subscriptions(read)
    subscriptions.add("memory://map")
    subscriptions.add("memory://file/a.md")
    assert subscriptions.changed() == []
    texts["memory://map"] = "b"
    assert subscriptions.changed() == ["memory://map"]
    assert subscriptions.changed() == []
    texts["memory://file/a.md"] = None  # deleted: a change the client should read about
    assert subscriptions.changed() == ["memory://file/a.md"]
    subscriptions.remove("memory://map")
    texts["memory://map"] = "c"
    assert subscriptions.changed() == []


def test_subscriptions_are_bounded() -> None:
    subscriptions = Subscriptions(lambda uri: uri)
    for n in range(limits.SUBSCRIPTIONS):
        subscriptions.add(f"memory://file/a.md#L{n + 1}")
    subscriptions.add("memory://file/a.md#L1")  # already there: fine
    with pytest.raises(UsageError, match=f"at most {limits.SUBSCRIPTIONS} subscriptions"):
        subscriptions.add("memory://map")


@pytest.mark.parametrize(
    ("levelno", "level"),
    [(5, "debug"), (logging.DEBUG, "debug"), (logging.INFO, "info"), (25, "notice"), (logging.WARNING, "warning"),
     (logging.ERROR, "error"), (logging.CRITICAL, "critical"), (logging.CRITICAL + 10, "emergency")],
)
def test_python_log_levels_map_to_mcp_levels(levelno: int, level: str) -> None:
    assert mcp_level(levelno) == level
