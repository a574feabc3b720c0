"""The 2026-07-28 protocol over stdio (no handshake, a `_meta` envelope per request): what such a client gets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcpclient import RawServer, spawn_raw

from wolfmem import Config, Memory

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}}
PEOPLE_URI = "memory://file/knowledge/people.md"


def messages(server: RawServer, count: int) -> list[dict[str, Any]]:
    return [server.reply(timeout=10) for _ in range(count)]


@pytest.mark.slow
def test_a_2026_client_subscribes_with_listen_and_hears_of_changes(tmp_path: Path) -> None:
    Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state"))).close()
    with spawn_raw(tmp_path / "vault", tmp_path / "state", tmp_path / "server.err", initialize=False) as server:
        discovered = server.request("server/discover", {"_meta": META}, id=1)["result"]
        assert discovered["capabilities"]["resources"]["subscribe"] is True
        server.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen", "params": {
            "_meta": META, "notifications": {"resourceSubscriptions": [PEOPLE_URI]}}}))
        [ack] = messages(server, 1)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"]["resourceSubscriptions"] == [PEOPLE_URI]

        people = tmp_path / "vault" / "knowledge" / "people.md"
        people.write_text(people.read_text("utf-8") + "- Tom Lee plays chess.\n", "utf-8")
        [update] = messages(server, 1)
        assert update["method"] == "notifications/resources/updated"
        assert update["params"]["uri"] == PEOPLE_URI
        assert update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 2

        called = server.request("tools/call", {"_meta": META, "name": "memory_search",
                                               "arguments": {"query": "chess"}}, id=3)
        assert "Tom Lee plays chess." in called["result"]["content"][0]["text"]


@pytest.mark.slow
def test_listening_to_a_resource_outside_the_vault_is_refused(tmp_path: Path) -> None:
    Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state"))).close()
    with spawn_raw(tmp_path / "vault", tmp_path / "state", tmp_path / "server.err", initialize=False) as server:
        server.request("server/discover", {"_meta": META}, id=1)
        refused = server.request("subscriptions/listen", {"_meta": META, "notifications": {
            "resourceSubscriptions": ["memory://file/../secrets.md"]}}, id=2)
        assert refused["error"]["code"] == -32602 and "outside the vault" in refused["error"]["message"]
