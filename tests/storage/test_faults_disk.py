"""A full or read-only disk under the vault or the state folder: clear errors, nothing half-written, recovery.

Each test mounts a small tmpfs (root only; skipped elsewhere), fills it or remounts it read-only, and
checks that writes fail with a WolfmemError that says how to fix it, that reads which need no write go
on, that nothing on disk is half-written, and that wolfmem works again by itself once the fault clears.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest
from conftest import run_cli
from faultkit import fill, no_traceback, remount, small_disk

from wolfmem import Config, Memory, WolfmemError
from wolfmem.errors import StorageError

FACTS = [f"Colleague {name} works on the {team} team." for name, team in
         [("Ana", "billing"), ("Ben", "search"), ("Cy", "infra"), ("Dee", "mobile"), ("Eli", "data")]]


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root (hidden ones and temp files included) with its bytes."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name != "filler.bin"
    }


def searchable(memory: Memory, fact: str) -> bool:
    return any(hit.text == fact for hit in memory.search(fact, limit=5))


def use_vault(monkeypatch: pytest.MonkeyPatch, vault: Path, config: Config) -> None:
    monkeypatch.setenv("WOLFMEM_VAULT", str(vault))
    monkeypatch.setenv("WOLFMEM_STATE_DIR", str(config.state_dir))


def test_a_full_vault_refuses_writes_clearly_and_recovers_when_space_returns(tmp_path, config, monkeypatch):
    with small_disk(tmp_path / "disk", "2m") as disk:
        vault = disk / "vault"
        use_vault(monkeypatch, vault, config)
        with Memory(vault, config) as memory:
            memory.save(FACTS[0], "people", "Ana")
            before = tree(vault)
            filler = fill(disk)

            with pytest.raises(StorageError, match="disk is full; free some space"):
                memory.save(FACTS[1], "people", "Ben")
            with pytest.raises(StorageError, match=r"cannot write episodes/.*disk is full"):
                memory.log_episode(["Deployed v2 to staging"])
            assert tree(vault) == before  # not a byte changed, no temp file left behind
            # Reads need no write to the vault.
            assert searchable(memory, FACTS[0])
            assert FACTS[0] in memory.get("knowledge/people.md").text
            cli = run_cli("save", FACTS[2], "--type", "people")
            assert cli.returncode == 1 and "disk is full" in cli.stderr and no_traceback(cli)

            filler.unlink()
            assert memory.save(FACTS[1], "people", "Ben").status == "saved"
            assert run_cli("save", FACTS[2], "--type", "people").returncode == 0
            assert all(searchable(memory, fact) for fact in FACTS[:3])


def test_a_full_state_folder_fails_clearly_loses_nothing_and_catches_up(tmp_path, monkeypatch):
    with small_disk(tmp_path / "disk", "6m") as disk:
        config = Config(state_dir=str(disk / "state"))
        vault = tmp_path / "vault"
        use_vault(monkeypatch, vault, config)
        with Memory(vault, config) as memory:
            memory.save(FACTS[0], "people", "Ana")
            filler = fill(disk)

            saved = [FACTS[0]]
            for fact in FACTS[1:]:
                try:
                    receipt = memory.save(fact, "people")
                except WolfmemError as exc:
                    assert "disk is full" in str(exc), exc
                else:
                    assert receipt.status == "saved"
                    saved.append(fact)
            on_file = (vault / "knowledge/people.md").read_text()
            assert all(fact in on_file for fact in saved)  # a save that said "saved" is on file
            try:
                memory.search("team")
            except WolfmemError as exc:  # the index needs a write it cannot make: said so, not stale answers
                assert "disk is full" in str(exc)
            cli = run_cli("search", "team")
            assert cli.returncode in (0, 1) and no_traceback(cli), cli.stderr
            assert "disk is full" in cli.stderr or cli.returncode == 0

            filler.unlink()
            # Once space returns, every fact on file is found, with no command run in between.
            on_file = (vault / "knowledge/people.md").read_text()
            assert all(searchable(memory, fact) for fact in FACTS if fact in on_file)
            assert set(saved) <= {fact for fact in FACTS if fact in on_file}
            assert memory.save("Fay leads the platform team.", "people").status == "saved"


@pytest.mark.slow
def test_a_failed_index_commit_leaves_no_write_lock_behind(tmp_path, monkeypatch):
    with small_disk(tmp_path / "disk", "16m") as disk:
        config = Config(state_dir=str(disk / "state"))
        vault = tmp_path / "vault"
        use_vault(monkeypatch, vault, config)
        with Memory(vault, config) as memory:
            memory.log_episode(["Kickoff with the search team"])
            filler = fill(disk)
            (vault / "episodes" / "2020-01-01.md").write_text(
                "# 2020-01-01\n\n## 10:00 — notes\n" + "".join(f"- lorem ipsum item {n}\n" for n in range(3000))
            )
            with pytest.raises(StorageError, match=r"cannot write the index.*disk is full") as failed:
                memory.search("lorem")
            assert failed.value.__traceback__ is not None  # the failure (and its frames) are still alive here

            lock = memory.vault.index_dir / "MAIN_WRITELOCK"
            fd = os.open(lock, os.O_WRONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if anyone still holds it
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

            filler.unlink()
            # Another process writes the index at once (a held lock would make it wait 30 s and fail).
            cli = run_cli("search", "lorem ipsum item", timeout=25)
            assert cli.returncode == 0 and "lorem ipsum item" in cli.stdout, cli.stderr
            assert searchable(memory, "lorem ipsum item 7")


def test_a_read_only_vault_refuses_writes_and_serves_reads(tmp_path, config, monkeypatch):
    with small_disk(tmp_path / "disk", "4m") as disk:
        vault = disk / "vault"
        use_vault(monkeypatch, vault, config)
        with Memory(vault, config) as memory:
            memory.save(FACTS[0], "people", "Ana")
            memory.log_episode(["Planned the billing migration"])
        before = tree(vault)
        remount(disk, "ro")
        try:
            with Memory(vault, config) as memory:
                with pytest.raises(StorageError, match="read-only; remount it read-write"):
                    memory.save(FACTS[1], "people", "Ben")
                with pytest.raises(StorageError, match="read-only"):
                    memory.log_episode(["A new note"])
                assert searchable(memory, FACTS[0])
                assert "Ana" in memory.memory_map()
                assert "billing migration" in memory.get(memory.search("billing migration")[0].ref).text
            cli = run_cli("save", FACTS[1], "--type", "people")
            assert cli.returncode == 1 and "read-only" in cli.stderr and no_traceback(cli)
            status = run_cli("status")
            assert status.returncode == 0 and "read-only file system" in status.stdout, status.stderr
        finally:
            remount(disk, "rw")
        assert tree(vault) == before
        with Memory(vault, config) as memory:
            assert memory.save(FACTS[1], "people", "Ben").status == "saved"
            assert searchable(memory, FACTS[1])


@pytest.mark.slow
def test_a_read_only_state_folder_serves_reads_refuses_writes_and_recovers(tmp_path, monkeypatch):
    with small_disk(tmp_path / "disk", "8m") as disk:
        config = Config(state_dir=str(disk / "state"))
        vault = tmp_path / "vault"
        use_vault(monkeypatch, vault, config)
        # Written by another process, which closes its databases cleanly on exit.
        assert run_cli("init").returncode == 0
        assert run_cli("save", FACTS[0], "--type", "people", "--topic", "Ana").returncode == 0
        assert run_cli("search", "Ana").returncode == 0
        remount(disk, "ro")
        try:
            with Memory(vault, config) as memory:
                assert searchable(memory, FACTS[0])
                assert FACTS[0] in memory.get("knowledge/people.md").text
                with pytest.raises(StorageError, match="read-only"):
                    memory.save(FACTS[1], "people", "Ben")
                assert FACTS[1] not in (vault / "knowledge/people.md").read_text()
                cli = run_cli("save", FACTS[2], "--type", "people")
                assert cli.returncode == 1 and "read-only" in cli.stderr and no_traceback(cli)
                remount(disk, "rw")
                # The same Memory writes again once the folder can be written: no restart needed.
                assert memory.save(FACTS[1], "people", "Ben").status == "saved"
                assert searchable(memory, FACTS[1])
        finally:
            remount(disk, "rw")


def test_a_save_that_lands_on_a_full_state_folder_says_saved_with_a_warning(tmp_path, monkeypatch, caplog):
    with small_disk(tmp_path / "disk", "6m") as disk:
        config = Config(state_dir=str(disk / "state"))
        vault = tmp_path / "vault"
        use_vault(monkeypatch, vault, config)
        with Memory(vault, config) as memory:
            memory.save(FACTS[0], "people", "Ana")
            filler = fill(disk)

            receipt = memory.save(FACTS[1], "people", "Ben", request_id="req-ben")

            assert receipt.status == "saved"
            people = vault / "knowledge/people.md"
            assert people.read_text().count(FACTS[1]) == 1  # the bullet is on file: the vault is the truth
            assert receipt.warning and "not recorded" in receipt.warning and "disk is full" in receipt.warning
            assert "disk is full" in receipt.message
            assert any(r.levelname == "WARNING" and "disk is full" in r.getMessage() for r in caplog.records)
            # A retry with the same request_id while the disk is full: refused before anything is written
            # (the index cannot take the new line yet), never written twice.
            with pytest.raises(StorageError, match="disk is full"):
                memory.save(FACTS[1], "people", "Ben", request_id="req-ben")
            assert people.read_text().count(FACTS[1]) == 1

            filler.unlink()
            # Once space returns the retry is answered from the file: the same line, still once.
            again = memory.save(FACTS[1], "people", "Ben", request_id="req-ben")
            assert (again.status, again.ref, again.warning) == ("duplicate", receipt.ref, None)
            assert people.read_text().count(FACTS[1]) == 1
            assert searchable(memory, FACTS[1])
