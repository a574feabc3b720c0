"""Commands that change memory: save, log, update, forget, restore, history, diff."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer

from wolfmem.cli.common import (
    JsonOption,
    VaultOption,
    errors,
    fail,
    open_memory,
    print_json,
    stdin_text,
)
from wolfmem.cli.names import full_ref

if TYPE_CHECKING:
    from wolfmem.memory.corrections import Correction
    from wolfmem.memory.recovery import KeptText


def save(
    words: Annotated[list[str], typer.Argument(metavar="FACT", show_default=False,
                                               help="One self-contained sentence; the rest of the line, unquoted: "
                                                    "`wolfmem save Sarah Chen is my manager`.")],
    type: Annotated[str, typer.Option(
        "--type", "-t", help="people, projects, preferences, technical or decisions.")] = "technical",
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
        typer.echo("\n".join([receipt.message, *(f"Notice: {notice}." for notice in receipt.notices)]))


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
        lines = [line for line in stdin_text().splitlines() if line.strip()]
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
    expected: Annotated[str | None, typer.Option(
        help="The fact's current text, if the ref did not come from search.")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Replace one fact with a corrected one; the old line is archived."""
    with open_memory(vault) as memory, errors():
        correction = memory.update(full_ref(ref), " ".join(words), expected)
    print_json(correction.to_dict()) if as_json else _echo_correction(correction)


def forget(
    ref: Annotated[str, typer.Argument(help="The fact's ref from search, e.g. file:knowledge/people.md#L12.")],
    reason: Annotated[str, typer.Option("--reason", help="Why it should be forgotten, e.g. 'it was wrong'.")],
    expected: Annotated[str | None, typer.Option(
        help="The fact's current text, if the ref did not come from search.")] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove one fact from its knowledge file; it is archived and can be restored."""
    with open_memory(vault) as memory, errors():
        correction = memory.forget(full_ref(ref), reason, expected)
    print_json(correction.to_dict()) if as_json else _echo_correction(correction)


def restore(
    file: Annotated[str | None, typer.Argument(help="A knowledge file, e.g. people or knowledge/people.md.")] = None,
    to: Annotated[str | None, typer.Option("--to", help="A version id from `wolfmem history FILE`, or a date.")] = None,
    lines: Annotated[
        str | None,
        typer.Option("--lines", help="With --to: bring back only these lines of the version, e.g. 12-14 "
                                     "(numbered as `history FILE --show ID` prints them)."),
    ] = None,
    missing: Annotated[
        bool, typer.Option("--missing", help="With --to: bring back every fact of the version the file lacks now.")
    ] = False,
    fact: Annotated[
        str | None, typer.Option("--fact", help="An archived fact's ref (search --source archive).")
    ] = None,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """Swap FILE's .bak back in, restore a kept version (--to), bring back some of its lines (--to with
    --lines or --missing), or put an archived fact back (--fact)."""
    from wolfmem.curation.backups import restore_backup, restore_version

    if (fact is None) == (file is None):
        fail("name a FILE (with or without --to), or pass --fact REF alone", 2)
    if (lines is not None or missing) and to is None:
        fail("--lines and --missing bring back lines of a kept version: add --to ID (from `wolfmem history FILE`)",
             2)
    if lines is not None and missing:
        fail("pass --lines N-M or --missing, not both", 2)
    span = _line_span(lines) if lines is not None else None
    with open_memory(vault) as memory, errors():
        if fact is not None:
            correction = memory.restore_fact(fact)
            print_json(correction.to_dict()) if as_json else _echo_correction(correction)
            return
        assert file is not None
        if to is not None and (span is not None or missing):
            back = memory.restore_lines(file, to, lines=span, missing=missing)
            print_json(back.to_dict()) if as_json else typer.echo(back.message)
            return
        typer.echo(restore_version(memory.services, file, to) if to else restore_backup(memory.services, file))


def _line_span(lines: str) -> tuple[int, int]:
    """'12-14' or '12' as (first, last)."""
    first, _, last = lines.strip().partition("-")
    if not first.strip().isdigit() or not (last.strip() or first).isdigit():
        fail(f"--lines takes a line number or a range like 12-14, not {lines!r}", 2)
    return int(first), int(last.strip() or first)


def history(
    file: Annotated[str, typer.Argument(help="A knowledge file, e.g. people or knowledge/people.md.")],
    show: Annotated[
        str | None, typer.Option("--show", help="Print this version's text, numbered (an id from the list, or a date).")
    ] = None,
    plain: Annotated[
        bool, typer.Option("--plain", help="With --show: the text as it was, without line numbers.")
    ] = False,
    vault: VaultOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the kept versions of a knowledge file, newest first, or print one (--show ID).

    Restore one with `restore FILE --to ID`, or some of its lines with `restore FILE --to ID --lines 12-14`.
    """
    from wolfmem.curation.backups import versions

    if plain and show is None:
        fail("--plain goes with --show ID", 2)
    with open_memory(vault) as memory, errors():
        if show is not None:
            _show(memory.recovery.version(file, show), plain, as_json)
            return
        listed = versions(memory.services, file)
    if as_json:
        print_json([vars(version) for version in listed])
        return
    if not listed:
        typer.echo("No versions kept yet; one is recorded each time wolfmem writes the file.")
    for version in listed:
        typer.echo(f"{version.id:>5}  {version.at}  {version.cause:<10} {version.size:>8} bytes")


def _show(kept: KeptText, plain: bool, as_json: bool) -> None:
    if as_json:
        print_json({**vars(kept.version), "text": kept.text})
    else:
        typer.echo(kept.text if plain else kept.numbered(), nl=False)


def diff(
    file: Annotated[str, typer.Argument(help="A knowledge file, e.g. knowledge/people.md.")],
    to: Annotated[
        str | None, typer.Option("--to", help="Compare a kept version (an id from `history FILE`, or a date) instead.")
    ] = None,
    vault: VaultOption = None,
) -> None:
    """Show what changed from the file's .bak (or from a kept version, --to ID) to its current content."""
    from wolfmem.curation.backups import diff_backup

    with open_memory(vault) as memory, errors():
        typer.echo(memory.recovery.diff(file, to) if to is not None else diff_backup(memory.services, file), nl=False)


def _echo_correction(correction: Correction) -> None:
    typer.echo("\n".join([correction.message, *(f"Notice: {notice}." for notice in correction.notices)]))
