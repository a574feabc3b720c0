"""Under every environment fault, each public Memory method returns or raises a WolfmemError, nothing else.

The README promises that the API raises only WolfmemError subclasses; this sweeps the methods
through each fault (real chmod, garbage bytes, a full or read-only tmpfs) and then checks that no
fact on file was lost once the fault is gone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from faultkit import fill, remount, small_disk, unprivileged

from wolfmem import Config, Memory, WolfmemError

FACTS = ["Sarah Chen is my manager.", "We deploy with Ansible from the ops repo."]
CALLS: dict[str, Callable[[Memory], object]] = {
    "save": lambda m: m.save("Bob Lee is the CTO.", "people", "Bob Lee"),
    "log_episode": lambda m: m.log_episode(["Met Bob Lee"]),
    "search": lambda m: m.search("manager"),
    "get": lambda m: m.get("knowledge/people.md#Sarah"),
    "memory_map": lambda m: m.memory_map(),
    "status": lambda m: m.status(),
    "sync": lambda m: m.sync(),
    "reindex": lambda m: m.reindex(),
}


def _chmod(path: Path, mode: int) -> Iterator[None]:
    with unprivileged():
        path.chmod(mode)
        try:
            yield
        finally:
            path.chmod(0o755 if path.is_dir() else 0o644)


@contextlib.contextmanager
def fault(kind: str, vault: Path, state: Path) -> Iterator[None]:
    """Inject one fault around the block; the vault and state live on the tmpfs at their parent."""
    if kind == "unreadable file":
        yield from _chmod(vault / "knowledge/people.md", 0)
    elif kind == "unreadable folder":
        yield from _chmod(vault / "knowledge", 0)
    elif kind == "lock denied":
        yield from _chmod(next(state.glob("vaults/*/locks")), 0)  # every file lock and the index lock
    elif kind == "state not writable":
        with unprivileged():
            folders = [next(state.glob("vaults/*")), next(state.glob("vaults/*/index"))]
            for folder in folders:
                folder.chmod(0o555)
            try:
                yield
            finally:
                for folder in folders:
                    folder.chmod(0o755)
    elif kind == "garbage state":
        for name in ("state.db", "history.sqlite", "index/catalog.sqlite"):
            next(state.glob(f"vaults/*/{name}")).write_bytes(b"\x00garbage" * 2048)
        yield
    elif kind in ("full disk", "read-only disk"):
        disk = vault.parent
        if kind == "full disk":
            filler = fill(disk)
            try:
                yield
            finally:
                filler.unlink()
        else:
            remount(disk, "ro")
            try:
                yield
            finally:
                remount(disk, "rw")
    else:
        raise AssertionError(kind)


KINDS = ["unreadable file", "unreadable folder", "lock denied", "state not writable", "garbage state",
         "full disk", "read-only disk"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_method_raises_only_wolfmem_errors_and_nothing_is_lost(tmp_path, kind):
    with small_disk(tmp_path / "disk", "8m") as disk:
        vault, state = disk / "vault", disk / "state"
        config = Config(state_dir=str(state))
        with Memory(vault, config) as memory:
            memory.save(FACTS[0], "people", "Sarah Chen")
            memory.save(FACTS[1], "technical")
        outcomes: dict[str, str] = {}
        with fault(kind, vault, state):
            memory = None
            try:
                memory = Memory(vault, config)
                for name, call in CALLS.items():
                    try:
                        call(memory)
                        outcomes[name] = "ok"
                    except WolfmemError as exc:
                        outcomes[name] = f"{type(exc).__name__}: {exc}"
            except WolfmemError as exc:
                outcomes["open"] = f"{type(exc).__name__}: {exc}"
            finally:
                if memory is not None:
                    memory.close()
        assert all(outcome == "ok" or len(outcome) > 40 for outcome in outcomes.values()), outcomes  # errors say why
        with Memory(vault, config) as memory:
            for fact in FACTS:
                assert any(hit.text == fact for hit in memory.search(fact, limit=3)), (kind, fact, outcomes)
