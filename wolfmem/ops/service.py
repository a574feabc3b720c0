"""`wolfmem service install | uninstall | status`: run the daemon at login as a user service.

Linux gets a systemd user unit, macOS a launchd agent. Both start `wolfmem daemon` at login and restart
it when it fails. A service does not see your shell's environment, so an LLM API key goes in the
environment file the unit reads (Linux) or the agent's EnvironmentVariables (macOS); see the README.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from wolfmem.config import APP
from wolfmem.errors import UsageError

UNIT_NAME = "wolfmem.service"
AGENT_LABEL = "io.wolfmem.daemon"

Runner = Callable[[Sequence[str]], subprocess.CompletedProcess]

SYSTEMD_TEMPLATE = """\
# Written by `wolfmem service install`; remove with `wolfmem service uninstall`.
[Unit]
Description=wolfmem: long-term memory daemon (watch, index, curate)
StartLimitIntervalSec=600
StartLimitBurst=5

[Service]
Type=simple
ExecStart={command}
# Put WOLFMEM_LLM_API_KEY=... (or OPENAI_API_KEY=...) here: services do not see your shell's environment.
EnvironmentFile=-{env_file}
Restart=on-failure
RestartSec=10
# Let a running curation finish its LLM call before a stop turns into a kill.
TimeoutStopSec=180

[Install]
WantedBy=default.target
"""


def current_platform() -> str:
    """'linux' or 'macos' for this machine; anything else cannot host the service."""
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform == "darwin":
        return "macos"
    raise UsageError(
        f"`wolfmem service` supports Linux (systemd) and macOS (launchd), not {sys.platform}; "
        "run `wolfmem daemon` from your own startup mechanism instead"
    )


def command(exe: str, vault: Path | None) -> list[str]:
    """The daemon's command line: an absolute wolfmem executable, `daemon`, and the vault if given."""
    args = [resolve_exe(exe), "daemon"]
    if vault is not None:
        args += ["--vault", str(Path(vault).expanduser().resolve())]
    return args


def resolve_exe(exe: str) -> str:
    """An absolute path for exe; a bare name is looked up on PATH (services run with a minimal PATH)."""
    if os.path.isabs(exe):
        return exe
    found = shutil.which(exe)
    if found:
        return os.path.abspath(found)
    raise UsageError(
        f"cannot find the {exe!r} executable on PATH; run `wolfmem service install` from the installed "
        "`wolfmem` command, not through `python -m`"
    )


def render(platform: str, exe: str, vault: Path | None, *, home: Path | None = None) -> str:
    """The unit file (linux) or agent plist (macos) text for `wolfmem daemon`."""
    args = command(exe, vault)
    if platform == "linux":
        return SYSTEMD_TEMPLATE.format(
            command=" ".join(_systemd_quote(arg) for arg in args), env_file=str(env_file(home)).replace("%", "%%")
        )
    if platform in ("macos", "darwin"):
        logs = _log_dir(home)
        agent = {
            "Label": AGENT_LABEL,
            "ProgramArguments": args,
            "RunAtLoad": True,
            # Restart when it exits with an error or crashes; a clean stop stays stopped.
            "KeepAlive": {"SuccessfulExit": False},
            "ThrottleInterval": 10,
            "ProcessType": "Background",
            "StandardOutPath": str(logs / "daemon.out.log"),
            "StandardErrorPath": str(logs / "daemon.err.log"),
            "EnvironmentVariables": {"PATH": "/usr/local/bin:/opt/homebrew/bin:/usr/bin:/bin"},
        }
        return plistlib.dumps(agent).decode("utf-8")
    raise UsageError(f"unknown service platform {platform!r}; use 'linux' or 'macos'")


def unit_path(platform: str, home: Path | None = None) -> Path:
    """Where the unit file or agent plist goes."""
    base = home or Path.home()
    if platform == "linux":
        config_home = os.environ.get("XDG_CONFIG_HOME") if home is None else None
        return Path(config_home or base / ".config") / "systemd" / "user" / UNIT_NAME
    if platform in ("macos", "darwin"):
        return base / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist"
    raise UsageError(f"unknown service platform {platform!r}; use 'linux' or 'macos'")


def env_file(home: Path | None = None) -> Path:
    """The optional KEY=value file the systemd unit reads (for the LLM API key)."""
    if home is not None:
        return home / ".config" / APP / "env"
    return Path(platformdirs.user_config_dir(APP, appauthor=False)) / "env"


def _log_dir(home: Path | None) -> Path:
    if home is not None:
        return home / "Library" / "Logs" / APP
    return Path(platformdirs.user_log_dir(APP, appauthor=False))


@dataclass(frozen=True)
class Step:
    """One thing install or uninstall did, and whether it worked."""

    text: str
    failed: bool = False


@dataclass(frozen=True)
class ServiceReport:
    """What install or uninstall did, step by step, plus notes on what to do next."""

    steps: list[Step]
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every step worked."""
        return not any(step.failed for step in self.steps)

    @property
    def text(self) -> str:
        """One line per step (failures marked), then the notes."""
        return "\n".join([("FAILED: " if s.failed else "") + s.text for s in self.steps] + self.notes)


@dataclass(frozen=True)
class ServiceState:
    """Whether the service is installed and running, with the service manager's own words."""

    installed: bool
    running: bool
    text: str


