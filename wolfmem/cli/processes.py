"""Commands that run something: the daemon, the MCP server, curation and the audit, and the user service."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer

from wolfmem.cli import INTERRUPTED
from wolfmem.cli.common import (
    JsonOption,
    VaultOption,
    config_for,
    errors,
    fail,
    job_logging,
    open_memory,
    parse_day,
    print_json,
    require_vault_unless_default,
    terminal_bar,
)
from wolfmem.curation.staging import apply_staged as apply_staged_rewrites
from wolfmem.errors import UsageError


def daemon(vault: VaultOption = None) -> None:
    """Run in the foreground: watch the vault, keep the index fresh, run scheduled jobs."""
    from wolfmem.ops.daemon import Daemon, run_in_foreground

    with errors():
        config = config_for(vault)
        require_vault_unless_default(config)
        stopped_by = run_in_foreground(Daemon(config, bulk_progress=terminal_bar("Indexing")))
    _exit_for(stopped_by)


def mcp(vault: VaultOption = None) -> None:
    """Serve the memory tools over MCP on stdio."""
    from wolfmem.mcp.server import serve

    with open_memory(vault, bar=False) as memory:
        stopped_by = serve(memory)
    _exit_for(stopped_by)


def _exit_for(signum: int | None) -> None:
    """A server stopped by Ctrl+C exits 130, as a command interrupted does; by SIGTERM (a service stop) 0."""
    if signum == signal.SIGINT:
        raise typer.Exit(INTERRUPTED)


def curate(
    ctx: typer.Context,
    day: Annotated[str | None, typer.Option(
        "--date", help="Curate through this finished day, YYYY-MM-DD, up to yesterday (default: all so far).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print a diff per file; write nothing.")] = False,
    now: Annotated[bool, typer.Option("--now", help="Run now through the scheduled job path (the default).")] = True,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Curate the knowledge files from the episodes now, through the same job path as the schedule."""
    if ctx.invoked_subcommand is not None:
        return
    _run_job("curate", vault, as_json, day=parse_day(day, "--date"), dry_run=dry_run)


def curate_apply(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check again and print each diff; write nothing.")] = False,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Land the rewrites a run staged (over the removal budget), each checked again against the file as it is now."""
    with open_memory(vault) as memory, errors():
        result = apply_staged_rewrites(memory.services, dry_run=dry_run)
    _show_result(result, as_json)
    if result["status"] == "partial":
        raise typer.Exit(1)


def audit(
    ctx: typer.Context,
    now: Annotated[bool, typer.Option("--now", help="Run the audit now through the scheduled job path.")] = False,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the monthly audit now (`--now`), or apply a staged one (`audit apply`)."""
    if ctx.invoked_subcommand is not None:
        return
    if not now:
        fail("say `wolfmem audit --now` to run the audit, or `wolfmem audit apply` to apply a staged one", 2)
    _run_job("audit", vault, as_json)


def audit_apply(
    month: Annotated[str | None, typer.Option(help="The audit's month, YYYY-MM (default: the newest report).")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Apply the changes a staged audit report proposes; changed lines are marked stale, not applied."""
    from wolfmem.curation.audit.report import latest_report_month
    from wolfmem.curation.audit.run import apply_staged

    with open_memory(vault) as memory, errors():
        month = month or latest_report_month(memory.services)
        if month is None:
            raise UsageError("there is no audit report yet; run `wolfmem audit --now` first")
        result = apply_staged(memory.services, month)
    _show_result(result, as_json)


def curator(
    action: Annotated[str | None, typer.Argument(help="`take` makes this machine the vault's curator from now on.",
                                                 metavar="[take]")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show which machine curates this vault (recorded in the vault); `wolfmem curator take` moves it here."""
    from wolfmem.jobs.runner import JobRunner

    if action not in (None, "take"):
        fail(f"unknown action {action!r}: `wolfmem curator` shows the curator, `wolfmem curator take` moves it here", 2)
    with open_memory(vault) as memory, errors():
        runner = JobRunner(memory.services)
        now = memory.services.clock()
        if action == "take":
            runner.lease.choose(now, why=f"taken by hand on {runner.lease.machine} with `wolfmem curator take`")
        status = runner.status(now)
    if as_json:
        print_json(status["lease_detail"])
    else:
        typer.echo(f"curates: {status['lease']}")


def _run_job(name: str, vault: Path | None, as_json: bool, **options: Any) -> None:
    from wolfmem.jobs.runner import JobRunner

    with open_memory(vault) as memory, errors(), job_logging(memory):
        result = JobRunner(memory.services).run_now(name, memory.services.clock(), **options)
    _show_result(result.to_dict(), as_json)
    if result.failed:
        raise typer.Exit(1)


def _show_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(result)
        return
    typer.echo(f"{result.get('status', '?')}: {result.get('summary', '')}".rstrip(": "))
    for rel, outcome in (result.get("files") or {}).items():
        if isinstance(outcome, dict) and outcome.get("status") in {"rejected", "failed", "skipped-cas", "skipped"}:
            reasons = "; ".join(outcome.get("reasons") or []) or "no reason given"
            typer.echo(f"  {rel}: {outcome['status']}: {reasons}")
    for diff in (result.get("diffs") or {}).values():
        typer.echo(diff, nl=not diff.endswith("\n"))


def _service_call(action: Callable[..., Any], *args: Any) -> None:
    """Print what the service command did; exit 1 when a step failed."""
    with errors():
        report = action(*args)
    typer.echo(report.text)
    if not report.ok:
        raise typer.Exit(1)


def service_install(vault: VaultOption = None) -> None:
    """Start `wolfmem daemon` at login for this vault (--vault, $WOLFMEM_VAULT, the config file or the default)."""
    from wolfmem.ops.service import install
    from wolfmem.storage.services import create_vault
    from wolfmem.storage.vault import Vault

    with errors():
        config = config_for(vault)
        require_vault_unless_default(config)
        # The unit names the vault outright: the service must not depend on the environment it starts in.
        chosen = Vault(config.vault_path(), config.state_root())
        if not chosen.exists():
            create_vault(chosen, date.today())
            typer.echo(f"wolfmem: created the default vault at {chosen.root}", err=True)
    typer.echo(f"Installing the service for the vault at {chosen.root}")
    exe = str(Path(sys.argv[0]).resolve()) if Path(sys.argv[0]).name == "wolfmem" else "wolfmem"
    _service_call(install, exe, chosen.root)


def service_uninstall() -> None:
    """Remove the user service."""
    from wolfmem.ops.service import uninstall

    _service_call(uninstall)


def service_status() -> None:
    """Say whether the user service is installed and running; exit 1 when it is not running."""
    from wolfmem.ops.service import status as service_state

    with errors():
        state = service_state()
    typer.echo(state.text)
    if not state.running:
        raise typer.Exit(1)
