"""The `wolfmem` command in real subprocesses: output, --json, exit codes, and the daemon."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
from conftest import REPO, run_cli, wait_until

from wolfmem.config import SETTINGS, load_config

PEOPLE = """# People

## Sarah (Manager)

- Sarah is my manager at Acme.
- She prefers async updates over meetings.

## Tom

- Tom is the on-call SRE this quarter.
"""


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One populated vault and state folder for the read-only CLI tests of this module."""
    base = tmp_path_factory.mktemp("cli")
    vault = base / "vault"
    env = {**os.environ, "WOLFMEM_STATE_DIR": str(base / "state"), "XDG_CONFIG_HOME": str(base / "config")}
    subprocess.run([sys.executable, "-m", "wolfmem", "init", "--vault", str(vault)],
                   check=True, capture_output=True, env=env, cwd=REPO)
    (vault / "knowledge/people.md").write_text(PEOPLE)
    (vault / "episodes/2026-03-04.md").write_text(
        "# 2026-03-04\n\n## 09:15 — standup\n\n- Agreed with Tom to move the database migration.\n"
    )
    return {"vault": vault, "state": base / "state"}


@pytest.fixture
def ro_vault(shared: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shared vault, with this test's environment pointed at the shared state folder."""
    monkeypatch.setenv("WOLFMEM_STATE_DIR", str(shared["state"]))
    return shared["vault"]


def ok(*args: str) -> subprocess.CompletedProcess[str]:
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    return result


# -- init ------------------------------------------------------------------------------
def test_init_creates_then_reports_nothing_to_do(tmp_path: Path) -> None:
    vault = tmp_path / "new-vault"
    first = ok("init", "--vault", str(vault))
    assert "knowledge/people.md" in first.stdout and "episodes/" in first.stdout
    (vault / "knowledge/people.md").write_text("# People\n\n- mine\n")
    second = ok("init", "--vault", str(vault))
    assert "nothing created" in second.stdout
    assert (vault / "knowledge/people.md").read_text() == "# People\n\n- mine\n"


def test_vault_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WOLFMEM_VAULT", str(tmp_path / "env-vault"))
    ok("init")
    assert (tmp_path / "env-vault/knowledge/people.md").is_file()


# -- reads ------------------------------------------------------------------------------
def test_search_plain_and_json(ro_vault: Path) -> None:
    plain = ok("search", "Who is my manager?", "--vault", str(ro_vault))
    assert plain.stdout.splitlines()[0].startswith("file:knowledge/people.md#L5")
    assert "Sarah is my manager at Acme." in plain.stdout
    hits = json.loads(ok("search", "database migration", "--json", "--vault", str(ro_vault)).stdout)
    assert hits[0]["ref"] == "file:episodes/2026-03-04.md#L5"
    assert set(hits[0]) == {"ref", "path", "line", "section", "text", "snippet", "score", "source", "date"}
    assert hits[0]["date"] == "2026-03-04"


@pytest.mark.slow
def test_search_filters_and_no_match(ro_vault: Path) -> None:
    hits = json.loads(ok("search", "Tom", "--source", "episodes", "--json", "--vault", str(ro_vault)).stdout)
    assert {h["source"] for h in hits} == {"episodes"}
    hits = json.loads(ok("search", "Tom", "--before", "2026-03-31", "--json", "--vault", str(ro_vault)).stdout)
    assert hits and {h["date"] for h in hits} == {"2026-03-04"}, "knowledge lines first seen today are later"
    hits = json.loads(ok("search", "Tom", "--after", "2026-04-01", "--json", "--vault", str(ro_vault)).stdout)
    assert {h["source"] for h in hits} == {"knowledge"}
    none = ok("search", "zeppelin", "--vault", str(ro_vault))
    assert "Nothing found for 'zeppelin'. Try other words" in none.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("search", "the of and"),
        ("search", "Tom", "--limit", "51"),
        ("search", "Tom", "--source", "notes"),
        ("get", "../outside.md"),
        ("get", "knowledge/people.md#L9-L2"),
    ],
    ids=lambda args: " ".join(args),
)
def test_misuse_exits_2(ro_vault: Path, args: tuple[str, ...]) -> None:
    result = run_cli(*args, "--vault", str(ro_vault))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.startswith("wolfmem: ")
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_bad_arguments_exit_2(ro_vault: Path) -> None:
    assert run_cli("search", "--vault", str(ro_vault)).returncode == 2
    assert run_cli("search", "Tom", "--limit", "many", "--vault", str(ro_vault)).returncode == 2
    assert run_cli("no-such-command").returncode == 2


