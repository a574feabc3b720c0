"""Service file generation and install/uninstall/status, with systemctl/launchctl faked."""

from __future__ import annotations

import plistlib
import subprocess
from pathlib import Path

import pytest

from wolfmem.errors import UsageError
from wolfmem.service import AGENT_LABEL, install, render, status, uninstall, unit_path

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
    assert f"wrote {path}" in report
    assert ["systemctl", "--user", "enable", "--now", "wolfmem.service"] in run.calls
    assert "active: active" in status(platform="linux", home=tmp_path, run=run)

    again = install(EXE, None, platform="linux", home=tmp_path, run=run)
    assert f"updated {path}" in again and ["systemctl", "--user", "restart", "wolfmem.service"] in run.calls

    assert f"removed {path}" in uninstall(platform="linux", home=tmp_path, run=run)
    assert not path.exists()
    assert "not installed" in status(platform="linux", home=tmp_path, run=run)
    assert "no wolfmem service installed" in uninstall(platform="linux", home=tmp_path, run=run)


def test_install_without_a_user_bus_says_what_to_run(tmp_path):
    report = install(EXE, None, platform="linux", home=tmp_path, run=FakeRun(code=1))
    assert "Failed to connect to bus" in report
    assert "systemctl --user enable --now wolfmem.service" in report
    assert unit_path("linux", tmp_path).exists()


def test_install_without_systemctl_at_all(tmp_path):
    def missing(args):
        raise FileNotFoundError(2, "No such file", args[0])

    report = install(EXE, None, platform="linux", home=tmp_path, run=missing)
    assert "could not run `systemctl --user daemon-reload`" in report


def test_install_macos(tmp_path):
    run = FakeRun(stdout="gui/501/io.wolfmem.daemon = {\n\tstate = running\n}")
    report = install(EXE, Path("/vault"), platform="macos", home=tmp_path, run=run)
    path = tmp_path / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist"
    assert path.exists() and f"wrote {path}" in report
    assert run.calls[-1][:2] == ["launchctl", "bootstrap"]
    assert "state: running" in status(platform="macos", home=tmp_path, run=run)
    assert "removed" in uninstall(platform="macos", home=tmp_path, run=run)
