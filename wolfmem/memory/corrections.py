"""Correcting memory: memory_update and memory_forget one fact by ref, and putting an archived fact back.

Each acts on exactly one line, through the writer (vault lock, compare-and-exchange against editors,
history), and nothing is destroyed: the line that leaves goes to the archive first, with its reason.
A ref acts only on the line the caller read: the text at the ref must be the text a search, a get or a
save receipt handed out under that ref (or the `expected` text the caller passes). A line that moved
or changed since is refused with "search again", so the wrong line is never touched.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from wolfmem import limits
from wolfmem.core import edits, markdown
from wolfmem.core.credentials import find_secret
from wolfmem.core.facts import clean_fact, fact_key
from wolfmem.errors import InvalidFact, UsageError
from wolfmem.memory.refs import make_ref, split_ref
from wolfmem.memory.saving import UNFILED
from wolfmem.storage.archive import Archive, ArchivedFact, Reason
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import CURATED_PATHS, Vault, template_text
from wolfmem.storage.writer import Cause, Edit, VaultWriter

MAX_REASON_CHARS = limits.MAX_REASON_CHARS
_LINE = re.compile(r"^L([0-9]+)$", re.IGNORECASE)


class Outcome(enum.StrEnum):
    """What a correction did."""

    UPDATED = "updated"
    DUPLICATE = "duplicate"  # the new fact was on file already: the old line left, nothing written twice
    FORGOTTEN = "forgotten"
    RESTORED = "restored"
    ALREADY_ON_FILE = "already-on-file"


@dataclass(frozen=True)
class Correction:
    """The receipt of an update, a forget or a restore: what changed, where, and where the old line went."""

    status: Outcome
    ref: str  # the line that holds the fact now ('' after a forget)
    path: str
    message: str
    old: str = ""
    new: str = ""
    archived: str = ""  # ref of the archive record of the line that left
    duplicate_of: str = ""
    # What wolfmem did to the file since an agent last touched it (lines put back after an editor).
    notices: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form, without empty optional fields."""
        required = {"status", "ref", "path", "message"}
        return {key: value for key, value in asdict(self).items() if key in required or value not in ("", [])}