@pytest.mark.slow
def test_failed_operation_exits_1(ro_vault: Path) -> None:
    result = run_cli("get", "knowledge/nope.md", "--vault", str(ro_vault))
    assert result.returncode == 1
    assert "no file knowledge/nope.md" in result.stderr and "Traceback" not in result.stderr
    result = run_cli("get", "knowledge/people.md#Nobody", "--vault", str(ro_vault))
    assert result.returncode == 1 and "Sarah" in result.stderr


@pytest.mark.slow
def test_get_plain_and_json(ro_vault: Path) -> None:
    assert ok("get", "file:knowledge/people.md#Sarah", "--vault", str(ro_vault)).stdout == (
        "## Sarah (Manager)\n\n- Sarah is my manager at Acme.\n- She prefers async updates over meetings.\n\n"
    )
    assert ok("get", "knowledge/people.md#L8", "--vault", str(ro_vault)).stdout == "## Tom\n"
    data = json.loads(ok("get", "knowledge/people.md", "--json", "--vault", str(ro_vault)).stdout)
    assert data["text"] == PEOPLE and len(data["revision"]) >= 8
    assert data["truncated"] is False and data["next_ref"] is None


def test_map_is_stable_across_processes(ro_vault: Path) -> None:
    first = ok("map", "--vault", str(ro_vault)).stdout
    assert first.startswith("<memory_map>") and "people.md: Sarah (Manager); Tom" in first
    assert ok("map", "--vault", str(ro_vault)).stdout == first


@pytest.mark.parametrize("command", ["search Tom", "get knowledge/people.md", "reindex"])
def test_commands_refuse_a_folder_that_is_not_a_vault(tmp_path: Path, command: str) -> None:
    typo = tmp_path / "vualt"
    result = run_cli(*command.split(), "--vault", str(typo))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "wolfmem init" in result.stderr and "Traceback" not in result.stderr
    assert not typo.exists()


