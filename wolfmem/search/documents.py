"""A file's index documents: reading one file (confined), deciding what the index needs of it, and its facts.

Pure but for the read it is handed; shared by the syncer and the bulk-indexing workers.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.errors import OutsideVault
from wolfmem.search.schema import FactDoc
from wolfmem.storage import archive
from wolfmem.storage.catalog import ManifestEntry
from wolfmem.storage.vault import content_hash, episode_date, source_of

log = logging.getLogger(__name__)

# A file modified this close to when it was hashed may change again within the same mtime tick
# without its stat changing ("racily clean", as git calls it), so it is re-hashed until it is older.
RACY_WINDOW_NS = 2_000_000_000

# The reason recorded for a file that could not be read. Such a file stays in every plan: a `chmod`
# that makes it readable changes neither its mtime nor its size, and a failed open costs microseconds.
UNREADABLE = "cannot read"


def unreadable(exc: OSError) -> str:
    """The reason recorded for a file the OS refused to read."""
    return f"{UNREADABLE}: {exc.strerror or exc}"


def facts_of(rel: str, text: str, first_seen: Mapping[str, str] | None = None) -> list[FactDoc]:
    """The index documents of one file's text: one per fact or code line.

    A fact's date is its episode's day, or for knowledge the day wolfmem first saw the line.
    """
    parsed = markdown.parse(text)
    source = source_of(rel)
    day = episode_date(rel) or ""
    first_seen = first_seen or {}
    facts: Sequence[markdown.Fact] = parsed.searchable()
    archived: dict[int, str] = {}
    if source == "archive":
        facts, archived = _archived_facts(facts)
    docs: list[FactDoc] = []
    occurrences: dict[str, int] = {}
    for fact in facts:
        digest = text_digest(fact.text)
        occurrences[digest] = occurrences.get(digest, 0) + 1
        key = fact_key(fact.text)
        date = day or archived.get(fact.line) or first_seen.get(key, "")
        docs.append(fact_doc(rel, source, fact, occurrences[digest], date))
    return docs


def fact_doc(rel: str, source: str, fact: markdown.Fact, occurrence: int, date: str) -> FactDoc:
    """The index document of one fact, the `occurrence`-th line of its text in the file (1 for the first)."""
    return FactDoc(
        doc_id=f"{rel}#{text_digest(fact.text)}.{occurrence}",
        path=rel,
        source=source,
        section=fact.section,
        line=fact.line,
        text=fact.text,
        date=date,
        key=fact_key(fact.text),
    )


def _archived_facts(facts: Sequence[markdown.Fact]) -> tuple[list[markdown.Fact], dict[int, str]]:
    """Archive lines as the facts they hold (without their data comment), labelled with where they lived."""
    shown, days = [], {}
    for fact in facts:
        record = archive.parse(f"- {fact.text}")
        if record is None:
            shown.append(fact)
            continue
        where = f"{record.file} § {record.section}" if record.section else record.file
        shown.append(dataclasses.replace(fact, text=record.fact, section=f"{where} ({record.reason})"))
        days[fact.line] = record.day
    return shown, days


@functools.lru_cache(maxsize=16384)
def text_digest(text: str) -> str:
    """A fact's id within its file (remembered like fact_key: a save re-ids only the lines it changed)."""
    return hashlib.sha1(text.encode()).hexdigest()[:12]


# A file whose first 8 kB hold more than this share and number of NULs is binary (UTF-16 text is
# half NUL); a few stray NULs in a text file are their lines' problem, not the whole file's.
BINARY_NUL_SHARE, BINARY_NULS = 0.01, 16
_SHOWN_LINES = 5  # lines a note names before "and N more"


def decode_note(data: bytes, max_bytes: int) -> tuple[str | None, str]:
    """The text to index from a file's bytes, or None and why it cannot be indexed; a note on what was left out."""
    head = data[:8192]
    nuls = head.count(b"\x00")
    if nuls > BINARY_NULS and nuls > len(head) * BINARY_NUL_SHARE:
        return None, "binary content"
    notes = []
    if len(data) > max_bytes:
        # At a line's end (a lone CR ends one too: an LF alone left a CR-only file cut inside a line)...
        cut = max(data.rfind(b"\n", 0, max_bytes), data.rfind(b"\r", 0, max_bytes)) + 1
        if cut <= 1:  # ...else before the character the cap falls in, not inside it ("not UTF-8")
            cut = max_bytes
            while cut > 0 and data[cut] & 0xC0 == 0x80:
                cut -= 1
        data = data[:cut]
        notes.append(f"only the first {len(data):,} bytes are indexed")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, "binary content" if nuls else f"not UTF-8 ({exc.reason} at byte {exc.start})"
    if "\x00" in text:
        text, blanked = _without_nul_lines(text)
        shown = ", ".join(map(str, blanked[:_SHOWN_LINES]))
        more = f" and {len(blanked) - _SHOWN_LINES} more" if len(blanked) > _SHOWN_LINES else ""
        notes.append(f"line{'s' if len(blanked) > 1 else ''} {shown}{more} hold{'' if len(blanked) > 1 else 's'} "
                     "a NUL byte and is not searchable; delete the stray byte in an editor")
    return text, "; ".join(notes)


