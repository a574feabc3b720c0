"""The commands that run something (curate, audit apply), through the real `wolfmem` command."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import run_cli
from fakellm import FakeLLM

from wolfmem import Config, Memory
from wolfmem.curation.audit.run import run_audit

NOW = datetime(2026, 11, 1, 4, 0, tzinfo=ZoneInfo("Europe/Berlin"))
PROJECTS = "knowledge/projects.md"


def stage_audit(vault: Path, tmp_path: Path, month: str) -> None:
    """Run an audit with `audit.apply = false` in this process, so its one change is only staged in the report."""
    staged = {"summary": "Atlas changed hands.", "findings": [{
        "kind": "contradicted", "lines": ["- Bob leads Project Atlas."], "explanation": "Alice took over",
        "evidence": ["episodes/2026-10-14.md"], "action": "replace", "new": "- Alice leads Project Atlas."}]}
    nothing = {"summary": "Nothing to report.", "findings": []}

    def answer(request: dict) -> dict:
        return staged if request["messages"][-1]["content"].startswith(f"Audit {PROJECTS} ") else nothing

    with FakeLLM(default=answer) as fake:
        config = Config(state_dir=str(tmp_path / "wolfmem-state"), llm_base_url=fake.base_url,
                        llm_model="fake-model", llm_timeout=5.0, llm_max_retries=0, audit_apply=False)
        with Memory(vault, config, clock=lambda: NOW) as memory:
            memory.save("Bob leads Project Atlas.", type="projects", topic="Atlas")
            memory.log_episode(["Alice took over Atlas from Bob today."], "atlas",
                               when=datetime(2026, 10, 14, 10, tzinfo=NOW.tzinfo))
            assert run_audit(memory.services, month, NOW)["counts"]["staged"] == 1


@pytest.mark.parametrize("month_args", [(), ("--month", "2026-10")], ids=["newest", "--month"])
def test_audit_apply_lands_a_staged_audit(vault: Path, tmp_path: Path, month_args: tuple[str, ...]) -> None:
    stage_audit(vault, tmp_path, "2026-10")
    assert "Bob leads" in (vault / PROJECTS).read_text()

    result = run_cli("audit", "apply", *month_args, "--vault", str(vault))

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok"), result.stdout
    text = (vault / PROJECTS).read_text()
    assert "- Alice leads Project Atlas." in text and "Bob leads" not in text
    assert "- Outcome: applied" in (vault / "consolidated/audit-2026-10.md").read_text()


def test_audit_apply_without_a_report_is_misuse(vault: Path) -> None:
    result = run_cli("audit", "apply", "--vault", str(vault))
    assert result.returncode == 2
    assert result.stderr == "wolfmem: there is no audit report yet; run `wolfmem audit --now` first\n"


def test_a_job_that_fails_for_a_reason_says_it_in_one_line_without_a_traceback(vault: Path) -> None:
    # A person's own note where this month's audit report goes: the audit refuses to overwrite it.
    today = date.today()
    (vault / "consolidated").mkdir(exist_ok=True)
    for day in (today - timedelta(days=1), today, today + timedelta(days=1)):  # whichever day the CLI sees
        (vault / f"consolidated/audit-{day:%Y-%m}.md").write_text("My own audit notes.\n")

    result = run_cli("audit", "--now", "--vault", str(vault))

    assert result.returncode == 1
    assert "is not a wolfmem audit report; rename it" in result.stdout
    (line,) = result.stderr.splitlines()  # one line, no traceback
    assert line.startswith("wolfmem: audit for ") and "is not a wolfmem audit report" in line
    assert (vault / f"consolidated/audit-{today:%Y-%m}.md").read_text() == "My own audit notes.\n"


def test_an_unexpected_job_failure_keeps_its_traceback_in_the_log_file_only(
    vault: Path, config: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    from wolfmem.cli.common import job_logging
    from wolfmem.jobs.runner import JobRunner

    def broken(run: object) -> dict:
        raise RuntimeError("a bug in a job")

    with Memory(vault, config, clock=lambda: NOW) as memory:
        runner = JobRunner(memory.services, jobs={"curate": broken})
        with job_logging(memory) as log_path:
            assert runner.run_now("curate", NOW, day=date(2026, 10, 31)).status == "failed"
    stderr = capsys.readouterr().err
    assert "Traceback" not in stderr and "RuntimeError: a bug in a job" in stderr
    assert f"(the traceback is in {log_path})" in stderr
    logged = log_path.read_text()
    assert "Traceback (most recent call last)" in logged and 'raise RuntimeError("a bug in a job")' in logged
    assert "running curate for 2026-10-31" in logged  # the file gets the configured level, not just warnings
    assert log_path == config.log_path(memory.vault.state_dir.name)  # the vault's own log, as the daemon's