def install(
    exe: str,
    vault: Path | None,
    *,
    platform: str | None = None,
    home: Path | None = None,
    run: Runner | None = None,
) -> ServiceReport:
    """Write the unit/agent, enable and start it; if the service manager refuses, put things back."""
    platform = platform or current_platform()
    run = run or _run
    path = unit_path(platform, home)
    text = render(platform, exe, vault, home=home)
    path.parent.mkdir(parents=True, exist_ok=True)
    previous = path.read_bytes() if path.exists() else None
    path.write_text(text, encoding="utf-8")
    steps = [Step(f"{'updated' if previous is not None else 'wrote'} {path}")]
    if platform == "linux":
        commands = [["systemctl", "--user", "daemon-reload"],
                    ["systemctl", "--user", "enable", "--now", UNIT_NAME]]
        if previous is not None:
            commands.append(["systemctl", "--user", "restart", UNIT_NAME])
        # Undo what a half-done install left: the enable symlink (for a new unit) and systemd's copy.
        undo = ([] if previous is not None else [["systemctl", "--user", "disable", UNIT_NAME]]) + [
            ["systemctl", "--user", "daemon-reload"]]
    else:
        _log_dir(home).mkdir(parents=True, exist_ok=True)
        domain = f"gui/{os.getuid()}"
        commands = [["launchctl", "bootout", f"{domain}/{AGENT_LABEL}"]] if previous is not None else []
        commands.append(["launchctl", "bootstrap", domain, str(path)])
        undo = []
    ran = _steps(commands, run, tolerate=("bootout",))
    steps += ran
    if any(step.failed for step in ran):
        # A unit the service manager never took would only mislead `service status` and the next install.
        if previous is None:
            path.unlink()
            steps.append(Step(f"removed {path} again"))
        else:
            path.write_bytes(previous)
            steps.append(Step(f"restored the previous {path}"))
        steps += _steps(undo, run, tolerate=("disable", "daemon-reload"))
        manager = "systemd" if platform == "linux" else "launchd"
        return ServiceReport(steps, [f"{manager} did not take the service; fix the error above and run "
                                     "`wolfmem service install` again, or run `wolfmem daemon` yourself"])
    notes = []
    if platform == "linux":
        notes.append(f"an LLM API key for the service goes in {env_file(home)} (KEY=value lines)")
    notes.append(f"logs: {'journalctl --user -u ' + UNIT_NAME if platform == 'linux' else _log_dir(home)}")
    return ServiceReport(steps, notes)


def uninstall(
    *, platform: str | None = None, home: Path | None = None, run: Runner | None = None
) -> ServiceReport:
    """Stop and remove the unit/agent; a step that fails is reported as failed, and the rest still run."""
    platform = platform or current_platform()
    run = run or _run
    path = unit_path(platform, home)
    if not path.exists():
        return ServiceReport([], [f"no wolfmem service installed (nothing at {path})"])
    if platform == "linux":
        steps = _steps([["systemctl", "--user", "disable", "--now", UNIT_NAME]], run)
        path.unlink()
        steps.append(Step(f"removed {path}"))
        steps += _steps([["systemctl", "--user", "daemon-reload"]], run)
        hint = f"if it still runs: systemctl --user disable --now {UNIT_NAME}"
    else:
        # bootout fails when the agent is not loaded, which is what uninstall wants anyway.
        steps = _steps([["launchctl", "bootout", f"gui/{os.getuid()}/{AGENT_LABEL}"]], run, tolerate=("bootout",))
        path.unlink()
        steps.append(Step(f"removed {path}"))
        hint = f"if it still runs: launchctl bootout gui/{os.getuid()}/{AGENT_LABEL}"
    report = ServiceReport(steps)
    return report if report.ok else ServiceReport(steps, [hint])


def status(*, platform: str | None = None, home: Path | None = None, run: Runner | None = None) -> ServiceState:
    """Whether the service is installed, enabled and running."""
    platform = platform or current_platform()
    run = run or _run
    path = unit_path(platform, home)
    if not path.exists():
        return ServiceState(False, False, f"not installed (no {path}); run `wolfmem service install`")
    if platform == "linux":
        active = _query(run, ["systemctl", "--user", "is-active", UNIT_NAME])
        enabled = _query(run, ["systemctl", "--user", "is-enabled", UNIT_NAME])
        return ServiceState(True, active == "active", f"installed: {path}\nenabled: {enabled}\nactive: {active}")
    listing = _query(run, ["launchctl", "print", f"gui/{os.getuid()}/{AGENT_LABEL}"])
    state = next((line.split("=", 1)[1].strip() for line in listing.splitlines()
                  if line.strip().startswith("state =")), "not loaded")
    return ServiceState(True, state == "running", f"installed: {path}\nstate: {state}")


def _run(args: Sequence[str]) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=30, check=False)


def _steps(commands: list[list[str]], run: Runner, tolerate: tuple[str, ...] = ()) -> list[Step]:
    """Run each command until one fails; a tolerated command (e.g. stopping what may not run) never fails."""
    steps = []
    for args in commands:
        shown = " ".join(shlex.quote(a) for a in args)
        tolerated = any(word in args for word in tolerate)
        try:
            result = run(args)
        except (OSError, subprocess.SubprocessError) as exc:
            steps.append(Step(f"could not run `{shown}` ({exc})", failed=not tolerated))
        else:
            if result.returncode == 0:
                steps.append(Step(f"ran `{shown}`"))
                continue
            why = (result.stderr or result.stdout or "").strip().splitlines()
            steps.append(Step(f"`{shown}` exited {result.returncode}: {why[-1] if why else 'no message'}",
                              failed=not tolerated))
        if steps[-1].failed:
            break
    return steps


def _query(run: Runner, args: list[str]) -> str:
    try:
        result = run(args)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown ({args[0]} unavailable: {exc})"
    return (result.stdout or result.stderr or "").strip() or f"exit {result.returncode}"


def _systemd_quote(arg: str) -> str:
    """Quote one ExecStart word the way systemd parses it (double quotes, backslash escapes, % doubled)."""
    arg = arg.replace("%", "%%")
    if arg and all(c.isalnum() or c in "/._-+:=@," for c in arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'