@pytest.mark.slow
def test_freshness_edit_without_a_daemon_is_found_by_a_new_process(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    ok("init", "--vault", str(vault))
    (vault / "knowledge/people.md").write_text(PEOPLE)
    assert "Sarah" in ok("search", "manager", "--vault", str(vault)).stdout
    people = vault / "knowledge/people.md"
    people.write_text(people.read_text().replace("Sarah is my manager", "Susan is my manager"))
    out = ok("search", "Susan", "--json", "--vault", str(vault)).stdout
    assert next(h["text"] for h in json.loads(out)) == "Susan is my manager at Acme."
    people.unlink()
    assert json.loads(ok("search", "Susan", "--json", "--vault", str(vault)).stdout) == []


def test_reindex_names_skipped_files(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    ok("init", "--vault", str(vault))
    (vault / "knowledge/people.md").write_text(PEOPLE)
    (vault / "knowledge/latin1.md").write_bytes("- café\n".encode("latin-1"))
    result = ok("reindex", "--vault", str(vault))
    assert "Indexed 3 facts" in result.stdout
    assert "knowledge/latin1.md" in result.stderr and "UTF-8" in result.stderr


def test_status_json(tmp_path: Path) -> None:
    pytest.importorskip("wolfmem.jobs.runner")
    vault = tmp_path / "vault"
    ok("init", "--vault", str(vault))
    (vault / "knowledge/people.md").write_text(PEOPLE)
    (vault / "knowledge/blob.md").write_bytes(b"\x00\x01binary")
    ok("search", "Sarah", "--vault", str(vault))
    data = json.loads(ok("status", "--json", "--vault", str(vault)).stdout)
    assert data["vault"] == str(vault)
    assert data["index"]["facts"] == 3
    assert "knowledge/blob.md" in data["index"]["skipped_files"]
    assert data["daemon"]["running"] is False
    assert data["llm"]["mode"] == "offline"
    assert set(data["jobs"]["jobs"]) == {"curate", "audit", "digest"}
    assert data["last_curation"] is None
    ok("curate", "--vault", str(vault))
    record = json.loads(ok("status", "--json", "--vault", str(vault)).stdout)["last_curation"]
    assert record["status"] in {"landed", "noop"} and "knowledge/people.md" in record["files"]
    assert "vault:" in ok("status", "--vault", str(vault)).stdout


# -- config ------------------------------------------------------------------------------
def test_config_prints_toml_that_loads_back_as_the_same_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file = tmp_path / "config.toml"
    config_file.write_text('[llm]\nmodel = "qwen2.5:14b"\n')
    monkeypatch.setenv("WOLFMEM_CONFIG", str(config_file))
    monkeypatch.setenv("WOLFMEM_WATCHER_DEBOUNCE_MS", "222")
    out = ok("config", "--vault", str(tmp_path / "notes")).stdout
    for setting in SETTINGS:
        assert setting.env in out, setting.key
    lines = out.splitlines()
    assert 'vault = "%s" # flag --vault' % (tmp_path / "notes") in lines
    assert "debounce_ms = 222 # environment $WOLFMEM_WATCHER_DEBOUNCE_MS" in lines
    assert f'model = "qwen2.5:14b" # file {config_file}' in lines
    assert 'curate = "03:00" # default' in lines
    assert "# base_url is unset (default)" in lines
    pasted = tmp_path / "pasted.toml"
    pasted.write_text(out)
    expected = load_config({"vault": str(tmp_path / "notes")}, environ=dict(os.environ))
    assert load_config(environ={}, config_file=pasted) == expected
    assert tomllib.loads(out)["watcher"]["debounce_ms"] == 222


def test_a_missing_config_file_named_by_the_environment_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WOLFMEM_CONFIG", str(tmp_path / "cofnig.toml"))
    for args in (("config",), ("search", "x", "--vault", str(tmp_path))):
        result = run_cli(*args)
        assert result.returncode == 2, result.stderr
        assert "cofnig.toml" in result.stderr and "WOLFMEM_CONFIG" in result.stderr


def test_config_errors_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[index]\nmax_bytes = 5\n")
    monkeypatch.setenv("WOLFMEM_CONFIG", str(bad))
    result = run_cli("config")
    assert result.returncode == 2 and "index.max_bytes" in result.stderr
    monkeypatch.delenv("WOLFMEM_CONFIG")
    monkeypatch.setenv("WOLFMEM_INDEX_MAX_FILE_BYTES", "huge")
    result = run_cli("search", "x", "--vault", str(tmp_path))
    assert result.returncode == 2 and "WOLFMEM_INDEX_MAX_FILE_BYTES" in result.stderr


# -- the daemon ------------------------------------------------------------------------------
def start_daemon(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "wolfmem", "daemon", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ), cwd=REPO,
    )


@pytest.fixture
def daemon(
    tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A daemon on the default vault (the one vault it may create), logging at debug level."""
    pytest.importorskip("wolfmem.jobs.scheduler")
    monkeypatch.setenv("WOLFMEM_WATCHER_DEBOUNCE_MS", "50")
    monkeypatch.setenv("WOLFMEM_LOG_LEVEL", "debug")
    proc = start_daemon()
    logs = tmp_path / "wolfmem-logs"
    try:
        wait_until(lambda: proc.poll() is not None
                   or any("daemon watching" in log.read_text() for log in logs.glob("*.log")), timeout=30)
        assert proc.poll() is None, proc.communicate()[1]
        yield proc, isolated_env / "data" / "wolfmem" / "vault"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def test_daemon_creates_the_default_vault_and_refuses_a_second_instance(daemon) -> None:
    proc, vault = daemon
    assert (vault / "knowledge/people.md").is_file()
    second = subprocess.run(
        [sys.executable, "-m", "wolfmem", "daemon", "--vault", str(vault)],
        capture_output=True, text=True, env=dict(os.environ), cwd=REPO, timeout=30,
    )
    assert second.returncode != 0
    assert "already running" in second.stderr and "Traceback" not in second.stderr
    assert proc.poll() is None


def test_a_new_vaults_first_daemon_start_curates_nothing_from_before_it(daemon) -> None:
    _, vault = daemon

    def jobs() -> dict:
        return json.loads(ok("status", "--json", "--vault", str(vault)).stdout)["jobs"]["jobs"]

    # The start-up check looks at curation, then the audit, which it starts after the month now due.
    wait_until(lambda: (jobs()["audit"]["last_run"] or {}).get("status") == "baseline", timeout=30)
    assert jobs()["curate"]["last_run"] is None
    assert not (vault / "consolidated").exists()
    assert not (vault / ".wolfmem" / "lease.json").exists()


def test_a_vault_made_by_init_is_not_curated_for_the_day_before_it(tmp_path: Path, config) -> None:
    from wolfmem import Memory
    from wolfmem.jobs.runner import JobRunner

    vault = tmp_path / "new-vault"
    ok("init", "--vault", str(vault))
    with Memory(vault, config) as memory:
        runner = JobRunner(memory.services)
        assert [result.job for result in runner.run_due(memory.clock())] == []
    assert not (vault / "consolidated").exists()


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_daemon_never_creates_a_vault_at_a_mistyped_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        how: str) -> None:
    typo = tmp_path / "notes" / "agnet"
    if how == "environment":
        monkeypatch.setenv("WOLFMEM_VAULT", str(typo))
    result = run_cli("daemon", *(["--vault", str(typo)] if how == "flag" else []), timeout=30)
    assert result.returncode == 2, result.stderr
    assert f"wolfmem init --vault {typo}" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "notes").exists()


@pytest.mark.slow
def test_run_sh_passes_the_vault_through_and_refuses_a_typo(tmp_path: Path) -> None:
    typo = tmp_path / "agnet"
    result = subprocess.run(["bash", str(REPO / "scripts/run.sh"), "--vault", str(typo)],
                            capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert result.returncode == 2, result.stderr
    assert "wolfmem init --vault" in result.stderr
    assert not typo.exists()


def test_daemon_keeps_the_index_fresh_logs_each_sync_and_stops_on_sigterm(daemon) -> None:
    proc, vault = daemon
    with open(vault / "knowledge/people.md", "a", encoding="utf-8") as handle:
        handle.write("\n## Priya\n\n- Priya leads the Falcon project.\n")
    log_file = Path(json.loads(ok("status", "--json").stdout)["daemon"]["log"])
    # The watcher's sync, before any search could do it: so the daemon, not the search, indexed the edit.
    wait_until(lambda: re.search(r"DEBUG wolfmem\.ops\.daemon: sync: 1 file\(s\) indexed, 0 removed, in \d+ ms",
                                 log_file.read_text()), timeout=20)
    hits = json.loads(ok("search", "Falcon", "--json", "--vault", str(vault)).stdout)
    assert hits[0]["text"] == "Priya leads the Falcon project."
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert not list(Path(os.environ["WOLFMEM_STATE_DIR"]).rglob("daemon.pid"))


@pytest.fixture
def vault_made_by_hand(isolated_env: Path) -> Path:
    """The default vault's folder, made by a person before wolfmem first saw it: it has no first day."""
    knowledge = isolated_env / "data" / "wolfmem" / "vault" / "knowledge"
    knowledge.mkdir(parents=True)
    (knowledge / "people.md").write_text("# People\n\n## Sarah\n- Sarah is my manager.\n")
    return knowledge.parent


@pytest.mark.slow
def test_daemon_logs_to_its_vaults_own_file_with_each_jobs_duration_and_outcome(vault_made_by_hand, daemon) -> None:
    proc, vault = daemon
    assert vault == vault_made_by_hand
    assert f"daemon   running (pid {proc.pid})" in ok("doctor").stdout
    status = ok("status").stdout
    log_file = Path(json.loads(ok("status", "--json").stdout)["daemon"]["log"])
    assert f"log:      {log_file}" in status.splitlines()
    state_dir = Path(json.loads(ok("status", "--json").stdout)["state_dir"])
    assert log_file.parent == Path(os.environ["WOLFMEM_LOG_DIR"]) and log_file.stem == state_dir.name
    # The start-up check runs the overdue nightly curation (offline here) at once.
    line = wait_until(lambda: re.search(r"INFO wolfmem\.jobs\.runner: curate for \d{4}-\d{2}-\d{2} finished in "
                                        r"\d+\.\d s: (\w+)", log_file.read_text()), timeout=30)
    assert line.group(1) in {"noop", "landed"}
    assert f"watching {vault}" in log_file.read_text()


def test_log_when_files_the_entry_on_that_day(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    ok("init", "--vault", str(vault))
    ok("log", "Backfilled the release notes", "--when", "2026-11-20T14:05", "--vault", str(vault))
    assert (vault / "episodes/2026-11-20.md").read_text() == (
        "# 2026-11-20\n\n## 14:05 — Backfilled the release notes\n- Backfilled the release notes\n"
    )
    bad = run_cli("log", "x", "--when", "yesterday", "--vault", str(vault))
    assert bad.returncode == 2 and "--when" in bad.stderr and bad.stdout == ""
    a_year_on = (date.today() + timedelta(days=366)).isoformat()
    for far in ("2999-01-01", f"{a_year_on}T09:00"):
        future = run_cli("log", "x", "--when", far, "--vault", str(vault))
        assert future.returncode == 2 and future.stdout == "", future.stderr
        assert "in the future" in future.stderr and len(future.stderr.splitlines()) == 1
    assert sorted(path.name for path in (vault / "episodes").glob("*.md")) == ["2026-11-20.md"]


def episode_bullets(vault: Path) -> list[str]:
    return [line for path in sorted((vault / "episodes").glob("*.md"))
            for line in path.read_text().splitlines() if line.startswith("- ")]


def test_log_words_make_one_bullet_and_bullets_come_from_options_or_stdin(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    ok("init", "--vault", str(vault))
    ok("log", "Deployed", "to", "staging", "--vault", str(vault))
    assert episode_bullets(vault) == ["- Deployed to staging"]
    ok("log", "--bullet", "Migrated the database", "-b", "Smoke tests passed", "--vault", str(vault))
    result = run_cli("log", "-", "--headline", "Release", "--vault", str(vault),
                     input="Tagged v2.1\n\nPosted the notes\n")
    assert result.returncode == 0, result.stderr
    assert episode_bullets(vault) == ["- Deployed to staging", "- Migrated the database", "- Smoke tests passed",
                                      "- Tagged v2.1", "- Posted the notes"]
    assert "— Release\n- Tagged v2.1\n- Posted the notes\n" in "".join(
        path.read_text() for path in (vault / "episodes").glob("*.md"))


def test_log_with_nothing_to_say_is_misuse_and_writes_nothing(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    ok("init", "--vault", str(vault))
    for args, stdin in ((("log",), None), (("log", "-"), "\n  \n")):
        result = run_cli(*args, "--vault", str(vault), input=stdin)
        assert result.returncode == 2, result.stderr
        assert "--bullet" in result.stderr or "empty" in result.stderr
    assert episode_bullets(vault) == []


@pytest.mark.parametrize("io_encoding", ["utf-8:strict", "utf-8:surrogateescape"],
                         ids=["strict-stdin-as-on-macos", "c-locale-stdin"])
def test_log_from_stdin_that_is_not_utf8_is_misuse_naming_the_byte(tmp_path: Path, io_encoding: str) -> None:
    vault = tmp_path / "vault"
    ok("init", "--vault", str(vault))
    result = subprocess.run([sys.executable, "-m", "wolfmem", "log", "-", "--vault", str(vault)], cwd=REPO,
                            input="Tagged v2.1\nCaf\xe9 opened\n".encode("latin-1"), capture_output=True,
                            env={**os.environ, "PYTHONIOENCODING": io_encoding})
    stderr = result.stderr.decode()
    # A strict stdin raised UnicodeDecodeError through the command: a traceback and exit 1.
    assert result.returncode == 2 and "Traceback" not in stderr, stderr
    assert stderr == "wolfmem: stdin is not UTF-8 text (byte 0xe9 on line 2); convert it to UTF-8 first\n"
    assert episode_bullets(vault) == []


# -- conventions: version, help, completion ------------------------------------------------------
def test_version_matches_the_installed_distribution() -> None:
    from importlib.metadata import version

    import wolfmem

    assert wolfmem.__version__ == version("wolfmem")
    assert ok("--version").stdout == f"wolfmem {version('wolfmem')}\n"


@pytest.mark.parametrize("args", [("-h",), ("search", "-h"), ("service", "install", "-h")], ids=" ".join)
def test_dash_h_is_help(args: tuple[str, ...]) -> None:
    result = ok(*args)
    assert "Usage: wolfmem" in result.stdout and "--help" in result.stdout


def test_shell_completion_installs_and_completes(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("wolfmem")
    env = {**os.environ, "HOME": str(tmp_path), "SHELL": "/bin/bash"}
    # From a bash prompt, as a person types it: typer detects the shell from the parent process.
    installed = subprocess.run(["bash", "-c", f"'{exe}' --install-completion; status=$?; exit $status"],
                               capture_output=True, text=True, env=env, timeout=60)
    assert installed.returncode == 0, installed.stderr
    script = tmp_path / ".bash_completions" / "wolfmem.sh"
    assert "_WOLFMEM_COMPLETE" in script.read_text() and str(script) in (tmp_path / ".bashrc").read_text()
    completed = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, env={
        **env, "_WOLFMEM_COMPLETE": "complete_bash", "COMP_WORDS": "wolfmem service st", "COMP_CWORD": "2"})
    assert completed.stdout.split() == ["status"]


def test_curate_with_a_broken_model_exits_1_names_the_reason_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakellm import FakeLLM

    vault = tmp_path / "vault"
    ok("init", "--vault", str(vault))
    ok("save", "Tom lives in Berlin.", "--type", "people", "--topic", "Tom", "--vault", str(vault))
    before = (vault / "knowledge/people.md").read_bytes()
    with FakeLLM(default=FakeLLM.text("{broken json")) as fake:
        monkeypatch.setenv("WOLFMEM_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("WOLFMEM_LLM_MODEL", "fake-model")
        monkeypatch.setenv("WOLFMEM_LLM_MAX_RETRIES", "0")
        result = run_cli("curate", "--vault", str(vault))
    assert result.returncode == 1
    assert "knowledge/people.md: failed: the model's reply is not valid JSON" in result.stdout
    assert (vault / "knowledge/people.md").read_bytes() == before
    assert not (vault / "knowledge/people.md.bak").exists()
