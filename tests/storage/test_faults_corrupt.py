"""Garbage in wolfmem's own databases: detected, moved aside with a timestamp, rebuilt; the vault untouched.

Each database gets three kinds of damage: garbage over the whole file, garbage over its pages past
the header (malformed pages), and another program's SQLite database in its place. The commands that
follow run in real subprocesses, as a person would after the damage.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import run_cli
from faultkit import no_traceback

from wolfmem import Config, Memory
from wolfmem.storage.db import ASIDE

FACTS = ["Sarah Chen is my manager.", "Priya runs the data platform team.", "Marco owns the billing service."]
DATABASES = ["state.db", "history.sqlite", "index/catalog.sqlite"]


def damage(path: Path, how: str) -> None:
    settle = sqlite3.connect(path)  # fold the write-ahead log into the file, as a last close does
    settle.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    settle.close()
    for companion in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        companion.unlink(missing_ok=True)
    if how == "garbage":
        path.write_bytes(b"\x8f garbage \x00" * 4096)
    elif how == "pages":
        data = bytearray(path.read_bytes())
        assert len(data) > 4096, "the database must have pages past the header"
        data[4096:] = b"\xa5" * (len(data) - 4096)
        path.write_bytes(bytes(data))
    else:
        path.unlink()
        other = sqlite3.connect(path)
        other.execute("CREATE TABLE receipts (invoice INTEGER, amount REAL)")  # a name clash, other columns
        other.execute("INSERT INTO receipts VALUES (1, 9.5)")
        other.commit()
        other.close()


def markdown_of(vault: Path) -> dict[str, bytes]:
    return {str(p.relative_to(vault)): p.read_bytes() for p in sorted(vault.rglob("*.md"))}


@pytest.fixture
def populated(vault: Path, config: Config, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A vault with saves, an episode, history and an index, written by processes that exited cleanly."""
    monkeypatch.setenv("WOLFMEM_VAULT", str(vault))
    for fact in FACTS:
        assert run_cli("save", fact, "--type", "people").returncode == 0
    assert run_cli("log", "Reviewed the billing service outage", "--headline", "Incident").returncode == 0
    assert run_cli("search", "billing").returncode == 0
    return Memory(vault, config, create=False).vault.state_dir


@pytest.mark.parametrize("how", ["garbage", "pages", "foreign"])
@pytest.mark.parametrize("name", DATABASES)
@pytest.mark.slow
def test_a_damaged_database_is_moved_aside_and_rebuilt(vault, config, populated, name, how):
    state = populated
    damage(state / name, how)
    before = markdown_of(vault)

    search = run_cli("search", "billing service", "--json")
    assert search.returncode == 0 and no_traceback(search), search.stderr
    assert "Marco owns the billing service." in [hit["text"] for hit in json.loads(search.stdout)]
    save = run_cli("save", "Lena joined the search team.", "--type", "people")
    assert save.returncode == 0 and no_traceback(save), save.stderr
    status = run_cli("status")
    assert status.returncode == 0 and no_traceback(status), status.stderr

    after = markdown_of(vault)
    people = "knowledge/people.md"
    assert {rel: data for rel, data in after.items() if rel != people} == \
        {rel: data for rel, data in before.items() if rel != people}
    assert all(fact in after[people].decode() for fact in [*FACTS, "Lena joined the search team."])

    original = Path(name).name if name != "index/catalog.sqlite" else "index"
    asides = sorted(state.glob(f"{original}.{ASIDE}-*"))
    assert asides, f"nothing of {name} was moved aside: {sorted(p.name for p in state.iterdir())}"
    assert f"{original} was found damaged" in status.stdout and "moved aside" in status.stdout
    with Memory(vault, config) as memory:
        for fact in [*FACTS, "Lena joined the search team."]:
            assert any(hit.text == fact for hit in memory.search(fact, limit=3)), fact


@pytest.mark.slow
def test_damage_found_while_open_heals_at_the_next_call(vault, config, populated):
    with Memory(vault, config) as memory:
        assert memory.search("Priya")
        catalog = memory.vault.index_dir / "catalog.sqlite"
        memory.index.catalog._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        data = bytearray(catalog.read_bytes())
        data[4096:] = b"\xa5" * (len(data) - 4096)
        catalog.write_bytes(bytes(data))
        # Drop the connection's page cache, so the next read meets the damaged pages on disk.
        memory.index.catalog._db.execute("PRAGMA shrink_memory")
        memory.index.catalog._manifest_generation = -2
        assert next(hit.text for hit in memory.search("Priya data platform")) == FACTS[1]
        assert list(memory.vault.state_dir.glob(f"index.{ASIDE}-*"))


@pytest.mark.slow
def test_an_old_damaged_index_copy_is_replaced_by_the_newest(vault, config, populated):
    state = populated
    for _ in range(2):
        damage(state / "index/catalog.sqlite", "garbage")
        assert run_cli("search", "Priya").returncode == 0
    assert len(list(state.glob(f"index.{ASIDE}-*"))) == 1  # index copies are big and rebuildable: one kept
