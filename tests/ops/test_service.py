"""Service file generation and install/uninstall/status, with systemctl/launchctl faked.

A real systemd user manager cannot run here (no user bus in a container), so the CLI tests put a fake
`systemctl` script first on PATH: the `wolfmem service` commands still run as real subprocesses, and
the script records each call and fails the ones a test asks it to.
"""

from __future__ import annotations

import plistlib
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli

from wolfmem.errors import UsageError
from wolfmem.ops.service import (
    AGENT_LABEL,
    install,
    render,
    status,
    uninstall,
    unit_path,
)

EXE = "/opt/wolf mem/bin/wolfmem"


class FakeRun:
    """Records commands; answers with a fixed return code."""

    def __init__(self, code: int = 0, stdout: str = "") -> None:
        self.calls: list[list[str]] = []
        self.code, self.stdout = code, stdout

    def __call__(self, args):
        self.calls.append(list(args))
        stderr = "Failed to connect to bus" if self.code else ""
        return subprocess.CompletedProcess(args, self.code, self.stdout, stderr)


def test_systemd_unit(tmp_path):
    text = render("linux", EXE, tmp_path / "my vault", home=tmp_path)
    assert f'ExecStart="{EXE}" daemon --vault "{tmp_path / "my vault"}"' in text
    assert "Restart=on-failure" in text
    assert "WantedBy=default.target" in text
    assert f"EnvironmentFile=-{tmp_path}/.config/wolfmem/env" in text


def test_systemd_unit_without_vault_and_with_percent(tmp_path):
    text = render("linux", "/usr/bin/wolfmem", None, home=tmp_path)
    assert "ExecStart=/usr/bin/wolfmem daemon\n" in text
    assert '"/opt/50%%/wolfmem"' in render("linux", "/opt/50%/wolfmem", None, home=tmp_path)


def test_launchd_agent(tmp_path):
    agent = plistlib.loads(render("macos", EXE, tmp_path / "v", home=tmp_path).encode())
    assert agent["Label"] == AGENT_LABEL
    assert agent["ProgramArguments"] == [EXE, "daemon", "--vault", str(tmp_path / "v")]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["StandardErrorPath"].startswith(str(tmp_path / "Library" / "Logs"))


