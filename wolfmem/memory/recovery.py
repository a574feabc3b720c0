"""Going back to a kept version of a knowledge file in part: show it, diff against it, bring back lines.

`wolfmem restore FILE --to ID` puts a whole version back, which also takes away every line written
since. When only some lines were lost (an editor's stale buffer wrote over a save, a line deleted by
mistake), these bring back just those lines: the ones a person names by their numbers in the version
(`--lines 12-14`, as `history FILE --show ID` numbers them), or every fact of the version that is
not in the file now (`--missing`). Each goes back at the end of its `##` section (made again if it is
gone), as it was written; a fact already in the file (anywhere, in any wording that is the same
fact) is never added twice, and every line the file holds now stays. One write, through the writer,
with the cause "restore".
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass
from typing import Any

from wolfmem.core import edits, markdown
from wolfmem.core.facts import fact_key
from wolfmem.errors import NotFound, UsageError
from wolfmem.memory.refs import make_ref
from wolfmem.memory.saving import UNFILED
from wolfmem.storage.history import History, Version
from wolfmem.storage.vault import CURATED, Vault
from wolfmem.storage.writer import Cause, Edit, VaultWriter


def curated_rel(name: str) -> str:
    """A vault-relative path from what a person types: 'people', 'people.md', 'knowledge/people.md' or a
    search hit's 'file:knowledge/people.md'."""
    bare = name.strip().removeprefix("file:").removeprefix("./").removesuffix(".bak")
    stem = bare.removesuffix(".md")
    return f"knowledge/{stem}.md" if "/" not in bare and stem in CURATED else bare


def decoded(data: bytes, what: str) -> str:
    """Bytes as UTF-8 text, or a UsageError saying the file must be handled by hand."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{what} is not UTF-8 text; compare or restore it by hand") from None


@dataclass(frozen=True)
class KeptText:
    """One kept version of a file and its text."""

    rel: str
    version: Version
    text: str

    def numbered(self) -> str:
        """The text with each line's number in front, as `--lines` counts them."""
        lines = markdown.split_lines(self.text)
        width = len(str(len(lines)))
        return "".join(f"{number:>{width}}  {line.rstrip(chr(13) + chr(10))}\n" for number, line in enumerate(lines, 1))


@dataclass(frozen=True)
class PutBackLine:
    """A line brought back: its text as written, where it is now, and its section."""

    text: str
    line: int
    section: str
    ref: str


@dataclass(frozen=True)
class LinesBack:
    """What bringing back lines from a version did."""

    path: str
    version: int
    restored: list[PutBackLine]
    already_there: int  # facts asked for that the file still holds: left as they are
    not_facts: int  # lines asked for that hold no fact (blank, a heading, a code block, the title)
    message: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return asdict(self)