def _without_nul_lines(text: str) -> tuple[str, list[int]]:
    """`text` with each line holding a NUL emptied; every other line keeps its number, as `markdown` counts."""
    lines = markdown.lines_of(text)  # a lone CR ends a line too: split at "\n" alone, a CR-only file was one line
    blanked = [number for number, line in enumerate(lines, 1) if "\x00" in line]
    for number in blanked:
        line = lines[number - 1]
        lines[number - 1] = line[len(line.rstrip("\r\n")):]
    return "".join(lines), blanked


@dataclass(frozen=True)
class Looked:
    """What reading one file found: its manifest entry (None: gone), its facts when they must be
    (re)indexed, whether it counts as indexed, and why it was skipped or cut short."""

    entry: ManifestEntry | None
    docs: list[FactDoc] | None = None
    indexed: bool = False
    skipped: str = ""


def look(
    read: Callable[[str], tuple[bytes, os.stat_result]],
    rel: str,
    old: ManifestEntry | None,
    max_bytes: int,
    facts: Callable[[str, str], list[FactDoc]],
) -> Looked:
    """Read one file (through the vault's confined `read_file`) and decide what the index needs of it.

    Shared by the syncer and the bulk workers.
    """
    # An entry's stamp is taken before the read: the bytes are then the file's as of that moment or
    # later, which lets a sync another writer overtook tell whether that commit is new enough for it.
    started = time.time_ns()
    try:
        data, stat = read(rel)
    except (FileNotFoundError, OutsideVault):
        return Looked(None)  # gone, or swapped for a link out of the vault since the scan: never indexed
    except OSError as exc:
        why = unreadable(exc)
        if old is not None and old.skipped == why:
            return Looked(old)  # still unreadable, as recorded: nothing to write
        log.warning("skipped %s: cannot read it (%s)", rel, exc)
        mtime_ns, size = (old.mtime_ns, old.size) if old is not None else (0, -1)
        return Looked(ManifestEntry(mtime_ns, size, "", started, why), [], skipped=why)
    revision = content_hash(data)
    now = time.time_ns()
    if old is not None and old.revision == revision:
        still_racy = now - stat.st_mtime_ns < RACY_WINDOW_NS
        if still_racy and (old.mtime_ns, old.size) == (stat.st_mtime_ns, stat.st_size):
            return Looked(old)  # nothing learned yet; keep the manifest untouched
        return Looked(ManifestEntry(stat.st_mtime_ns, stat.st_size, revision, started, old.skipped))
    text, note = decode_note(data, max_bytes)
    if text is None:
        log.warning("skipped %s: %s", rel, note)
        return Looked(ManifestEntry(stat.st_mtime_ns, stat.st_size, revision, started, note), [], skipped=note)
    if note:
        # Named like a skipped file, so `reindex` and status say which file was cut short; said once,
        # not at every sync of a file that keeps growing past the cap.
        log.log(logging.DEBUG if old is not None and old.skipped == note else logging.WARNING, "%s: %s", rel, note)
    entry = ManifestEntry(stat.st_mtime_ns, stat.st_size, revision, started, note)
    return Looked(entry, facts(rel, text), indexed=True, skipped=note)


def dated_facts(rel: str, text: str, seen: Mapping[str, str], today: str) -> tuple[list[FactDoc], set[str]]:
    """facts_of, knowledge lines dated by first sight: (the docs, the keys seen today for the first time)."""
    if source_of(rel) != "knowledge":
        return facts_of(rel, text), set()
    new = {fact_key(fact.text) for fact in markdown.parse(text).searchable()} - set(seen)
    if new:
        seen = {**seen, **dict.fromkeys(new, today)}
    return facts_of(rel, text, seen), new