def test_bare_exe_is_resolved_on_path_or_refused(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "wolfmem").write_text("#!/bin/sh\n")
    (bin_dir / "wolfmem").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert f"ExecStart={bin_dir}/wolfmem daemon" in render("linux", "wolfmem", None, home=tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(UsageError, match="cannot find"):
        render("linux", "wolfmem", None, home=tmp_path)


def test_unknown_platform_is_refused(tmp_path):
    with pytest.raises(UsageError, match="linux"):
        render("windows", EXE, None, home=tmp_path)


def test_install_status_uninstall_linux(tmp_path):
    run = FakeRun(stdout="active")
    report = install(EXE, None, platform="linux", home=tmp_path, run=run)
    path = unit_path("linux", tmp_path)
    assert path == tmp_path / ".config" / "systemd" / "user" / "wolfmem.service"
    assert path.read_text().startswith("# Written by `wolfmem service install`")
    assert report.ok and f"wrote {path}" in report.text
    assert ["systemctl", "--user", "enable", "--now", "wolfmem.service"] in run.calls
    state = status(platform="linux", home=tmp_path, run=run)
    assert state.running and "active: active" in state.text

    again = install(EXE, None, platform="linux", home=tmp_path, run=run)
    assert f"updated {path}" in again.text and ["systemctl", "--user", "restart", "wolfmem.service"] in run.calls

    removed = uninstall(platform="linux", home=tmp_path, run=run)
    assert removed.ok and f"removed {path}" in removed.text
    assert not path.exists()
    assert not status(platform="linux", home=tmp_path, run=run).installed
    assert "no wolfmem service installed" in uninstall(platform="linux", home=tmp_path, run=run).text


def test_install_without_a_user_bus_fails_and_leaves_no_unit(tmp_path):
    run = FakeRun(code=1)
    report = install(EXE, None, platform="linux", home=tmp_path, run=run)
    assert not report.ok
    assert "FAILED: `systemctl --user daemon-reload` exited 1: Failed to connect to bus" in report.text
    assert not unit_path("linux", tmp_path).exists()


def test_a_failed_reinstall_puts_the_working_unit_back(tmp_path):
    path = unit_path("linux", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("# the unit that works\n")
    report = install(EXE, None, platform="linux", home=tmp_path, run=FakeRun(code=1))
    assert not report.ok and f"restored the previous {path}" in report.text
    assert path.read_text() == "# the unit that works\n"


def test_install_without_systemctl_at_all(tmp_path):
    def missing(args):
        raise FileNotFoundError(2, "No such file", args[0])

    report = install(EXE, None, platform="linux", home=tmp_path, run=missing)
    assert not report.ok
    assert "could not run `systemctl --user daemon-reload`" in report.text
    assert not unit_path("linux", tmp_path).exists()


def test_install_macos(tmp_path):
    run = FakeRun(stdout="gui/501/io.wolfmem.daemon = {\n\tstate = running\n}")
    report = install(EXE, Path("/vault"), platform="macos", home=tmp_path, run=run)
    path = tmp_path / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist"
    assert path.exists() and f"wrote {path}" in report.text
    assert run.calls[-1][:2] == ["launchctl", "bootstrap"]
    state = status(platform="macos", home=tmp_path, run=run)
    assert state.running and "state: running" in state.text
    assert "removed" in uninstall(platform="macos", home=tmp_path, run=run).text


# -- the CLI, in real subprocesses, against a fake systemctl (the `systemctl` fixture, conftest) ---------
def cli_unit(isolated_env: Path) -> Path:
    return isolated_env / "config" / "systemd" / "user" / "wolfmem.service"


@pytest.mark.slow
def test_cli_install_status_uninstall(systemctl: Path, isolated_env: Path, monkeypatch) -> None:
    installed = run_cli("service", "install")
    assert installed.returncode == 0, installed.stderr
    assert cli_unit(isolated_env).exists()
    assert "--user enable --now wolfmem.service" in systemctl.read_text()
    assert run_cli("service", "status").returncode == 0

    monkeypatch.setenv("FAKE_SYSTEMCTL_ACTIVE", "inactive")
    stopped = run_cli("service", "status")
    assert stopped.returncode == 1 and "active: inactive" in stopped.stdout

    removed = run_cli("service", "uninstall")
    assert removed.returncode == 0 and "FAILED" not in removed.stdout
    assert not cli_unit(isolated_env).exists()
    assert run_cli("service", "status").returncode == 1


def test_cli_install_exits_1_and_leaves_no_unit_when_systemd_refuses(systemctl: Path, isolated_env: Path,
                                                                    monkeypatch) -> None:
    monkeypatch.setenv("FAKE_SYSTEMCTL_FAIL", "enable")
    result = run_cli("service", "install")
    assert result.returncode == 1, result.stdout
    assert "FAILED: `systemctl --user enable --now wolfmem.service` exited 1: Failed to connect" in result.stdout
    assert not cli_unit(isolated_env).exists()
    assert "--user disable wolfmem.service" in systemctl.read_text()


def test_cli_uninstall_reports_a_failed_step_as_failed(systemctl: Path, isolated_env: Path, monkeypatch) -> None:
    assert run_cli("service", "install").returncode == 0
    monkeypatch.setenv("FAKE_SYSTEMCTL_FAIL", "disable")
    result = run_cli("service", "uninstall")
    assert result.returncode == 1
    assert "FAILED: `systemctl --user disable --now wolfmem.service` exited 1" in result.stdout
    assert "ran `systemctl --user disable" not in result.stdout
    assert not cli_unit(isolated_env).exists()


def test_cli_install_refuses_a_vault_that_does_not_exist(systemctl: Path, isolated_env: Path,
                                                        tmp_path: Path) -> None:
    typo = tmp_path / "agnet"
    result = run_cli("service", "install", "--vault", str(typo))
    assert result.returncode == 2 and f"wolfmem init --vault {typo}" in result.stderr
    assert not typo.exists() and not cli_unit(isolated_env).exists()
    assert not systemctl.exists()


@pytest.mark.parametrize("how", ["environment", "option", "default"])
def test_cli_install_bakes_the_vault_the_user_works_with_into_the_unit(systemctl: Path, isolated_env: Path,
                                                                       tmp_path: Path, monkeypatch, how: str) -> None:
    chosen = tmp_path / "notes" / "agent"
    args: tuple[str, ...] = ()
    if how == "default":
        chosen = isolated_env / "data" / "wolfmem" / "vault"
    else:
        assert run_cli("init", "--vault", str(chosen)).returncode == 0
        if how == "environment":
            monkeypatch.setenv("WOLFMEM_VAULT", str(chosen))
        else:
            args = ("--vault", str(chosen))
    result = run_cli("service", "install", *args)
    assert result.returncode == 0, result.stderr
    assert (chosen / "knowledge").is_dir()  # the default vault is created, so the daemon can open it by name
    assert f"Installing the service for the vault at {chosen}" in result.stdout
    exec_start = next(line for line in cli_unit(isolated_env).read_text().splitlines() if line.startswith("ExecStart"))
    assert exec_start.endswith(f"daemon --vault {chosen}")
