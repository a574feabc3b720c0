"""Commands that change memory: save, log, update, forget, restore, history, diff."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Annotated

import typer

from wolfmem.cli.common import (
    JsonOption,
    VaultOption,
    errors,
    fail,
    open_memory,
    print_json,
)
from wolfmem.cli.names import full_ref


def save(
    words: Annotated[list[str], typer.Argument(metavar="FACT", show_default=False,
                                               help="One self-contained sentence; the rest of the line, unquoted: "
                                                    "`wolfmem save Sarah Chen is my manager`.")],
    type: Annotated[str, typer.Option("--type", "-t", help="people, projects, preferences, technical or decisions.")] = "technical",
    topic: Annotated[str | None, typer.Option(help="The ## section, e.g. 'Sarah (Manager)'.")] = None,
    request_id: Annotated[str | None, typer.Option(help="Makes a retry a no-op.")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Save one durable fact; a fact already on file is a no-op."""
    fact = " ".join(words)
    with open_memory(vault) as memory, errors():
        receipt = memory.save(fact, type=type, topic=topic, request_id=request_id)
    if as_json:
        print_json(receipt.to_dict())
    else:
        typer.echo(receipt.message)


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
            fail(f"--when must be a date and time like 2026-11-20T14:05, not {when!r}", 2)
    with open_memory(vault) as memory, errors():
        hit = memory.log_episode(bullets, headline=headline, when=moment)
    if as_json:
        print_json(hit.to_dict())
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
        fail("say what happened: `wolfmem log Deployed to staging`; several bullets take "
              "`--bullet A --bullet B`, or `-` to read one bullet per line from stdin", 2)
    return lines


def update(
    ref: Annotated[str, typer.Argument(help="The fact's ref from search, e.g. file:knowledge/people.md#L12.")],
    words: Annotated[list[str], typer.Argument(metavar="FACT", show_default=False,
                                               help="The corrected fact: one self-contained sentence, the rest "
                                                    "of the line.")],
    expected: Annotated[str | None, typer.Option(help="The fact's current text, if the ref did not come from search.")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Replace one fact with a corrected one; the old line is archived."""
    with open_memory(vault) as memory, errors():
        correction = memory.update(full_ref(ref), " ".join(words), expected)
    print_json(correction.to_dict()) if as_json else typer.echo(correction.message)


def forget(
    ref: Annotated[str, typer.Argument(help="The fact's ref from search, e.g. file:knowledge/people.md#L12.")],
    reason: Annotated[str, typer.Option("--reason", help="Why it should be forgotten, e.g. 'it was wrong'.")],
    expected: Annotated[str | None, typer.Option(help="The fact's current text, if the ref did not come from search.")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove one fact from its knowledge file; it is archived and can be restored."""
    with open_memory(vault) as memory, errors():
        correction = memory.forget(full_ref(ref), reason, expected)
    print_json(correction.to_dict()) if as_json else typer.echo(correction.message)


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
        fail("name a FILE (with or without --to), or pass --fact REF alone", 2)
    with open_memory(vault) as memory, errors():
        if fact is not None:
            correction = memory.restore_fact(fact)
            print_json(correction.to_dict()) if as_json else typer.echo(correction.message)
            return
        assert file is not None
        typer.echo(restore_version(memory, file, to) if to else restore_backup(memory, file))


def history(
    file: Annotated[str, typer.Argument(help="A knowledge file, e.g. people or knowledge/people.md.")],
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the kept versions of a knowledge file, newest first (restore one with `restore FILE --to ID`)."""
    from wolfmem.curation.backups import versions

    with open_memory(vault) as memory, errors():
        kept = versions(memory, file)
    if as_json:
        print_json([vars(version) for version in kept])
        return
    if not kept:
        typer.echo("No versions kept yet; one is recorded each time wolfmem writes the file.")
    for version in kept:
        typer.echo(f"{version.id:>5}  {version.at}  {version.cause:<10} {version.size:>8} bytes")


def diff(
    file: Annotated[str, typer.Argument(help="A knowledge file, e.g. knowledge/people.md.")],
    vault: VaultOption = None,
) -> None:
    """Show the file's .bak against its current content."""
    from wolfmem.curation.backups import diff_backup

    with open_memory(vault) as memory, errors():
        typer.echo(diff_backup(memory, file), nl=False)
