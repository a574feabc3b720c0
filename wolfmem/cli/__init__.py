"""The `wolfmem` command: a thin layer over the library. Exit 1: the operation failed; 2: misuse; 130: Ctrl+C.

`main` takes over Ctrl+C before it imports the commands (`cli.commands`) and the library beneath them,
so an interrupt at any moment, half a second of imports included, ends the same way: one line on
stderr, exit 130, and nothing half-written (a write under way completes first;
`cancellation.completing`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Any

INTERRUPTED = 130  # the shell's code for a process ended by SIGINT (128 + 2)


def main() -> None:
    """Entry point of the console script."""
    try:  # a Ctrl+C this early is Python's own KeyboardInterrupt, caught below all the same
        from wolfmem.cancellation import on_sigint

        signal.signal(signal.SIGINT, on_sigint)
        from wolfmem.cli.commands import app

        app(prog_name="wolfmem")
        code: Any = 0
    except KeyboardInterrupt:  # before the app ran, or after it; within a command Typer exits 130
        code = INTERRUPTED
    except SystemExit as exc:
        code = exc.code
    if code == INTERRUPTED:
        print("wolfmem: interrupted", file=sys.stderr)
    # The work is done: a Ctrl+C while the interpreter shuts down ends it at once, with nothing to say.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: the exit code still says it
            stream.flush()
    signal.signal(signal.SIGINT, lambda _signum, _frame: os._exit(INTERRUPTED))
    sys.exit(code)


def __getattr__(name: str) -> Any:
    """The Typer app (`cli.commands`), imported when first asked for (tests invoke it directly)."""
    if name == "app":
        from wolfmem.cli.commands import app

        return app
    raise AttributeError(f"module 'wolfmem.cli' has no attribute {name!r}")
