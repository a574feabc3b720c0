"""Drive a real terminal editor (vim, nano, emacs) through tmux: type, read its screen, wait for its prompts.

Each editor runs in its own tmux server (a private socket), so a test never touches another's
sessions and `close()` ends everything it started. Configuration is pinned per editor (no rc files),
so what is on screen does not depend on the machine.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest

# Each editor with its rc files switched off, as a person's editor would behave out of the box.
COMMANDS: dict[str, Sequence[str]] = {
    "vim": ("vim", "-u", "NONE", "-N", "-n", "-i", "NONE"),  # no vimrc, nocompatible, no swap file, no viminfo
    "nano": ("nano", "--ignorercfiles"),
    "emacs": ("emacs", "-Q", "-nw"),
}


def need(editor: str) -> None:
    """Skip the test, saying why, unless tmux and the editor are installed."""
    for program in ("tmux", COMMANDS[editor][0]):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed (apt-get install tmux vim nano emacs-nox; .ci/run does)")


class Editor:
    """One editor in a detached 200x50 tmux session."""

    def __init__(self, editor: str, file: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.socket = f"wolfmem-test-{uuid.uuid4().hex[:10]}"
        self.name = editor
        command = shlex.join([*COMMANDS[editor], *extra, str(file)])
        environment = {**os.environ, **(env or {}), "TERM": "xterm-256color", "LANG": "C.UTF-8"}
        self._tmux("new-session", "-d", "-x", "200", "-y", "50", "-s", "editor", "-c", str(file.parent),
                   command, env=environment)

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=env,
                              timeout=30)
        if done.returncode:
            raise RuntimeError(f"tmux {args[0]} failed: {done.stderr.strip()}")
        return done.stdout

    def keys(self, *keys: str) -> None:
        """Send tmux key names (Enter, Escape, C-o, M->)."""
        self._tmux("send-keys", "-t", "editor", *keys)

    def type(self, text: str) -> None:
        """Type text literally."""
        self._tmux("send-keys", "-t", "editor", "-l", "--", text)

    def screen(self) -> str:
        """What the terminal shows now."""
        return self._tmux("capture-pane", "-p", "-t", "editor")

    def wait_for(self, pattern: str, timeout: float = 15.0) -> re.Match[str]:
        """Poll the screen until the regex pattern appears on it; fail with the screen after timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.screen())
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name} never showed {pattern!r}; the screen was:\n{self.screen()}")
            time.sleep(0.05)

    def wait_gone(self, pattern: str, timeout: float = 15.0) -> None:
        """Poll the screen until the regex pattern is no longer on it."""
        deadline = time.monotonic() + timeout
        while re.search(pattern, self.screen()):
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name} still shows {pattern!r}; the screen was:\n{self.screen()}")
            time.sleep(0.05)

    def running(self) -> bool:
        """Whether the editor's session still exists (it ends when the editor quits)."""
        return subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", "editor"],
                              capture_output=True, timeout=30).returncode == 0

    def close(self) -> None:
        """End the session and its tmux server, whatever state the editor is in."""
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)