class Recovery:
    """Partial recovery from the kept versions of one vault's knowledge files."""

    def __init__(self, vault: Vault, history: History, writer: VaultWriter) -> None:
        self.vault = vault
        self.history = history
        self.writer = writer

    def version(self, name: str, wanted: str) -> KeptText:
        """The version a person names (an id from `history FILE`, or a date), with its text."""
        rel = curated_rel(name)
        self.vault.resolve(rel)
        try:
            version = self.history.find(rel, wanted)
        except ValueError:
            raise UsageError(
                f"a version is an id from `wolfmem history {name}` or a date like 2026-11-20, not {wanted!r}"
            ) from None
        data = self.history.data(version.id) if version is not None else None
        if version is None or data is None:
            raise NotFound(f"no kept version of {rel} matches {wanted!r}; `wolfmem history {name}` lists them")
        return KeptText(rel, version, decoded(data, f"version {version.id} of {rel}"))

    def diff(self, name: str, wanted: str) -> str:
        """A unified diff from a kept version to the file as it is now; "" when they are the same."""
        kept = self.version(name, wanted)
        now = decoded(self.vault.read_or_empty(kept.rel), kept.rel)
        label = f"{kept.rel} (version {kept.version.id}, {kept.version.at}, {kept.version.cause})"
        return "".join(
            difflib.unified_diff(
                kept.text.splitlines(keepends=True), now.splitlines(keepends=True), label, f"{kept.rel} (now)"
            )
        )

    def bring_back(
        self, name: str, wanted: str, *, lines: tuple[int, int] | None = None, missing: bool = False
    ) -> LinesBack:
        """Put lines of a kept version back into the file: a range of its lines, or every fact it lacks now."""
        if (lines is None) == (not missing):
            raise UsageError("name the lines to bring back: --lines 12-14 (as `history FILE --show ID` numbers "
                             "them), or --missing for every fact of that version the file lacks")
        kept = self.version(name, wanted)
        old = markdown.parse(kept.text)
        chosen = list(old.facts)
        not_facts = 0
        if lines is not None:
            chosen, not_facts = _in_range(kept, old, lines)
        raw = markdown.split_lines(kept.text)
        title = kept.rel.rsplit("/", 1)[-1].removesuffix(".md").title()

        def put_back(text: str) -> Edit[tuple[list[str], int]]:
            present = {fact_key(fact.text) for fact in markdown.parse(text).facts}
            added: list[str] = []
            for fact in chosen:
                key = fact_key(fact.text)
                if key in present:
                    continue
                text = _added(text, fact, raw[fact.line - 1], title)
                present.add(key)
                added.append(key)
            return Edit(text, (added, len(chosen) - len(added)))

        written = self.writer.edit(kept.rel, put_back, cause=Cause.RESTORE, composed=False)
        added, already = written.detail or ([], len(chosen))
        now = markdown.parse(written.data.decode("utf-8"))
        where = {fact_key(fact.text): fact for fact in reversed(now.facts)}
        restored = [
            PutBackLine(where[key].text, where[key].line, where[key].section, make_ref(kept.rel, where[key].line))
            for key in added if key in where
        ]
        return LinesBack(kept.rel, kept.version.id, restored, already, not_facts,
                         _message(kept, restored, already, not_facts))


def _in_range(kept: KeptText, old: markdown.ParsedFile, lines: tuple[int, int]) -> tuple[list[markdown.Fact], int]:
    """The facts on lines first..last of a version, and how many of its non-blank lines there hold none."""
    first, last = lines
    count = len(markdown.split_lines(kept.text))
    if not 1 <= first <= last <= count:
        asked = f"{first}-{last}" if last != first else str(first)
        raise UsageError(
            f"version {kept.version.id} of {kept.rel} has lines 1-{count}, so --lines {asked} is not among "
            f"them; `wolfmem history {kept.rel} --show {kept.version.id}` numbers them"
        )
    facts = [fact for fact in old.facts if first <= fact.line <= last]
    text_lines = markdown.split_lines(kept.text)[first - 1: last]
    worded = sum(1 for line in text_lines if line.strip())
    return facts, worded - len({fact.line for fact in facts})


def _added(text: str, fact: markdown.Fact, raw: str, title: str) -> str:
    """text with the fact added at the end of its section, as it was written if that reads back as the fact."""
    heading = fact.section or UNFILED
    current_title = markdown.parse(text).title or title
    try:
        # Its own marker and task box kept, its indent not (it may no longer sit under a parent item).
        return edits.add_fact(text, fact.text, heading, current_title, written=raw.strip())[0]
    except ValueError:
        try:
            return edits.add_fact(text, fact.text, heading, current_title)[0]
        except ValueError as exc:
            raise UsageError(f"{exc}; copy the line back by hand from `wolfmem history --show`") from None


def _message(kept: KeptText, restored: list[PutBackLine], already: int, not_facts: int) -> str:
    """What happened, in a sentence a person reads once."""
    version = f"version {kept.version.id} ({kept.version.at}, {kept.version.cause})"
    if restored:
        places = ", ".join(f"L{line.line} (## {line.section})" for line in restored)
        said = f"put back {len(restored)} line(s) from {version} into {kept.rel}: {places}"
    else:
        said = f"nothing to put back into {kept.rel} from {version}"
    notes = []
    if already:
        notes.append(f"{already} already in the file, left as they are")
    if not_facts:
        notes.append(f"{not_facts} line(s) in the range hold no fact (a heading, the title, code) and were skipped")
    return said + ("; " + "; ".join(notes) if notes else "") + "."
