"""`wolfmem doctor`: every part of the install checked for real, each line ok/warning/fail, exit 1 on a failure."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from conftest import run_cli
from fakellm import FakeLLM

from wolfmem import Config, Memory
from wolfmem.ops.doctor import CHECKS, PROBE_PATH, Check, Status, Subject, run_checks


def doctor(*args: str) -> tuple[int, dict[str, dict]]:
    result = run_cli("doctor", "--json", *args)
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    return result.returncode, {check["name"]: check for check in report["checks"]}


def snapshot(vault: Path) -> dict[str, bytes]:
    return {str(path.relative_to(vault)): path.read_bytes() for path in vault.rglob("*") if path.is_file()}


def test_a_healthy_vault_passes_and_the_probe_leaves_no_trace(vault: Path, config: Config) -> None:
    (vault / "knowledge/people.md").write_text("# People\n\n## Tom\n\n- Tom is the on-call SRE.\n")
    before = snapshot(vault)
    code, checks = doctor("--vault", str(vault))
    assert code == 0
    assert list(checks) == ["vault", "state", "index", "watcher", "daemon", "lease", "sync", "llm"]
    assert {name: check["status"] for name, check in checks.items()} == {
        "vault": "ok", "state": "ok", "index": "ok", "watcher": "ok",
        "daemon": "warning", "lease": "ok", "sync": "ok", "llm": "ok"}
    assert "probe written, found and removed" in checks["index"]["detail"]
    assert "saw a change" in checks["watcher"]["detail"]
    assert "wolfmem daemon" in checks["daemon"]["fix"]
    assert "offline" in checks["llm"]["detail"]
    assert snapshot(vault) == before, "doctor must not touch the vault's files"
    with Memory(vault, config, create=False) as memory:
        assert PROBE_PATH not in memory.index.manifest()
        assert all(hit.path != PROBE_PATH for hit in memory.index.iter_facts())
        assert [hit.text for hit in memory.search("on-call SRE")] == ["Tom is the on-call SRE."]


def test_plain_output_has_a_fix_under_each_problem(vault: Path) -> None:
    result = run_cli("doctor", "--vault", str(vault))
    lines = result.stdout.splitlines()
    daemon = next(i for i, line in enumerate(lines) if line.startswith("warning  daemon"))
    assert lines[daemon + 1].strip().startswith("fix: start `wolfmem daemon`")
    assert lines[-1] == "0 failed, 1 warning(s)"


def test_a_mistyped_vault_fails_with_the_fix_and_exits_1(tmp_path: Path) -> None:
    typo = tmp_path / "agnet"
    code, checks = doctor("--vault", str(typo))
    assert code == 1
    assert checks["vault"]["status"] == "fail" and f"wolfmem init --vault {typo}" in checks["vault"]["fix"]
    assert checks["index"]["status"] == "warning"
    assert not typo.exists()


def test_the_default_vault_not_yet_created_is_only_a_warning() -> None:
    code, checks = doctor()
    assert code == 0
    assert checks["vault"]["status"] == "warning" and "wolfmem init" in checks["vault"]["fix"]


@pytest.mark.slow
def test_files_the_index_skips_are_a_warning(vault: Path) -> None:
    (vault / "knowledge/latin1.md").write_bytes("- café\n".encode("latin-1"))
    run_cli("reindex", "--vault", str(vault))
    code, checks = doctor("--vault", str(vault))
    assert code == 0
    assert checks["index"]["status"] == "warning" and "knowledge/latin1.md" in checks["index"]["detail"]


@pytest.mark.slow
def test_the_llm_is_pinged_and_a_dead_endpoint_fails(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WOLFMEM_LLM_MODEL", "fake-model")
    monkeypatch.setenv("WOLFMEM_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("WOLFMEM_LLM_TIMEOUT", "5")
    with FakeLLM(default=FakeLLM.text("ok")) as fake:
        monkeypatch.setenv("WOLFMEM_LLM_BASE_URL", fake.base_url)
        code, checks = doctor("--vault", str(vault))
        assert len(fake.requests) == 1
    assert code == 0 and checks["llm"]["status"] == "ok" and "fake-model" in checks["llm"]["detail"]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    monkeypatch.setenv("WOLFMEM_LLM_BASE_URL", dead)
    code, checks = doctor("--vault", str(vault))
    assert code == 1
    assert checks["llm"]["status"] == "fail" and "llm.base_url" in checks["llm"]["fix"]
    assert checks["vault"]["status"] == "ok", "one failure does not stop the other checks"


@pytest.mark.slow
def test_the_lease_names_the_machine_that_curates(vault: Path) -> None:
    lease = vault / ".wolfmem/lease.json"
    lease.parent.mkdir(exist_ok=True)
    lease.write_text(json.dumps({"machine": "laptop-1234", "last_run": "2999-01-01T00:00:00+00:00", "done": {}}))
    _, checks = doctor("--vault", str(vault))
    assert checks["lease"]["status"] == "ok" and "laptop-1234 curates this vault" in checks["lease"]["detail"]
    lease.write_text(json.dumps({"machine": "old-desktop", "last_run": "2001-01-01T00:00:00+00:00", "done": {}}))
    _, checks = doctor("--vault", str(vault))
    assert checks["lease"]["status"] == "warning" and "went stale" in checks["lease"]["detail"]
    lease.write_text("{not json")
    _code, checks = doctor("--vault", str(vault))
    assert checks["lease"]["status"] == "warning" and "unreadable" in checks["lease"]["detail"]
    assert lease.read_text() == "{not json", "doctor only looks"


def test_the_check_list_extends_and_a_crashing_check_is_reported_not_raised(config: Config) -> None:
    def check_embeddings(subject: Subject) -> Check:
        return Check("embeddings", Status.OK, f"nothing configured for {subject.vault.root.name}")

    def check_broken(subject: Subject) -> Check:
        raise RuntimeError("endpoint exploded")

    report = run_checks(config, (*CHECKS[:1], check_embeddings, check_broken))
    assert [check.name for check in report.checks] == ["vault", "embeddings", "broken"]
    assert report.checks[2] == Check("broken", Status.FAIL, "RuntimeError: endpoint exploded")
    assert not report.ok and "1 failed" in report.text
