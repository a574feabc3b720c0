"""The `wolfmem` command: a thin layer over the library. Exit 1: the operation failed; 2: misuse."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from wolfmem.config import Config, load_config
from wolfmem.errors import UsageError, WolfmemError
from wolfmem.memory.facade import Memory

app = typer.Typer(
    help="wolfmem: long-term memory for AI agents, kept in a markdown vault.",
    no_args_is_help=True,
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

VaultOption = Annotated[
    Path | None,
    typer.Option("--vault", help="The vault folder (default: $WOLFMEM_VAULT, the config file, or the user data dir)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def main() -> None:
    """Entry point of the console script."""
    app(prog_name="wolfmem")


def _print_version(value: bool) -> None:
    if value:
        from wolfmem import __version__

        typer.echo(f"wolfmem {__version__}")
        raise typer.Exit()


@app.callback()
def _global_options(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """The options that come before any command."""


# -- plumbing -----------------------------------------------------------------
def _fail(message: str, code: int) -> NoReturn:
    typer.echo(f"wolfmem: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def _errors() -> Iterator[None]:
    """The one place CLI errors are translated: misuse exits 2, a failed operation exits 1."""
    try:
        yield
    except UsageError as exc:
        _fail(str(exc), 2)
    except WolfmemError as exc:
        _fail(str(exc), 1)
    except OSError as exc:
        _fail(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), 1)


def _config(vault: Path | None) -> Config:
    return load_config({"vault": str(vault) if vault is not None else None})


def _require_vault_unless_default(config: Config) -> None:
    """Only the default vault is created implicitly; a named folder must already be a vault."""
    if config.vault is not None:
        from wolfmem.storage.vault import Vault

        Vault(config.vault_path(), config.state_root()).require()


@contextmanager
def _memory(vault: Path | None, *, create: bool | None = None) -> Iterator[Memory]:
    """Open the vault. Only the default vault is created on first use, so a typo never makes a new one."""
    with _errors():
        config = _config(vault)
        if create is None:
            create = config.vault is None
        with Memory(config=config, create=create) as memory:
            yield memory


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _parse_day(value: str | None, name: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        _fail(f"{name} must be a date like 2026-11-29, not {value!r}", 2)


# -- vault and reads ------------------------------------------------------------
@app.command()
def init(vault: VaultOption = None) -> None:
    """Create a vault from the templates; never overwrites an existing file."""
    with _errors():
        config = _config(vault)
        from wolfmem.storage.vault import Vault

        target = Vault(config.vault_path(), config.state_root())
        created = target.init()
    if created:
        typer.echo(f"Created in {target.root}:")
        for item in created:
            typer.echo(f"  {item}")
    else:
        typer.echo(f"{target.root} is already a vault; nothing created.")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="A natural-language question or keywords.")],
    source: Annotated[list[str] | None, typer.Option("--source", "-s", help="knowledge, episodes, consolidated or archive; repeatable. Default: knowledge and episodes.")] = None,
    after: Annotated[str | None, typer.Option(help="Only facts dated on or after YYYY-MM-DD.")] = None,
    before: Annotated[str | None, typer.Option(help="Only facts dated on or before YYYY-MM-DD.")] = None,
    limit: Annotated[int, typer.Option(help="How many hits, 1-50.")] = 10,
    today: Annotated[str | None, typer.Option(help="Count 'yesterday', 'last week' ... in the query from this YYYY-MM-DD instead of today.")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search memory; one line per hit with its ref."""
    with _memory(vault) as memory, _errors():
        hits = memory.search(query, sources=source or None, limit=limit, after=after, before=before, today=today)
    if as_json:
        _print_json([hit.to_dict() for hit in hits])
        return
    if not hits:
        typer.echo("No matches. Try 2-3 differently worded searches before concluding it is not recorded.")
    for hit in hits:
        where = " · ".join(part for part in (hit.source, hit.section, hit.date) if part)
        typer.echo(f"{hit.ref}  [{where}]  {hit.snippet}")


