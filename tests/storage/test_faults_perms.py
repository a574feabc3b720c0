"""Permission denied on a curated file, a folder, the vault lock or the state folder (real chmod).

As root, `unprivileged()` drops the capability that ignores file modes, so chmod bites here too.
Every test ends with the mode restored and every fact on file searchable again, with no command run
in between: wolfmem notices by itself.
"""

from __future__ import annotations

import os
from datetime import date, datetime
from pathlib import Path

import pytest
from conftest import run_cli
from faultkit import no_traceback, run_cli_unprivileged, unprivileged

from wolfmem import Config, Memory
from wolfmem.curation import run as curate
from wolfmem.curation.offline import OfflineCurator
from wolfmem.errors import StorageError
from wolfmem.ops.status import collect, render

SARAH = "Sarah Chen is my manager."
DEPLOY = "We deploy with Ansible from the ops repo."
DAY = date(2026, 11, 4)


def searchable(memory: Memory, fact: str) -> bool:
    return any(hit.text == fact for hit in memory.search(fact, limit=5))


@pytest.fixture
def cli_env(vault: Path, config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WOLFMEM_VAULT", str(vault))
    monkeypatch.setenv("WOLFMEM_STATE_DIR", str(config.state_dir))


def test_an_unreadable_curated_file_is_reported_skipped_and_picked_up_again(vault, config, cli_env):
    people = vault / "knowledge" / "people.md"
    with Memory(vault, config, clock=lambda: datetime(2026, 11, 4, 12)) as memory:
        memory.save(SARAH, "people", "Sarah Chen")
        memory.log_episode(["Sarah Chen asked for the Q4 roadmap"], headline="1:1")
        with unprivileged():
            people.chmod(0)
            try:
                with pytest.raises(StorageError, match=r"cannot read knowledge/people\.md: permission denied"):
                    memory.save("Bob Lee is the CTO.", "people", "Bob Lee")
                assert memory.save(DEPLOY, "technical").status == "saved"  # the other files carry on
                assert searchable(memory, DEPLOY)

                data = collect(memory)
                assert [f["path"] for f in data["faults"] if f["kind"] == "unreadable"] == ["knowledge/people.md"]
                assert "cannot read" in data["index"]["skipped_files"]["knowledge/people.md"]
                assert "fault:    cannot read knowledge/people.md: permission denied" in render(data)

                skipped = curate.run(memory.services, OfflineCurator(), DAY)
                outcome = skipped.files["knowledge/people.md"]
                assert outcome.status == "skipped" and "permission denied" in outcome.reasons[0]
                assert skipped.status == "partial"  # technical.md was curated; people.md waits

                status = run_cli_unprivileged("status")
                assert status.returncode == 0 and "knowledge/people.md" in status.stdout and no_traceback(status)
                save = run_cli_unprivileged("save", "Bob Lee is the CTO.", "--type", "people")
                assert save.returncode == 1 and "permission denied" in save.stderr and no_traceback(save)
            finally:
                people.chmod(0o644)

        # chmod changes neither mtime nor size; the next search still sees the file again.
        assert searchable(memory, SARAH)
        assert collect(memory)["faults"] == []
        again = curate.run(memory.services, OfflineCurator(), DAY)
        assert again.files["knowledge/people.md"].status in {"written", "unchanged"}
        assert SARAH in people.read_text()


def test_an_unreadable_folder_hides_its_notes_until_it_is_readable(vault, config):
    with Memory(vault, config) as memory:
        memory.log_episode(["Shipped the billing export"], headline="Release")
        memory.save(SARAH, "people", "Sarah Chen")
        episodes = vault / "episodes"
        with unprivileged():
            episodes.chmod(0)
            try:
                assert searchable(memory, SARAH)
                with pytest.raises(StorageError, match="permission denied"):
                    memory.log_episode(["Another note"])
            finally:
                episodes.chmod(0o755)
        assert searchable(memory, "Shipped the billing export")


def test_a_vault_lock_that_cannot_be_opened_refuses_writes_and_spares_reads(vault, config, cli_env):
    with Memory(vault, config) as memory:
        memory.save(SARAH, "people", "Sarah Chen")
        lock = memory.vault.state_dir / "locks"  # each file's write lock, and the index's
        before = (vault / "knowledge/people.md").read_bytes()
        with unprivileged():
            lock.chmod(0)
            try:
                denied = r"cannot take the write lock .*people\.md-.*\.lock: permission denied"
                with pytest.raises(StorageError, match=denied):
                    memory.save("Bob Lee is the CTO.", "people", "Bob Lee")
                with pytest.raises(StorageError, match="write lock"):
                    memory.log_episode(["A note"])
                assert searchable(memory, SARAH)
                assert (vault / "knowledge/people.md").read_bytes() == before
                cli = run_cli_unprivileged("save", "Bob Lee is the CTO.", "--type", "people")
                assert cli.returncode == 1 and "write lock" in cli.stderr and no_traceback(cli)
            finally:
                lock.chmod(0o755)
        assert memory.save("Bob Lee is the CTO.", "people", "Bob Lee").status == "saved"
        assert searchable(memory, "Bob Lee is the CTO.")


def test_a_state_folder_that_refuses_writes_keeps_the_vault_the_truth(vault, config, cli_env):
    assert run_cli("save", SARAH, "--type", "people", "--topic", "Sarah Chen").returncode == 0
    assert run_cli("search", "Sarah").returncode == 0  # indexed by a process that closed cleanly
    state = Memory(vault, config, create=False).vault.state_dir
    folders = [state, state / "index"]
    with unprivileged():
        for folder in folders:
            folder.chmod(0o555)
        try:
            with Memory(vault, config) as memory:
                assert searchable(memory, SARAH)
                # The vault takes the write: it is the truth, and only this machine's bookkeeping lags.
                assert memory.save("Bob Lee is the CTO.", "people", "Bob Lee").status == "saved"
                try:
                    memory.search("Bob Lee")
                except StorageError as exc:  # the index cannot take the new fact: said so, no stale answer
                    assert "read-only" in str(exc) or "permission denied" in str(exc), exc
            cli = run_cli_unprivileged("search", "Bob Lee")
            assert cli.returncode in (0, 1) and no_traceback(cli), cli.stderr
        finally:
            for folder in folders:
                folder.chmod(0o755)
    with Memory(vault, config) as memory:
        assert searchable(memory, SARAH) and searchable(memory, "Bob Lee is the CTO.")
        assert memory.save(DEPLOY, "technical").status == "saved"
        assert memory.history.versions("knowledge/technical.md")  # history records again


def test_a_read_only_file_is_never_replaced_and_the_rest_goes_on(vault, config):
    # A rename replaces a file whatever its mode: a save wrote through a people.md made read-only (chmod 444).
    with Memory(vault, config, clock=lambda: datetime(2026, 11, 4, 9)) as memory:
        memory.save(SARAH, "people", "Sarah Chen")
        memory.log_episode("Met Sarah about the budget")
        people, day = vault / "knowledge/people.md", vault / "episodes/2026-11-04.md"
        frozen = {path: path.read_bytes() for path in (people, day)}
        with unprivileged():
            for path in frozen:
                path.chmod(0o444)
            try:
                with pytest.raises(StorageError, match=r"people\.md: it is read-only .*chmod u\+w"):
                    memory.save("Sarah Chen prefers tea.", "people", "Sarah Chen")
                with pytest.raises(StorageError, match="read-only"):
                    memory.log_episode("Deployed v2")
                result = curate.run(memory.services, OfflineCurator(), DAY)  # finishes; the file is left alone
                assert memory.save(DEPLOY, "technical").status == "saved"  # other files take writes
            finally:
                for path in frozen:
                    path.chmod(0o644)
        assert {path: path.read_bytes() for path in frozen} == frozen
        assert result is not None and not any(name.endswith(".tmp") for name in os.listdir(vault / "knowledge"))
        assert memory.save("Sarah Chen prefers tea.", "people", "Sarah Chen").status == "saved"
        assert searchable(memory, "Sarah Chen prefers tea.") and searchable(memory, DEPLOY)
