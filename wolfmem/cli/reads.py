"""Commands that read the vault or report on it: init, search, get, map, reindex, status, config, doctor."""

from __future__ import annotations

from datetime import date
from typing import Annotated

import typer

from wolfmem.cli.common import (
    JsonOption,
    VaultOption,
    config_for,
    errors,
    open_memory,
    print_json,
    terminal_bar,
)
from wolfmem.cli.names import full_ref
from wolfmem.memory.facade import Memory


def init(vault: VaultOption = None) -> None:
    """Create a vault from the templates; never overwrites an existing file."""
    with errors():
        config = config_for(vault)
        from wolfmem.storage.services import create_vault
        from wolfmem.storage.vault import Vault

        target = Vault(config.vault_path(), config.state_root())
        created = create_vault(target, date.today())
    if created:
        typer.echo(f"Created in {target.root}:")
        for item in created:
            typer.echo(f"  {item}")
    else:
        typer.echo(f"{target.root} is already a vault; nothing created.")


def search(
    words: Annotated[list[str], typer.Argument(metavar="QUERY", show_default=False,
                                               help="A question or keywords; the rest of the line, unquoted: "
                                                    "`wolfmem search who is my manager`.")],
    source: Annotated[list[str] | None, typer.Option(
        "--source", "-s",
        help="knowledge, episodes, consolidated or archive; repeatable. Default: knowledge and episodes.")] = None,
    after: Annotated[str | None, typer.Option(help="Only facts dated on or after YYYY-MM-DD.")] = None,
    before: Annotated[str | None, typer.Option(help="Only facts dated on or before YYYY-MM-DD.")] = None,
    limit: Annotated[int, typer.Option(help="How many hits, 1-50.")] = 10,
    today: Annotated[str | None, typer.Option(
        help="Count 'yesterday', 'last week' ... in the query from this YYYY-MM-DD instead of today.")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search memory; one line per hit with its ref: `wolfmem search who is my manager`."""
    query = " ".join(words)  # the shell split the question into words; they are one query
    with open_memory(vault) as memory, errors():
        hits = memory.search(query, sources=source or None, limit=limit, after=after, before=before, today=today)
        notices = memory.take_notices(hit.path for hit in hits)
    for notice in notices:  # stderr: the JSON on stdout stays a list of hits
        typer.echo(f"notice: {notice}", err=True)
    if as_json:
        print_json([hit.to_dict() for hit in hits])
        return
    if not hits:
        typer.echo(f"Nothing found for {query!r}. Try other words: a name, a synonym or a broader topic.")
    for hit in hits:
        where = " · ".join(part for part in (hit.source, hit.section, hit.date) if part)
        typer.echo(f"{hit.ref}  [{where}]  {hit.snippet}")


def get(
    ref: Annotated[str, typer.Argument(help="A ref such as file:knowledge/people.md#L12, a path, #L10-L40 or "
                                            "#Section; a curated file by its short name: people, people.md#Sarah.")],
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print the file, line range or section a ref names."""
    with open_memory(vault) as memory, errors():
        excerpt = memory.get(full_ref(ref))
    if as_json:
        print_json(excerpt.to_dict())
    else:
        typer.echo(excerpt.text, nl=not excerpt.text.endswith("\n"))
        for notice in excerpt.notices:
            typer.echo(f"notice: {notice}", err=True)


def memory_map(vault: VaultOption = None) -> None:
    """Print the <memory_map> block for an agent's prompt."""
    with open_memory(vault) as memory, errors():
        typer.echo(memory.memory_map(), nl=False)


def reindex(vault: VaultOption = None) -> None:
    """Rebuild the index from the files (it is a disposable cache)."""
    with open_memory(vault) as memory, errors():
        bar = terminal_bar("Indexing")
        if bar is not None:
            with bar() as progress:
                report = memory.reindex(progress)
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
    from wolfmem.llm.embeddings import EmbeddingsUnavailable

    assert memory.hybrid is not None
    try:
        bar = terminal_bar("Embedding")
        if bar is not None:
            with bar() as progress:
                result = memory.hybrid.embed_all(progress)
        else:
            result = memory.hybrid.embed_all()
    except EmbeddingsUnavailable as exc:
        return f"Embeddings not updated ({exc}); search stays lexical for unembedded facts until the daemon catches up."
    return f"Embedded {result.embedded} new facts; vectors of the others were reused."


def status(vault: VaultOption = None, as_json: JsonOption = False) -> None:
    """Vault, daemon, index health, jobs and LLM."""
    from wolfmem.ops.status import collect, render

    with open_memory(vault) as memory, errors():
        data = collect(memory)
    if as_json:
        print_json(data)
    else:
        typer.echo(render(data))


def show_config(vault: VaultOption = None) -> None:
    """Print the resolved settings as TOML for the config file, each with its source and help."""
    from wolfmem.cli.config_toml import render
    from wolfmem.config import default_config_file, resolve

    with errors():
        resolved = resolve({"vault": str(vault) if vault is not None else None})
    typer.echo(render(resolved, default_config_file()), nl=False)


def doctor(vault: VaultOption = None, as_json: JsonOption = False) -> None:
    """Check the whole install: vault, state, index, watcher, daemon, lease, LLM. Exit 1 on any failure."""
    from wolfmem.ops.doctor import run_checks

    with errors():
        report = run_checks(config_for(vault))
    if as_json:
        print_json(report.to_dict())
    else:
        typer.echo(report.text)
    if not report.ok:
        raise typer.Exit(1)
