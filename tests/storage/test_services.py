"""The vault's services: built once, held by Memory, and all that curation and jobs are handed."""

from __future__ import annotations

import ast
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from wolfmem import Config, Memory
from wolfmem.curation import run as curate
from wolfmem.curation.offline import OfflineCurator
from wolfmem.errors import NotAVault
from wolfmem.jobs.runner import JobRunner
from wolfmem.jobs.tasks import JobStatus
from wolfmem.storage.services import VaultServices, open_services
from wolfmem.storage.writer import Cause

NOW = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)
PEOPLE = "knowledge/people.md"
PACKAGE = Path(__file__).resolve().parents[2] / "wolfmem"


@pytest.fixture
def services(tmp_path):
    """Services over a new vault with no Memory (no index, no search layer) anywhere in the process."""
    made = open_services(Config(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state")), lambda: NOW)
    yield made
    made.close()


def test_memory_holds_the_services_it_built_once(vault, config):
    with Memory(vault, config, clock=lambda: NOW) as memory:
        services = memory.services
        assert isinstance(services, VaultServices) and services.clock() == NOW
        assert (memory.vault, memory.state, memory.writer, memory.archive, memory.provenance, memory.history) == (
            services.vault, services.state, services.writer, services.archive, services.provenance, services.history)
        assert services.archive.writer is services.writer and services.provenance.writer is services.writer
        # A write through the services' writer is indexed at once: the facade wired its index in.
        services.writer.put(PEOPLE, "# People\n\n## Ann\n- Ann is the CTO.\n", cause=Cause.SAVE)
        assert [hit.text for hit in memory.search("who is the CTO")][:1] == ["Ann is the CTO."]


def test_opening_services_for_a_missing_vault_without_create_refuses(tmp_path):
    config = Config(vault=str(tmp_path / "nowhere"), state_dir=str(tmp_path / "state"))
    with pytest.raises(NotAVault):
        open_services(config, lambda: NOW, create=False)
    assert not (tmp_path / "nowhere").exists()


def test_only_a_vault_the_services_create_keeps_the_day_as_its_first(services, tmp_path):
    assert services.state.vault_created() == NOW.date()
    # Opened again, later: the first day stays the day it was made.
    config = Config(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state"))
    again = open_services(config, lambda: datetime(2026, 12, 9, tzinfo=UTC))
    assert again.state.vault_created() == NOW.date()
    again.close()
    # A folder that already was a vault, seen from another state folder, has no first day here.
    other = open_services(Config(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "other")), lambda: NOW)
    assert other.state.vault_created() is None
    other.close()


def test_curation_runs_given_only_the_services(services):
    services.writer.put(PEOPLE, "# People\n\n## Ann\n- Ann is the CTO.\n- Ann is the CTO.\n", cause=Cause.SAVE)

    result = curate.run(services, OfflineCurator(), date(2026, 11, 29))

    assert result.status == "landed", result.summary
    assert (services.vault.root / PEOPLE).read_text("utf-8").count("- Ann is the CTO.") == 1
    assert services.state.run_record("curate")["status"] == "landed"


def test_a_job_runs_given_only_the_services(services):
    services.writer.put(PEOPLE, "# People\n\n## Ann\n- Ann is the CTO.\n- Ann is the CTO.\n", cause=Cause.SAVE)

    result = JobRunner(services).run_now("curate", NOW)

    assert result.status is JobStatus.LANDED and result.day == "2026-11-30" and not result.failed
    assert result.to_dict()["files"][PEOPLE]["status"] == "written"


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("package", ["curation", "jobs"])
def test_curation_and_jobs_never_import_the_memory_facade(package):
    offending = {
        str(path.relative_to(PACKAGE)): sorted(name for name in _imports(path)
                                               if name.startswith("wolfmem.memory.facade") or name == "wolfmem.Memory")
        for path in (PACKAGE / package).rglob("*.py")
    }
    assert {path: names for path, names in offending.items() if names} == {}
