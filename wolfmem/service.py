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


def install(
    exe: str,
    vault: Path | None,
    *,
    platform: str | None = None,
    home: Path | None = None,
    run: Runner | None = None,
) -> str:
    """Write the unit/agent, enable and start it; return a report of what was done."""
    platform = platform or current_platform()
    run = run or _run
    path = unit_path(platform, home)
    text = render(platform, exe, vault, home=home)
    path.parent.mkdir(parents=True, exist_ok=True)
    existed = path.exists()
    path.write_text(text, encoding="utf-8")
    done = [f"{'updated' if existed else 'wrote'} {path}"]
    if platform == "linux":
        steps = [["systemctl", "--user", "daemon-reload"],
                 ["systemctl", "--user", "enable", "--now", UNIT_NAME]]
        if existed:
            steps.append(["systemctl", "--user", "restart", UNIT_NAME])
        hint = f"systemd did not take it; run: systemctl --user enable --now {UNIT_NAME}"
    else:
        _log_dir(home).mkdir(parents=True, exist_ok=True)
        domain = f"gui/{os.getuid()}"
        steps = [["launchctl", "bootout", f"{domain}/{AGENT_LABEL}"]] if existed else []
        steps.append(["launchctl", "bootstrap", domain, str(path)])
        hint = f"launchd did not take it; run: launchctl bootstrap {domain} {path}"
    done += _steps(steps, run, hint, tolerate=("bootout",))
    if platform == "linux":
        done.append(f"an LLM API key for the service goes in {env_file(home)} (KEY=value lines)")
    done.append(f"logs: {'journalctl --user -u ' + UNIT_NAME if platform == 'linux' else _log_dir(home)}")
    return "\n".join(done)


def uninstall(*, platform: str | None = None, home: Path | None = None, run: Runner | None = None) -> str:
    """Stop and remove the unit/agent; return a report."""
    platform = platform or current_platform()
    run = run or _run
    path = unit_path(platform, home)
    if not path.exists():
        return f"no wolfmem service installed (nothing at {path})"
    if platform == "linux":
        done = _steps([["systemctl", "--user", "disable", "--now", UNIT_NAME]], run, "", tolerate=("disable",))
        path.unlink()
        done.append(f"removed {path}")
        done += _steps([["systemctl", "--user", "daemon-reload"]], run, "", tolerate=("daemon-reload",))
    else:
        done = _steps([["launchctl", "bootout", f"gui/{os.getuid()}/{AGENT_LABEL}"]], run, "",
                      tolerate=("bootout",))
        path.unlink()
        done.append(f"removed {path}")
    return "\n".join(done)


def status(*, platform: str | None = None, home: Path | None = None, run: Runner | None = None) -> str:
    """Whether the service is installed, enabled and running."""
    platform = platform or current_platform()
    run = run or _run
    path = unit_path(platform, home)
    if not path.exists():
        return f"not installed (no {path}); run `wolfmem service install`"
    if platform == "linux":
        active = _query(run, ["systemctl", "--user", "is-active", UNIT_NAME])
        enabled = _query(run, ["systemctl", "--user", "is-enabled", UNIT_NAME])
        return f"installed: {path}\nenabled: {enabled}\nactive: {active}"
    listing = _query(run, ["launchctl", "print", f"gui/{os.getuid()}/{AGENT_LABEL}"])
    state = next((line.split("=", 1)[1].strip() for line in listing.splitlines()
                  if line.strip().startswith("state =")), "not loaded")
    return f"installed: {path}\nstate: {state}"


def _run(args: Sequence[str]) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=30, check=False)


def _steps(steps: list[list[str]], run: Runner, hint: str, tolerate: tuple[str, ...] = ()) -> list[str]:
    """Run each command and report it; a missing tool or a failure says how to finish by hand."""
    done = []
    for args in steps:
        shown = " ".join(shlex.quote(a) for a in args)
        try:
            result = run(args)
        except (OSError, subprocess.SubprocessError) as exc:
            done.append(f"could not run `{shown}` ({exc})" + (f"; {hint}" if hint else ""))
            break
        if result.returncode == 0 or any(word in args for word in tolerate):
            done.append(f"ran `{shown}`")
        else:
            why = (result.stderr or result.stdout or "").strip().splitlines()
            done.append(f"`{shown}` failed: {why[-1] if why else 'exit ' + str(result.returncode)}"
                        + (f"; {hint}" if hint else ""))
            break
    return done


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