class Corrections:
    """Update, forget and restore for one vault."""

    def __init__(
        self, writer: VaultWriter, archive: Archive, state: StateStore, clock: Callable[[], datetime]
    ) -> None:
        self.writer = writer
        self.archive = archive
        self.state = state
        self.clock = clock

    def update(self, ref: str, fact: str, expected: str | None = None) -> Correction:
        """Replace the fact at a line ref of a curated file with a new one-sentence fact."""
        rel, line = _line_ref(self.writer.vault, ref)
        if rel not in CURATED_PATHS:
            raise UsageError(f"memory_update changes the five curated files only; {rel} is not one — edit it by hand")
        if not isinstance(fact, str):
            raise InvalidFact(f"fact must be text, not {type(fact).__name__}")
        sentence = clean_fact(fact)
        new_key = fact_key(sentence)
        wanted = self._wanted_key(rel, line, expected)
        found: dict[str, Any] = {}

        def replace(text: str) -> Edit[None]:
            parsed = markdown.parse(text)
            old = _checked_fact(parsed, rel, line, wanted)
            found["old"] = old
            twin = next((f for f in parsed.facts if f.line != line and fact_key(f.text) == new_key), None)
            found["twin"] = twin
            if fact_key(old.text) == new_key:
                raise _Unchanged(old.text)
            if twin is not None:
                return Edit(edits.remove_fact(text, line))
            return Edit(edits.replace_fact(text, line, sentence))

        def archive(_written: Any) -> None:
            old, twin = found["old"], found["twin"]
            into = twin.text if twin is not None else sentence
            found["archived"] = self._archive(rel, old, Reason.SUPERSEDED, "corrected by memory_update", into, "update")

        try:
            self.writer.edit(rel, _guarded(replace), cause=Cause.UPDATE, on_commit=archive)
        except _Unchanged as same:
            return Correction(Outcome.DUPLICATE, make_ref(rel, line), rel,
                              f"{make_ref(rel, line)} already says that; nothing was written.", same.text, same.text,
                              duplicate_of=make_ref(rel, line))
        old, twin = found["old"], found["twin"]
        if twin is not None:
            twin_line = twin.line - (1 if twin.line > line else 0)
            where = make_ref(rel, twin_line)
            self._issue(rel, twin_line, twin.text)
            return Correction(Outcome.DUPLICATE, where, rel,
                              f"The new fact is already on file at {where}; the old line was archived "
                              f"({found['archived']}) and nothing was written twice.",
                              old.text, twin.text, found["archived"], where)
        self._issue(rel, line, sentence)
        return Correction(Outcome.UPDATED, make_ref(rel, line), rel,
                          f"Updated {make_ref(rel, line)}; the old line is archived at {found['archived']}.",
                          old.text, sentence, found["archived"])

    def forget(self, ref: str, reason: str, expected: str | None = None) -> Correction:
        """Remove one fact line from a knowledge file, archiving it with the reason."""
        rel, line = _line_ref(self.writer.vault, ref)
        if rel.startswith("episodes/"):
            raise UsageError(
                "episodes are an append-only record of what happened and cannot be forgotten line by line; "
                "forget the fact in knowledge/ instead, or edit the episode file by hand"
            )
        if not rel.startswith("knowledge/"):
            raise UsageError(f"memory_forget removes facts from knowledge/ files only; {rel} is not one")
        why = _reason(reason)
        wanted = self._wanted_key(rel, line, expected)
        found: dict[str, Any] = {}

        def remove(text: str) -> Edit[None]:
            found["old"] = _checked_fact(markdown.parse(text), rel, line, wanted)
            return Edit(edits.remove_fact(text, line))

        def archive(_written: Any) -> None:
            found["archived"] = self._archive(rel, found["old"], Reason.FORGOTTEN, why, "", "forget")

        self.writer.edit(rel, _guarded(remove), cause=Cause.FORGET, on_commit=archive)
        return Correction(Outcome.FORGOTTEN, "", rel,
                          f"Forgot {make_ref(rel, line)}; it is archived at {found['archived']} "
                          "(`wolfmem restore --fact` puts it back).",
                          found["old"].text, "", found["archived"])

    def restore(self, ref: str) -> Correction:
        """Put an archived fact back into its file and section (a no-op if it is on file already)."""
        archive_rel, line = _line_ref(self.writer.vault, ref)
        line, record = self.archive.record_at(archive_rel, line, self.state.issued_key(archive_rel, line))
        rel = record.file
        if not rel.startswith("knowledge/") or not rel.endswith(".md"):
            raise UsageError(f"the archived fact came from {rel!r}, which is not a knowledge file")
        name = rel.rsplit("/", 1)[-1].removesuffix(".md")
        key = fact_key(record.fact)
        placed: dict[str, int] = {}

        def put_back(text: str) -> Edit[None] | None:
            base = text if text.strip() else (template_text(name) if rel in CURATED_PATHS else f"# {name.title()}\n")
            parsed = markdown.parse(base)
            present = next((f for f in parsed.facts if fact_key(f.text) == key), None)
            if present is not None:
                placed["line"], placed["present"] = present.line, 1
                return None
            heading = record.section or UNFILED
            existing = markdown.find_section(parsed, heading)
            new_text, placed["line"] = edits.add_fact(
                base, record.fact, existing.heading if existing else heading, parsed.title or name.title()
            )
            return Edit(new_text)

        def note(_written: Any) -> None:
            self._archive(rel, markdown.Fact(record.fact, placed["line"], record.section), Reason.RESTORED,
                          f"restored from {make_ref(archive_rel, line)}", "", "restore")

        written = self.writer.edit(rel, put_back, cause=Cause.RESTORE, on_commit=note)
        where = make_ref(rel, placed["line"])
        self._issue(rel, placed["line"], record.fact)
        if not written.changed:
            return Correction(Outcome.ALREADY_ON_FILE, where, rel, f"Already on file at {where}; nothing was written.",
                              record.fact, record.fact)
        return Correction(Outcome.RESTORED, where, rel, f"Restored to {where}.", "", record.fact)

    # -- helpers ---------------------------------------------------------------------------------
    def _wanted_key(self, rel: str, line: int, expected: str | None) -> str:
        if expected is not None:
            if not isinstance(expected, str) or not expected.strip():
                raise UsageError("expected must be the fact's text as you read it")
            return fact_key(re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", expected))
        issued = self.state.issued_key(rel, line)
        if issued is None:
            raise UsageError(
                f"{make_ref(rel, line)} was not handed out by memory_search, memory_get or a save receipt; "
                "search for the fact first and use the ref it returns"
            )
        return issued

    def _archive(self, rel: str, fact: markdown.Fact, reason: Reason, why: str, into: str, by: str) -> str:
        record = ArchivedFact(fact.text, rel, fact.section, self.clock().date().isoformat(), reason, why, into, by)
        ref = self.archive.add([record])[0]
        self._issue(*_line_ref(self.writer.vault, ref), fact.text)  # a restore by this ref acts on this record
        return ref

    def _issue(self, rel: str, line: int, text: str) -> None:
        self.state.note_issued([(rel, line, fact_key(text))])


class _Unchanged(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _guarded(transform: Callable[[str], Edit[None]]) -> Callable[[str], Edit[None]]:
    """A transform whose refusals of a markdown edit read as usage errors."""

    def run(text: str) -> Edit[None]:
        try:
            return transform(text)
        except ValueError as exc:
            raise UsageError(f"{exc}; edit the file by hand") from None

    return run


def _checked_fact(parsed: markdown.ParsedFile, rel: str, line: int, wanted: str) -> markdown.Fact:
    """The fact at the line, if it is still the one the caller read; FileChanged otherwise."""
    fact = next((f for f in parsed.facts if f.line == line), None)
    if fact is None and any(code.line == line for code in parsed.code):
        raise UsageError(
            f"{make_ref(rel, line)} is a line of a code block, which wolfmem never edits; "
            "change it in the file by hand"
        )
    if fact is None or fact_key(fact.text) != wanted:
        raise UsageError(
            f"{make_ref(rel, line)} no longer holds the fact you read (the file changed since); "
            "search again and use the ref it returns"
        )
    return fact


def _line_ref(vault: Vault, ref: str) -> tuple[str, int]:
    """The vault-relative path (confined and normalised) and line number of a line ref."""
    rel, anchor = split_ref(ref)
    rel = vault.rel(vault.resolve(rel))
    match = _LINE.match(anchor)
    if match is None:
        raise UsageError(f"{ref!r} is not a line ref; pass one fact's ref like 'file:knowledge/people.md#L12'")
    return rel, int(match.group(1))


def _reason(reason: Any) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError("reason is empty — say why the fact should be forgotten, e.g. 'it was wrong'")
    flat = " ".join(reason.split())
    if len(flat) > MAX_REASON_CHARS:
        raise UsageError(f"reason is {len(flat)} characters; keep it under {MAX_REASON_CHARS}")
    if find_secret(flat):
        raise InvalidFact("refused: the reason looks like it holds a secret; say why without it")
    return flat
