"""What every command shares: the vault and --json options, opening the vault, and the one error translation."""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from wolfmem.cli.names import for_people
from wolfmem.config import Config, load_config
from wolfmem.errors import UsageError, WolfmemError, database_error, storage_error
from wolfmem.memory.facade import Memory
from wolfmem.search.sync import BulkProgress

VaultOption = Annotated[
    Path | None,
    typer.Option("--vault", help="The vault folder (default: $WOLFMEM_VAULT, the config file, or the user data dir)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def fail(message: str, code: int) -> NoReturn:
    typer.echo(f"wolfmem: {for_people(message)}", err=True)
    raise typer.Exit(code)


def stdin_text() -> str:
    """All of stdin as text, read as UTF-8 whatever the locale; bytes that are not UTF-8 are misuse (exit 2)."""
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        fail(f"stdin is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); convert it to UTF-8 first", 2)


@contextmanager
def errors() -> Iterator[None]:
    """The one place CLI errors are translated: misuse exits 2, a failed operation exits 1.

    The library raises only WolfmemErrors; raw OS and SQLite errors are translated here as well, so a
    fault it missed still reads as a reason and a fix rather than a traceback.
    """
    try:
        yield
    except UsageError as exc:
        fail(str(exc), 2)
    except WolfmemError as exc:
        fail(str(exc), 1)
    except OSError as exc:
        fail(str(storage_error(exc, "use", exc.filename or "a file")), 1)
    except sqlite3.Error as exc:
        fail(str(database_error(exc, "wolfmem's state folder")), 1)


class _OneLine(logging.Formatter):
    """A record as one line for the person at the terminal; a traceback is left to the log file."""

    def __init__(self, log_path: Path | None) -> None:
        super().__init__()
        self.log_path = log_path

    def format(self, record: logging.LogRecord) -> str:
        where = f" (the traceback is in {self.log_path})" if record.exc_info and self.log_path else ""
        return f"wolfmem: {record.getMessage()}{where}"


@contextmanager
def job_logging(memory: Memory) -> Iterator[Path | None]:
    """While a job runs: warnings to stderr, one line each; the configured level, tracebacks too, to the vault's log.

    The log file is the daemon's own (see `wolfmem status`), so a manual run is on record beside the
    scheduled ones. Yields its path, or None when the log folder cannot be created.
    """
    level = logging.getLevelNamesMapping()[memory.config.log_level.upper()]
    handlers: list[logging.Handler] = []
    path: Path | None = None
    log_path = memory.config.log_path(memory.vault.state_dir.name)
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        to_file = logging.FileHandler(log_path, encoding="utf-8")
    except OSError:
        pass  # no log file: the command still runs, and still says what went wrong on stderr
    else:
        to_file.setLevel(level)
        to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handlers.append(to_file)
        path = log_path
    stderr = logging.StreamHandler()
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(_OneLine(path))
    handlers.append(stderr)
    root = logging.getLogger("wolfmem")
    old_level = root.level
    root.setLevel(min(level, logging.WARNING))
    for handler in handlers:
        root.addHandler(handler)
    try:
        yield path
    finally:
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(old_level)


def config_for(vault: Path | None) -> Config:
    return load_config({"vault": str(vault) if vault is not None else None})


def require_vault_unless_default(config: Config) -> None:
    """Only the default vault is created implicitly; a named folder must already be a vault."""
    if config.vault is not None:
        from wolfmem.storage.vault import Vault

        Vault(config.vault_path(), config.state_root()).require()


@contextmanager
def open_memory(vault: Path | None, *, create: bool | None = None, bar: bool = True) -> Iterator[Memory]:
    """Open the vault. Only the default vault is created on first use, so a typo never makes a new one.

    With `bar` (never for MCP, whose stdio is the protocol), a first sync that fills an empty index
    with a big job shows its progress on stderr when that is a terminal.
    """
    with errors():
        config = config_for(vault)
        if create is None:
            create = config.vault is None
        from wolfmem.storage.vault import Vault

        first_use = create and not Vault(config.vault_path(), config.state_root()).exists()
        with Memory(config=config, create=create) as memory:
            memory.syncer.bulk_progress = terminal_bar("Indexing") if bar else None
            if first_use:
                typer.echo(f"wolfmem: created the default vault at {memory.vault.root} (for another one, "
                           "pass --vault DIR or set $WOLFMEM_VAULT)", err=True)
            yield memory


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """A transient bar on stderr, as a (done, total) callback."""
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(label, total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


def terminal_bar(label: str) -> BulkProgress | None:
    """A factory of progress bars when stderr is a terminal, else None (no bar in logs and pipes)."""
    return (lambda: progress_bar(label)) if sys.stderr.isatty() else None


def print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def parse_day(value: str | None, name: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        fail(f"{name} must be a date like 2026-11-29, not {value!r}", 2)
