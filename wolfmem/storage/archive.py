"""The archive: every fact that leaves a knowledge file, kept append-only in the vault and searchable on request.

Curation, the audit, `memory_update` and `memory_forget` never destroy a fact: before a line leaves a
knowledge file it is appended here, one line per fact, to `consolidated/archive-YYYY-MM.md`:

    - Tom lives in Berlin. <!-- wolfmem-archive {"file": "knowledge/people.md", "section": "Tom", ...} -->

The visible text is the fact itself (what search matches); the comment carries where it lived, when,
why, and the line it was merged into or superseded by, so `restore --fact REF` can put it back.
Restores and forgets are recorded the same way, and so is a save of a fact that had left its file (as
restored, "saved again"), so the latest record of a fact says whether it is currently forgotten (curation
must not bring a forgotten fact back from old episodes) or gone on purpose (a conflict copy's merge keeps
it out). "Latest" is by the instant each record was archived (`at`, UTC), not by where it sits: a sync
engine's conflict copy of an archive file is merged by appending the other machine's records, which may be
older than the file's last ones, and two machines' clocks may put the same instant in different months.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, date, datetime

from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.errors import NotFound, UsageError, WolfmemError
from wolfmem.storage.vault import is_archive
from wolfmem.storage.writer import Cause, Edit, VaultWriter

ARCHIVE_DIR = "consolidated"
ARCHIVE_PREFIX = "archive-"
HAND = "hand"  # `by` of a record a person's edit made: removed, or typed again, by hand
_RECORD = re.compile(r"^- (?P<fact>.*?) <!-- wolfmem-archive (?P<data>\{.*\}) -->\s*$")


class Reason(enum.StrEnum):
    """Why a fact left its file (or came back)."""

    REMOVED = "removed"
    MERGED = "merged"
    SUPERSEDED = "superseded"
    MOVED = "moved"
    FORGOTTEN = "forgotten"
    RESTORED = "restored"


@dataclass(frozen=True)
class ArchivedFact:
    """One archive record: the fact, where it lived, when and why it left, and what replaced it."""

    fact: str
    file: str
    section: str
    day: str
    reason: Reason
    why: str = ""
    into: str = ""  # the line it was merged into, superseded by, or moved to
    by: str = ""  # who took it out: curation, audit, update, forget, restore
    at: str = ""  # when it was archived (UTC, ISO); a record from before wolfmem kept it has only its day

    @property
    def key(self) -> str:
        """The fact's exact-duplicate key."""
        return fact_key(self.fact)


def archive_rel(day: date) -> str:
    """The archive file of a day's month."""
    return f"{ARCHIVE_DIR}/{ARCHIVE_PREFIX}{day:%Y-%m}.md"


def render(record: ArchivedFact) -> str:
    """The archive line of one record (the fact stays readable; the rest is a JSON comment)."""
    data = {key: value for key, value in asdict(record).items() if key != "fact" and value}
    # An HTML comment may not contain "--"; JSON allows the escape inside strings, where it can only occur.
    payload = json.dumps(data, ensure_ascii=False, sort_keys=True).replace("--", "-\\u002d")
    fact = " ".join(record.fact.split())
    return f"- {fact} <!-- wolfmem-archive {payload} -->"


def parse(line: str) -> ArchivedFact | None:
    """The record on an archive line, or None when the line is not one."""
    match = _RECORD.match(line.rstrip("\r\n"))
    if match is None:
        return None
    try:
        data = json.loads(match.group("data"))
        return ArchivedFact(
            fact=match.group("fact"),
            file=str(data["file"]),
            section=str(data.get("section", "")),
            day=str(data.get("day", "")),
            reason=Reason(data["reason"]),
            why=str(data.get("why", "")),
            into=str(data.get("into", "")),
            by=str(data.get("by", "")),
            at=str(data.get("at", "")),
        )
    except (ValueError, KeyError, TypeError):
        return None


def title(rel: str) -> str:
    """The first line of a new archive file."""
    month = rel.rsplit("/", 1)[-1].removeprefix(ARCHIVE_PREFIX).removesuffix(".md")
    return (f"# Archive {month}\n\n"
            "Facts that left the knowledge files, one per line. `wolfmem restore --fact REF` puts one back.\n")


def block(existing: str, records: Iterable[ArchivedFact], rel: str) -> str:
    """The text to append to an archive file for these records (with its title when the file is new)."""
    head = "" if existing.strip() else title(rel) + "\n"
    if existing and not existing.endswith("\n"):
        head = "\n"
    return head + "".join(render(record) + "\n" for record in records)