@app.command()
def get(
    ref: Annotated[str, typer.Argument(help="A ref such as file:knowledge/people.md#L12, a path, #L10-L40 or #Section.")],
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print the file, line range or section a ref names."""
    with _memory(vault) as memory, _errors():
        excerpt = memory.get(ref)
    if as_json:
        _print_json(excerpt.to_dict())
    else:
        typer.echo(excerpt.text, nl=not excerpt.text.endswith("\n"))


@app.command(name="map")
def memory_map(vault: VaultOption = None) -> None:
    """Print the <memory_map> block for an agent's prompt."""
    with _memory(vault) as memory, _errors():
        typer.echo(memory.memory_map(), nl=False)


@app.command()
def reindex(vault: VaultOption = None) -> None:
    """Rebuild the index from the files (it is a disposable cache)."""
    with _memory(vault) as memory, _errors():
        if sys.stderr.isatty():
            from rich.progress import Progress

            with Progress(transient=True) as progress:
                task = progress.add_task("Indexing", total=None)
                report = memory.reindex(lambda done, total: progress.update(task, completed=done, total=total))
        else:
            report = memory.reindex()
        embedded = _embed_all(memory) if memory.hybrid is not None else None
    typer.echo(f"Indexed {report.facts} facts from {len(report.indexed)} files.")
    for rel, why in report.skipped.items():
        typer.echo(f"skipped {rel}: {why}", err=True)
    if embedded:
        typer.echo(embedded)


def _embed_all(memory: Memory) -> str:
    """Embed every fact without a vector, with a bar on a terminal; an unreachable endpoint is no failure."""
    from wolfmem.semantic.client import EmbeddingsUnavailable

    assert memory.hybrid is not None
    try:
        if sys.stderr.isatty():
            from rich.progress import Progress

            with Progress(transient=True) as progress:
                task = progress.add_task("Embedding", total=None)
                result = memory.hybrid.embed_all(lambda done, total: progress.update(task, completed=done, total=total))
        else:
            result = memory.hybrid.embed_all()
    except EmbeddingsUnavailable as exc:
        return f"Embeddings not updated ({exc}); search stays lexical for unembedded facts until the daemon catches up."
    return f"Embedded {result.embedded} new facts; vectors of the others were reused."


@app.command()
def status(vault: VaultOption = None, as_json: JsonOption = False) -> None:
    """Vault, daemon, index health, jobs and LLM."""
    from wolfmem.status import collect, render

    with _memory(vault) as memory, _errors():
        data = collect(memory)
    if as_json:
        _print_json(data)
    else:
        typer.echo(render(data))


@app.command(name="config")
def show_config(vault: VaultOption = None) -> None:
    """Print the resolved settings as TOML for the config file, each with its source and help."""
    from wolfmem.config import default_config_file, resolve
    from wolfmem.config_toml import render

    with _errors():
        resolved = resolve({"vault": str(vault) if vault is not None else None})
    typer.echo(render(resolved, default_config_file()), nl=False)


# -- writes -----------------------------------------------------------------------
@app.command()
def save(
    fact: Annotated[str, typer.Argument(help="One self-contained sentence.")],
    type: Annotated[str, typer.Option("--type", "-t", help="people, projects, preferences, technical or decisions.")] = "technical",
    topic: Annotated[str | None, typer.Option(help="The ## section, e.g. 'Sarah (Manager)'.")] = None,
    request_id: Annotated[str | None, typer.Option(help="Makes a retry a no-op.")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Save one durable fact; a fact already on file is a no-op."""
    with _memory(vault) as memory, _errors():
        receipt = memory.save(fact, type=type, topic=topic, request_id=request_id)
    if as_json:
        _print_json(receipt.to_dict())
    else:
        typer.echo(receipt.message)


@app.command()
def log(
    text: Annotated[
        list[str] | None,
        typer.Argument(
            help="What happened: the words make one bullet. A lone `-` reads one bullet per line from stdin."
        ),
    ] = None,
    bullet: Annotated[
        list[str] | None, typer.Option("--bullet", "-b", help="A bullet; repeat the option for several.")
    ] = None,
    headline: Annotated[str | None, typer.Option(help="The entry's headline.")] = None,
    when: Annotated[
        str | None, typer.Option(help="When it happened, e.g. 2026-11-20T14:05 (default: now).")
    ] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Append an entry to today's (or --when's) episode log: `wolfmem log Deployed to staging`."""
    bullets = _bullets(text or [], bullet or [])
    moment = None
    if when is not None:
        try:
            moment = datetime.fromisoformat(when)
        except ValueError:
            _fail(f"--when must be a date and time like 2026-11-20T14:05, not {when!r}", 2)
    with _memory(vault) as memory, _errors():
        hit = memory.log_episode(bullets, headline=headline, when=moment)
    if as_json:
        _print_json(hit.to_dict())
    else:
        typer.echo(f"Logged to {hit.ref}")


def _bullets(words: list[str], options: list[str]) -> list[str]:
    """The shell splits `log Deployed to staging` into words; they are one bullet, not three."""
    if words == ["-"]:
        lines = [line for line in sys.stdin.read().splitlines() if line.strip()]
    else:
        lines = [" ".join(words)] if words else []
    lines += options
    if not lines:
        _fail("say what happened: `wolfmem log Deployed to staging`; several bullets take "
              "`--bullet A --bullet B`, or `-` to read one bullet per line from stdin", 2)
    return lines


# -- processes ----------------------------------------------------------------------
@app.command()
def daemon(vault: VaultOption = None) -> None:
    """Run in the foreground: watch the vault, keep the index fresh, run scheduled jobs."""
    from wolfmem.daemon import Daemon, run_in_foreground

    with _errors():
        config = _config(vault)
        _require_vault_unless_default(config)
        run_in_foreground(Daemon(config))


@app.command()
def mcp(vault: VaultOption = None) -> None:
    """Serve the memory tools over MCP on stdio."""
    from wolfmem.mcp_server import serve

    with _memory(vault) as memory:
        serve(memory)


# -- curation -------------------------------------------------------------------------
@curate_app.callback()
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
    _run_job("curate", vault, as_json, day=_parse_day(day, "--date"), dry_run=dry_run)


@curate_app.command("apply")
def curate_apply(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check again and print each diff; write nothing.")] = False,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Land the rewrites a run staged (over the removal budget), each checked again against the file as it is now."""
    from wolfmem.curation.staging import apply_staged

    with _memory(vault) as memory, _errors():
        result = apply_staged(memory, dry_run=dry_run)
    _show_result(result, as_json)
    if result["status"] == "partial":
        raise typer.Exit(1)


@audit_app.callback()
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
        _fail("say `wolfmem audit --now` to run the audit, or `wolfmem audit apply` to apply a staged one", 2)
    _run_job("audit", vault, as_json)


@audit_app.command("apply")
def audit_apply(
    month: Annotated[str | None, typer.Option(help="The audit's month, YYYY-MM (default: the newest report).")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Apply the changes a staged audit report proposes; changed lines are marked stale, not applied."""
    from wolfmem.curation.audit.run import apply_staged, latest_report_month

    with _memory(vault) as memory, _errors():
        month = month or latest_report_month(memory)
        if month is None:
            raise UsageError("there is no audit report yet; run `wolfmem audit --now` first")
        result = apply_staged(memory, month)
    _show_result(result, as_json)


def _run_job(name: str, vault: Path | None, as_json: bool, **options: Any) -> None:
    from wolfmem.jobs.runner import JobRunner

    with _memory(vault) as memory, _errors():
        result = JobRunner(memory, memory.config).run_now(name, memory.clock(), **options)
    _show_result(result, as_json)
    if result.get("status") in {"failed", "error"}:
        raise typer.Exit(1)


def _show_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        _print_json(result)
        return
    typer.echo(f"{result.get('status', '?')}: {result.get('summary', '')}".rstrip(": "))
    for rel, outcome in (result.get("files") or {}).items():
        if isinstance(outcome, dict) and outcome.get("status") in {"rejected", "failed", "skipped-cas", "staged", "skipped"}:
            reasons = "; ".join(outcome.get("reasons") or []) or "no reason given"
            typer.echo(f"  {rel}: {outcome['status']}: {reasons}")
    for diff in (result.get("diffs") or {}).values():
        typer.echo(diff, nl=not diff.endswith("\n"))


@app.command()
def diff(
    file: Annotated[str, typer.Argument(help="A knowledge file, e.g. knowledge/people.md.")],
    vault: VaultOption = None,
) -> None:
    """Show the file's .bak against its current content."""
    from wolfmem.curation.backups import diff_backup

    with _memory(vault) as memory, _errors():
        typer.echo(diff_backup(memory, file), nl=False)


@app.command()
def restore(
    file: Annotated[str | None, typer.Argument(help="A knowledge file, e.g. people or knowledge/people.md.")] = None,
    to: Annotated[str | None, typer.Option("--to", help="A version id from `wolfmem history FILE`, or a date.")] = None,
    fact: Annotated[str | None, typer.Option("--fact", help="An archived fact's ref (search --source archive).")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Swap FILE's .bak back in, restore a kept version (--to), or put an archived fact back (--fact)."""
    from wolfmem.curation.backups import restore_backup, restore_version

    if (fact is None) == (file is None):
        _fail("name a FILE (with or without --to), or pass --fact REF alone", 2)
    with _memory(vault) as memory, _errors():
        if fact is not None:
            correction = memory.restore_fact(fact)
            _print_json(correction.to_dict()) if as_json else typer.echo(correction.message)
            return
        assert file is not None
        typer.echo(restore_version(memory, file, to) if to else restore_backup(memory, file))


@app.command()
def history(
    file: Annotated[str, typer.Argument(help="A knowledge file, e.g. people or knowledge/people.md.")],
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the kept versions of a knowledge file, newest first (restore one with `restore FILE --to ID`)."""
    from wolfmem.curation.backups import versions

    with _memory(vault) as memory, _errors():
        kept = versions(memory, file)
    if as_json:
        _print_json([vars(version) for version in kept])
        return
    if not kept:
        typer.echo("No versions kept yet; one is recorded each time wolfmem writes the file.")
    for version in kept:
        typer.echo(f"{version.id:>5}  {version.at}  {version.cause:<10} {version.size:>8} bytes")


@app.command()
def update(
    ref: Annotated[str, typer.Argument(help="The fact's ref from search, e.g. file:knowledge/people.md#L12.")],
    fact: Annotated[str, typer.Argument(help="The corrected fact: one self-contained sentence.")],
    expected: Annotated[str | None, typer.Option(help="The fact's current text, if the ref did not come from search.")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Replace one fact with a corrected one; the old line is archived."""
    with _memory(vault) as memory, _errors():
        correction = memory.update(ref, fact, expected)
    _print_json(correction.to_dict()) if as_json else typer.echo(correction.message)


@app.command()
def forget(
    ref: Annotated[str, typer.Argument(help="The fact's ref from search, e.g. file:knowledge/people.md#L12.")],
    reason: Annotated[str, typer.Option("--reason", help="Why it should be forgotten, e.g. 'it was wrong'.")],
    expected: Annotated[str | None, typer.Option(help="The fact's current text, if the ref did not come from search.")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove one fact from its knowledge file; it is archived and can be restored."""
    with _memory(vault) as memory, _errors():
        correction = memory.forget(ref, reason, expected)
    _print_json(correction.to_dict()) if as_json else typer.echo(correction.message)


@app.command()
def doctor(vault: VaultOption = None, as_json: JsonOption = False) -> None:
    """Check the whole install: vault, state, index, watcher, daemon, lease, LLM. Exit 1 on any failure."""
    from wolfmem.doctor import run_checks

    with _errors():
        report = run_checks(_config(vault))
    if as_json:
        _print_json(report.to_dict())
    else:
        typer.echo(report.text)
    if not report.ok:
        raise typer.Exit(1)


# -- service --------------------------------------------------------------------------------
def _service_call(action: Callable[..., Any], *args: Any) -> None:
    """Print what the service command did; exit 1 when a step failed."""
    with _errors():
        report = action(*args)
    typer.echo(report.text)
    if not report.ok:
        raise typer.Exit(1)


@service_app.command("install")
def service_install(vault: VaultOption = None) -> None:
    """Start `wolfmem daemon` at login and restart it on failure."""
    from wolfmem.service import install

    if vault is not None:
        with _errors():
            _require_vault_unless_default(_config(vault))
    exe = str(Path(sys.argv[0]).resolve()) if Path(sys.argv[0]).name == "wolfmem" else "wolfmem"
    _service_call(install, exe, vault.resolve() if vault else None)


@service_app.command("uninstall")
def service_uninstall() -> None:
    """Remove the user service."""
    from wolfmem.service import uninstall

    _service_call(uninstall)


@service_app.command("status")
def service_status() -> None:
    """Say whether the user service is installed and running; exit 1 when it is not running."""
    from wolfmem.service import status as service_state

    with _errors():
        state = service_state()
    typer.echo(state.text)
    if not state.running:
        raise typer.Exit(1)
