"""Cancellation, signals and EOF of the real `wolfmem mcp` process, driven by the official client.

A call is held in flight by holding the vault lock from this process (as another wolfmem
process would), so each test decides what the server sees first, without sleeping.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from conftest import wait_until
from mcpclient import McpClient, spawn

from wolfmem import Config, Memory

FACT = "Quentin Blake maintains the zeppelin hangar."


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An initialised vault and its state folder."""
    Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state"))).close()
    return tmp_path


@contextmanager
def vault_lock(home: Path) -> Iterator[threading.Event]:
    """Hold people.md's write lock in another thread until the yielded event is set (or the block ends)."""
    release, held = threading.Event(), threading.Event()

    def hold() -> None:
        config = Config(state_dir=str(home / "state"))
        with Memory(home / "vault", config, create=False) as memory, memory.vault.lock("knowledge/people.md"):
            held.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    try:
        yield release
    finally:
        release.set()
        holder.join()


def people(home: Path) -> str:
    return (home / "vault" / "knowledge" / "people.md").read_text("utf-8")


def exited(pid: int) -> bool:
    """Whether the process has ended (a zombie waiting to be reaped counts)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def in_flight(client: McpClient, name: str, arguments: dict) -> object:
    """Send a call and make sure the server has handed it to a worker thread before returning."""
    future = client.call_soon(name, arguments)
    # Requests start in the order they arrive: once a later one is answered, this one is running.
    client.list_tools()
    return future


def test_a_cancelled_save_writes_nothing_and_a_retry_saves(home: Path) -> None:
    with spawn(home / "vault", home / "state", home / "server.err") as client:
        client.text("memory_map", {})
        arguments = {"fact": FACT, "type": "people", "request_id": "r-cancelled"}
        with vault_lock(home):
            future = in_flight(client, "memory_save", arguments)
            future.cancel()
            wait_until(lambda: "client cancelled request" in client.log())
        wait_until(lambda: "stopped: cancelled before saving" in client.log())
        assert FACT not in people(home)
        # The cancelled call stored no receipt: the retry saves, and is not a replay.
        retry = client.call("memory_save", arguments)
        assert retry.structured_content["status"] == "saved"
        assert retry.structured_content["replayed"] is False
        assert people(home).count(FACT) == 1


@pytest.mark.slow
def test_a_cancelled_search_stops_at_a_checkpoint_and_other_calls_go_on(home: Path) -> None:
    with spawn(home / "vault", home / "state", home / "server.err") as client:
        client.text("memory_map", {})
        with vault_lock(home):
            # The save waits for people.md's lock while holding the server's Memory; the search waits behind it.
            save = in_flight(client, "memory_save", {"fact": FACT, "type": "people"})
            search = in_flight(client, "memory_search", {"query": "zeppelin hangar"})
            search.cancel()
            wait_until(lambda: "client cancelled request" in client.log())
        assert save.result(timeout=30).structured_content["status"] == "saved"
        # Then the cancelled search takes the Memory and stops at its checkpoint: once over 10 s in a loaded --all run.
        wait_until(lambda: "memory_search (request" in client.log(), timeout=45)
        assert "stopped: cancelled before bringing the index up to date" in client.log()
        assert FACT in client.text("memory_search", {"query": "zeppelin hangar"})


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to see the process end")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.slow
def test_a_signal_stops_the_server_with_stdin_still_open_and_a_save_in_flight_unwritten(
    home: Path, signum: signal.Signals
) -> None:
    with spawn(home / "vault", home / "state", home / "server.err") as client:
        client.text("memory_map", {})
        with vault_lock(home):
            future = in_flight(client, "memory_save", {"fact": FACT, "type": "people"})
            os.kill(client.pid, signum)
            wait_until(lambda: f"received {signum.name}; stopping" in client.log())
        wait_until(lambda: exited(client.pid))
        future.cancel()
        log = client.log()
        assert "stopped: cancelled before saving" in log
        # Ctrl+C ends as any interrupted command does (exit 130, one line); SIGTERM, a service stop, quietly.
        assert log.rstrip().endswith("stopped\nwolfmem: interrupted" if signum == signal.SIGINT else "stopped")
    assert FACT not in people(home)


@pytest.mark.slow
def test_eof_ends_the_server_while_a_call_runs_and_the_save_is_whole_or_absent(home: Path) -> None:
    with ExitStack() as lock, spawn(home / "vault", home / "state", home / "server.err") as client:
        client.text("memory_map", {})
        release = lock.enter_context(vault_lock(home))
        in_flight(client, "memory_save", {"fact": FACT, "type": "people"})
        # Let the save go once the server has seen EOF, which leaving this block sends.
        threading.Thread(target=lambda: (wait_until(lambda: "stdin closed" in client.log()), release.set())).start()
    log = client.log()
    # It stopped by itself within the client's grace period: the client never had to send SIGTERM.
    assert log.rstrip().endswith("stopped") and "received SIGTERM" not in log
    assert people(home).count(FACT) in (0, 1)
    assert all(line == f"- {FACT}" for line in people(home).splitlines() if "zeppelin" in line)


@pytest.mark.parametrize("stdin_first", [False, True], ids=["reply-to-a-closed-pipe", "eof-first"])
@pytest.mark.slow
def test_a_client_killed_mid_call_is_a_normal_end(home: Path, stdin_first: bool) -> None:
    from mcpclient import spawn_raw

    with spawn_raw(home / "vault", home / "state", home / "server.err") as server:
        with vault_lock(home):
            server.send(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
                "name": "memory_save", "arguments": {"fact": FACT, "type": "people"}}}))
            assert server.request("tools/list", id=6)["id"] == 6  # so the save is in a worker, waiting for the lock
            # The client dies with the call still running: its ends of the pipes close.
            if stdin_first:
                server.process.stdin.close()
            server.process.stdout.close()
        # Without EOF first, the save lands and its reply meets the closed pipe, which ends the server.
        code = server.process.wait(timeout=30)
    log = server.log()
    assert code == 0, log
    assert "Traceback" not in log and "Error" not in log, log
    assert log.count("the client is gone") == 1, log
    assert people(home).count(FACT) in (0, 1)


def test_requests_read_from_a_file_are_all_answered_before_exit(home: Path) -> None:
    # `wolfmem mcp < requests.jsonl`: stdin ends at once, while the saves wait for people.md's lock.
    calls = [{"name": "memory_save", "arguments": {"fact": f"Zora {n} keeps the lighthouse log.", "type": "people"}}
             for n in (1, 2, 3)] + [{"name": "memory_search", "arguments": {"query": "lighthouse"}}]
    lines = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "file", "version": "0"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    lines += [json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call})
              for n, call in enumerate(calls, start=1)]
    lines += [json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}), '{"jsonrpc": "2.0", "id": 6, "meth']
    requests = home / "requests.jsonl"
    requests.write_text("\n".join(lines), "utf-8")  # the last line has no newline, as a hand-made file may end
    errlog = home / "server.err"
    env = {**os.environ, "WOLFMEM_STATE_DIR": str(home / "state"), "XDG_CONFIG_HOME": str(home / "no-config")}
    with vault_lock(home), open(requests, "rb") as stdin, open(errlog, "wb") as err:
        server = subprocess.Popen([sys.executable, "-m", "wolfmem", "mcp", "--vault", str(home / "vault")],
                                  stdin=stdin, stdout=subprocess.PIPE, stderr=err, env=env)
        wait_until(lambda: "stdin closed" in errlog.read_text("utf-8"), timeout=30)
    out, _ = server.communicate(timeout=60)
    replies = {message["id"]: message for message in map(json.loads, out.splitlines()) if "id" in message}
    assert sorted(replies) == [0, 1, 2, 3, 4, 5, 6], errlog.read_text("utf-8")
    assert server.returncode == 0
    assert all(replies[n]["result"]["structuredContent"]["status"] == "saved" for n in (1, 2, 3))
    assert replies[6]["error"]["code"] == -32700
    assert all(people(home).count(f"Zora {n} keeps") == 1 for n in (1, 2, 3))
