"""The `wolfmem` commands, registered on one Typer app. Exit 1: the operation failed; 2: misuse.

Each command imports the heavy parts it needs (the MCP SDK, the scheduler, the LLM client) when it
runs, so `wolfmem search` starts without loading the rest.
"""

from __future__ import annotations

from typing import Annotated

import typer

from wolfmem import __version__
from wolfmem.cli import processes, reads, writes
from wolfmem.cli.help import use_click_conventions

use_click_conventions()
app = typer.Typer(
    help="wolfmem: long-term memory for AI agents, kept in a markdown vault.",
    invoke_without_command=True,  # `wolfmem` alone prints help and exits 0, as `gh` does
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
audit_app = typer.Typer(help="The monthly adversarial audit.", invoke_without_command=True)
curate_app = typer.Typer(help="Nightly curation, run now; `curate apply` lands a staged rewrite.",
                         invoke_without_command=True)
service_app = typer.Typer(help="Run the daemon as a user service (systemd on Linux, launchd on macOS).")
app.add_typer(audit_app, name="audit")
app.add_typer(curate_app, name="curate")
app.add_typer(service_app, name="service")


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"wolfmem {__version__}")
        raise typer.Exit()


@app.callback()
def _global_options(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """The options that come before any command."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit()


# Every command, registered here in one place.
app.command()(reads.init)
app.command()(reads.search)
app.command()(reads.get)
app.command(name="map")(reads.memory_map)
app.command()(reads.reindex)
app.command()(reads.status)
app.command(name="config")(reads.show_config)
app.command()(writes.save)
app.command()(writes.log)
app.command()(processes.daemon)
app.command()(processes.mcp)
app.command()(processes.curator)
curate_app.callback()(processes.curate)
curate_app.command("apply")(processes.curate_apply)
audit_app.callback()(processes.audit)
audit_app.command("apply")(processes.audit_apply)
app.command()(writes.diff)
app.command()(writes.restore)
app.command()(writes.history)
app.command()(writes.update)
app.command()(writes.forget)
app.command()(reads.doctor)
service_app.command("install")(processes.service_install)
service_app.command("uninstall")(processes.service_uninstall)
service_app.command("status")(processes.service_status)