def forgotten(records: Iterable[ArchivedFact]) -> set[str]:
    """Keys of facts whose latest record says they were forgotten (and not restored since)."""
    latest: dict[str, Reason] = {}
    for record in records:
        if record.reason in (Reason.FORGOTTEN, Reason.RESTORED):
            latest[record.key] = record.reason
    return {key for key, reason in latest.items() if reason is Reason.FORGOTTEN}


class Archive:
    """Appends records through the writer and reads them back, for one vault."""

    def __init__(self, writer: VaultWriter, clock: Callable[[], datetime]) -> None:
        self.writer = writer
        self.clock = clock
        # Each file's facts by key → their latest record, as of the archive files' names and sizes
        # (append-only: a size that did not change is a file that did not).
        # With them, what `left` answered for (file, by_hand) from those records: a save and a typed line each ask.
        self._latest: tuple[tuple[tuple[str, int], ...], dict[str, dict[str, ArchivedFact]],
                            dict[tuple[str, bool], frozenset[str]]] = ((), {}, {})

    def add(self, records: list[ArchivedFact]) -> list[str]:
        """Append records to this month's archive file; return the ref of each new line."""
        if not records:
            return []
        now = self.clock()
        rel = archive_rel(now.date())
        stamp = now.astimezone(UTC).isoformat(timespec="microseconds")
        records = [record if record.at else replace(record, at=stamp) for record in records]

        def append(text: str) -> Edit[int]:
            addition = block(text, records, rel)
            first = len(markdown.split_lines(text + addition)) - len(records) + 1
            return Edit(text + addition, first)

        written = self.writer.edit(rel, append, cause=Cause.ARCHIVE)
        assert written.detail is not None
        return [f"file:{rel}#L{written.detail + offset}" for offset in range(len(records))]

    def left(self, rel: str, *, by_hand: bool = True) -> frozenset[str]:
        """Keys of the facts whose latest record for file `rel` says they left it (not restored or saved since).

        by_hand=False: only those wolfmem took out (forgotten, updated, merged), not those a person removed.
        """
        try:
            names = self.writer.vault.names(ARCHIVE_DIR, f"{ARCHIVE_PREFIX}*.md")
            seen = tuple((name, self.writer.vault.size(name)) for name in names if is_archive(name))
        except (OSError, WolfmemError):
            seen = ()
        cached, latest, answers = self._latest
        if seen != cached or not seen:
            latest, answers = {}, {}
            for record in self.records():
                latest.setdefault(record.file, {})[record.key] = record
            self._latest = (seen, latest, answers)
        if (rel, by_hand) not in answers:
            answers[(rel, by_hand)] = frozenset(
                key for key, record in latest.get(rel, {}).items()
                if record.reason is not Reason.RESTORED and (by_hand or record.by != HAND))
        return answers[(rel, by_hand)]

    def records(self) -> list[ArchivedFact]:
        """Every record in every archive file, oldest first (by `at`; one with only its day from that day's start)."""
        found: list[ArchivedFact] = []
        try:
            names = self.writer.vault.names(ARCHIVE_DIR, f"{ARCHIVE_PREFIX}*.md")
        except OSError:
            names = []
        for rel in names:
            if not is_archive(rel):
                continue
            try:
                text = self.writer.vault.read_text(rel)
            except (OSError, WolfmemError):
                continue
            found += [record for line in text.splitlines() if (record := parse(line)) is not None]
        # Stable: records of one instant (or undated ones of one day) keep the order they were appended in.
        return sorted(found, key=lambda record: record.at or record.day)

    def record_at(self, rel: str, line: int, key: str | None = None) -> tuple[int, ArchivedFact]:
        """The record on one line of an archive file, with its line; NotFound saying what is there instead.

        key: the fact this machine handed out under that ref. A merged conflict copy appends the other
        machine's records, so a record written on one side during the conflict can move down its file:
        the line then holds another fact, and the record is the first one of `key` below it.
        """
        if not is_archive(rel):
            raise UsageError(f"{rel} is not an archive file; pass a ref like file:consolidated/archive-2026-11.md#L12")
        lines = self.writer.vault.read_text(rel).splitlines()
        record = parse(lines[line - 1]) if 1 <= line <= len(lines) else None
        if key is not None and record is not None and record.key != key:
            moved = next((n for n in range(line + 1, len(lines) + 1)
                          if (found := parse(lines[n - 1])) is not None and found.key == key), None)
            if moved is None:
                raise NotFound(f"line {line} of {rel} holds another fact than the one handed out under that ref "
                               "(another machine's records were merged in); search with sources=['archive'] again")
            line, record = moved, parse(lines[moved - 1])
        if record is None:
            raise NotFound(f"line {line} of {rel} is not an archived fact; search with sources=['archive'] for its ref")
        return line, record
