"""When an outside writer (an editor, a `git checkout`, a sync tool) drops lines wolfmem wrote, put them back.

A knowledge file or an episode log changed, and not by wolfmem (its hash is not the newest recorded version). If every
line wolfmem wrote that the previous version held is still there, it is an ordinary edit: recorded in
history as a hand edit, nothing more. Otherwise the editor wrote over lines it never saw, or the person
deleted some on purpose, and a three-way merge tells the two apart:

- base: the recorded version the editor started from, the one closest to what it wrote (choose_base);
- ours: the previous version (what the file held before the outside write);
- theirs: what the file holds now.

merge3(base, ours, theirs) re-applies what changed between base and ours (the saves, updates and
curation the editor could not have read) on top of theirs, keeping every line the person wrote. The
result is written through the writer (compare-and-exchange: only over exactly theirs), as a version of
its own cause, "put back". wolfmem's lines the person removed from a version that held them (base) were
removed knowingly: they go to the archive as "removed by hand". What wolfmem took out since base (a forget,
an update's old wording, a curation merge: each archived) stays out where theirs still holds base's copy, so
a write holding such a line is merged even when it drops nothing (reported as "kept out"); a copy the person
typed after it left is theirs, recorded in the archive as back. A line put back once and removed again
is obeyed, never put back twice, when that write is its base exactly (nothing else changed), so a person
can always win. A buffer the person changed that lacked wolfmem's lines is a stale one: its revision is
remembered, and a write started from it (the same buffer again, byte for byte, with more lines or fewer)
gets the lines put back again. Every repair is logged at WARNING, recorded for `wolfmem status`, and
handed once to the next agent call that touches the file.
"""

from __future__ import annotations

import enum
import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime

from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.core.markdown import content_lines
from wolfmem.core.merge import choose_base, merge3
from wolfmem.errors import WolfmemError
from wolfmem.storage.archive import HAND, Archive, ArchivedFact, Reason
from wolfmem.storage.conflicts import SyncConflicts
from wolfmem.storage.history import HAND_EDIT, History, Version, thinned
from wolfmem.storage.locks import TimedOut
from wolfmem.storage.putback import added_span, drop_repeated, is_heading
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import content_hash, source_of
from wolfmem.storage.writer import CAS_SECONDS, Cause, Edit, VaultWriter, Written

log = logging.getLogger(__name__)

# How many recorded versions a base is chosen from: a day of saves at one every few minutes.
BASES = 200
REMOVED_BY_HAND = "removed by hand"


class Kind(enum.StrEnum):
    """What wolfmem did about an outside write."""

    PUT_BACK = "put back"
    KEPT_OUT = "kept out"  # lines wolfmem took out since the editor loaded the file, still in its stale buffer
    REMOVED_BY_HAND = REMOVED_BY_HAND
    MARKERS = "markers resolved"  # git's conflict hunks resolved (storage/conflicts.py records it)


# The repairs that rewrite the file (a removal by hand is only archived).
REWRITES = frozenset({Kind.PUT_BACK, Kind.KEPT_OUT, Kind.MARKERS})


@dataclass(frozen=True)
class Repair:
    """One put-back or removed-by-hand event: which file, which lines, how many, when.

    first and last (1-based) are where the lines put back are now, where the removed ones were in the
    version before the outside write, or where the lines kept out were in the outside write.
    """

    kind: Kind
    path: str
    first: int
    last: int
    count: int
    at: str
    archived: str = ""  # removed by hand: the ref of the first archive record

    @property
    def where(self) -> str:
        """The ref of the lines put back (file:knowledge/people.md#L40-L41), or of the first archive record."""
        if self.kind in (Kind.REMOVED_BY_HAND, Kind.KEPT_OUT):  # the lines are no longer in the file
            return self.archived or f"file:{self.path}"
        span = f"L{self.first}" if self.first == self.last else f"L{self.first}-L{self.last}"
        return f"file:{self.path}#{span}"

    def message(self) -> str:
        """The sentence an agent and `status` show."""
        many = self.count != 1
        lines = f"{self.count} line{'s' if many else ''} wolfmem wrote {'were' if many else 'was'}"
        if self.kind is Kind.PUT_BACK:
            return f"{lines} overwritten by an editor and put back at {self.where}"
        if self.kind is Kind.MARKERS:
            return f"{self.count} git conflict hunk(s) in {self.path} resolved by keeping both sides' lines"
        if self.kind is Kind.KEPT_OUT:
            return (f"{self.count} line{'s' if many else ''} wolfmem took out of {self.path} (forgotten, updated or "
                    f"merged, and archived) came back from an editor's stale buffer and {'were' if many else 'was'} "
                    "kept out (`wolfmem restore --fact REF` with its archive ref puts one back)")
        where = f" ({self.archived})" if self.archived else ""
        return f"{lines} removed by hand from {self.path} and archived{where}"

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form, with the message."""
        return {**asdict(self), "where": self.where, "message": self.message()}


class Reconciler:
    """Checks outside writes to one vault's knowledge files and repairs what they dropped."""

    def __init__(
        self, writer: VaultWriter, archive: Archive, history: History, state: StateStore,
        clock: Callable[[], datetime], conflicts: SyncConflicts | None = None,
    ) -> None:
        self.writer = writer
        self.archive = archive
        self.history = history
        self.state = state
        self.clock = clock
        self.conflicts = conflicts if conflicts is not None else SyncConflicts(writer, archive, clock)

    @staticmethod
    def watches(rel: str) -> bool:
        """Whether outside writes to rel are checked: knowledge files and episode logs, whose versions history keeps."""
        return source_of(rel) in ("knowledge", "episodes")

    def check_changed(self, rels: Iterable[str]) -> list[Repair]:
        """Check files a sync found changed, and those left unchecked before, waiting for no file's lock.

        A sync runs before a save or a search, which must not wait behind writers of another file (a
        script appending to people.md every 20 ms held a save to technical.md for seconds, issue 28).
        A file whose lock is held is left to its holder, which checks it before it writes
        (`VaultWriter.on_foreign`), and is marked, so the next sync of any process checks it again.
        A file that cannot be checked for another reason is logged and looked at on its next change.
        """
        left = self.state.unchecked()
        repairs: list[Repair] = []
        for rel in sorted({*rels, *left}):
            if not self.watches(rel):
                continue
            try:
                repairs += self.check(rel, wait=False)
            except TimedOut:
                if rel not in left:
                    self.state.note_unchecked(rel)
                continue
            except (OSError, WolfmemError) as exc:  # a read-only state folder, a busy index
                log.warning("could not check %s for lines an editor dropped: %s", rel, exc)
                continue
            if rel in left:
                self.state.clear_unchecked(rel)
        return repairs

    def check(self, rel: str, data: bytes | None = None, *, wait: bool = True) -> list[Repair]:
        """Look at rel as it is now (or as `data`, just read); resolve git's markers, repair what a write dropped.

        wait=False: raise TimedOut at once when another writer holds rel's lock.
        """
        if not self.watches(rel):
            return []
        if data is None:
            data = self.writer.vault.read_or_empty(rel)
        if b"<<<<<<<" in data:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return []
            resolved = self.conflicts.markers(rel, text)
            if resolved:  # rewritten without its markers: wolfmem's own write now
                return [Repair(Kind.MARKERS, rel, 0, 0, resolved[0].count, resolved[0].at)]
        else:
            self.conflicts.cleared(rel)
        return self._check(rel, data, CAS_SECONDS if wait else 0.0)

    def _check(self, rel: str, data: bytes, timeout: float) -> list[Repair]:
        """Repair what an outside write to rel (now holding `data`) dropped."""
        if self._unrecorded(rel, data) is None:
            return []
        # Decided under the file's lock: a write holds it from its exchange until its version is recorded,
        # so a version that landed a moment ago is never taken for an outside write, nor is an outside write
        # over it judged against the version before it (and a person's stale buffer noted as "kept everything").
        with self.writer.vault.lock(rel, timeout=timeout):
            data = self.writer.vault.read_or_empty(rel)
            latest = self._unrecorded(rel, data)
            return [] if latest is None else self._check_locked(rel, data, latest)

    def _unrecorded(self, rel: str, data: bytes) -> Version | None:
        """The newest recorded version of rel when `data` is not it: None when it is, or nothing is recorded."""
        if not data:
            return None  # missing or empty for a moment (an editor's rename or truncate): the next look sees it
        latest = self.history.latest(rel)
        return latest if latest is not None and latest.revision != content_hash(data) else None

    def _check_locked(self, rel: str, data: bytes, latest: Version) -> list[Repair]:
        previous = self.history.data(latest.id)
        try:
            theirs = data.decode("utf-8")
            ours = (previous or b"").decode("utf-8")
        except UnicodeDecodeError:
            return []  # not text: the index skips it too
        # An episode log is append-only and wolfmem's: every line of it counts. In a knowledge file only
        # the lines wolfmem composed do (a person's own deletions of their own lines need nothing).
        own = set(content_lines(ours)) if source_of(rel) == "episodes" else self.state.snapshot_lines(rel) or set()
        affirmed = self.state.take_affirmed(rel) & set(content_lines(ours))  # lines duplicate saves count on
        present = set(content_lines(theirs))
        back = self._taken_out(rel, theirs, set(content_lines(ours)))
        if not back and not any(line in own | affirmed and line not in present for line in content_lines(ours)):
            self.history.note(rel, data, HAND_EDIT, self.clock())  # an ordinary edit: every line of ours kept
            return []
        # Only now, with lines of wolfmem's missing or taken out back, are the kept versions read to find the base.
        kept = [(version, text.decode("utf-8", errors="replace")) for version, text in self.history.texts(rel, BASES)]
        base_id = choose_base(theirs, [(version.id, text) for version, text in kept])
        base = _loaded_base(kept, base_id, theirs, own, affirmed, self.clock())
        stale = any(version.id == base_id and self.state.is_stale_buffer(rel, version.revision) for version, _ in kept)
        return self._repair(rel, data, theirs, ours, base, own, stale, back)

    def _taken_out(self, rel: str, theirs: str, before: set[str]) -> set[str]:
        """Lines of the write that ours lacks holding a fact the archive says wolfmem took out of rel.

        Forgotten, updated or merged by curation: whether the write's copy predates that (a stale buffer)
        or was typed anew, the base tells. A fact a person removed by hand and writes again is theirs.
        """
        new = [line for line in content_lines(theirs) if line not in before] if source_of(rel) == "knowledge" else []
        facts = markdown.parse("\n".join(new) + "\n").facts if new else []
        left = self.archive.left(rel, by_hand=False) if facts else set()
        return {new[fact.line - 1] for fact in facts if fact_key(fact.text) in left}

    def _repair(
        self, rel: str, data: bytes, theirs: str, ours: str, base: str | None, own: set[str], stale: bool,
        back: set[str],
    ) -> list[Repair]:
        base = ours if base is None else base
        # merge3 keeps every line theirs typed or changed; of a base line ours took out, theirs' copy stays out.
        merged = merge3(base, ours, theirs).text
        # A line put back once and removed again is obeyed only by a write that is its base as it was (an old
        # version written back: a checkout, an unmodified buffer, or the person deleting exactly that line
        # again), and whose base is no stale buffer lines were put back over. A buffer the person edited that
        # lacked wolfmem's lines is a stale one; written again (with new lines, with fewer, or byte for byte,
        # as vim's `:w!` and nano's ^O do after the "file changed" warning), it never held what was put back.
        edited = Counter(content_lines(theirs)) != Counter(content_lines(base))
        again = self.state.put_back_hashes(rel) if not edited and not stale else set()
        merged, obeyed = drop_repeated(merged, theirs, again)
        now = self.clock()
        present = set(content_lines(theirs))
        removed = _removed(base, ours, merged, own) | obeyed
        kept_out = Counter(content_lines(theirs)) - Counter(content_lines(merged))
        repairs: list[Repair] = []
        if merged != theirs:
            written: Written[None] = self.writer.edit(
                rel, lambda current: Edit(merged) if current == theirs else None, cause=Cause.MERGE, composed=False,
            )
            if not written.changed:
                return []  # the file changed again meanwhile: the next look merges that version
            first, last, count = added_span(theirs, merged)
            # Facts only: a heading put back again is where the next put-back facts belong.
            put = [line for line in content_lines(merged) if line not in present and not is_heading(line)]
            self.state.note_put_back(rel, put, ())
            if edited or stale:  # a buffer the person edited that lacked wolfmem's lines: a stale one
                self.state.note_stale_buffer(rel, content_hash(data))
            if count:
                repairs.append(Repair(Kind.PUT_BACK, rel, first, last, count, now.isoformat(timespec="seconds")))
            if kept_out:
                repairs.append(_kept_out(rel, theirs, kept_out, now))
        elif not self.history.note(rel, data, HAND_EDIT, now):
            return []  # another process saw this version first and did the bookkeeping
        if typed := back & set(content_lines(merged)):  # typed anew after wolfmem took them out: back on file
            self.archive.add([ArchivedFact(fact.text, rel, fact.section, now.date().isoformat(), Reason.RESTORED,
                                           why="typed again by hand", by=HAND) for fact in _facts_on(merged, typed)])
        if removed and (archived := self._archive(rel, ours, sorted(removed), now)) is not None:
            repairs.append(archived)
        for repair in repairs:
            log.warning("%s: %s", rel, repair.message())
            self.state.add_repair(rel, repair.to_dict())
        return repairs

    def _archive(self, rel: str, ours: str, removed: list[str], now: datetime) -> Repair | None:
        """Archive wolfmem's lines a person removed (as "removed by hand"); they are no longer its own in rel.

        None when none of them was a fact (a heading): nothing to archive or tell.
        """
        if source_of(rel) == "knowledge":
            self.state.update_snapshot(rel, (), removed)
        self.state.note_put_back(rel, (), removed)
        facts = _facts_on(ours, set(removed))
        if not facts:
            return None
        day = now.date().isoformat()
        refs = self.archive.add([
            ArchivedFact(fact.text, rel, fact.section, day, Reason.REMOVED, why=REMOVED_BY_HAND, by=HAND)
            for fact in facts
        ])
        return Repair(
            Kind.REMOVED_BY_HAND, rel, facts[0].line, facts[-1].line, len(facts), now.isoformat(timespec="seconds"),
            archived=refs[0] if refs else "",
        )


def _loaded_base(
    kept: list[tuple[Version, str]], base_id: int | None, theirs: str, own: set[str], affirmed: set[str],
    now: datetime,
) -> str | None:
    """The chosen base, less what it cannot tell the editor saw: None when there is none.

    A line a save was told is on file (a duplicate) since the last outside write may have been affirmed
    after the editor loaded the file: left out of the base, it is put back once, as a line that save wrote.
    A base older than history's 24 hours of every version is the last version of its day, standing for the
    day's versions thinning dropped; the editor may have loaded any of them. wolfmem's lines the base holds,
    the older version kept before it does not, and the write lacks may have been saved after the editor
    loaded the file: left out of the base, they are put back (and the person told) instead of being taken
    for lines removed by hand. A person who did remove one removes it again and is obeyed.
    """
    at = next((n for n, (version, _text) in enumerate(kept) if version.id == base_id), None)
    if at is None:
        return None
    version, base = kept[at]
    coarse = at + 1 < len(kept) and thinned(version, now)
    older, present = set(content_lines(kept[at + 1][1])) if coarse else set(), set(content_lines(theirs))
    unsure = {line for line in content_lines(base) if line not in present
              and (line in affirmed or (coarse and line in own and line not in older))}
    if not unsure:
        return base
    return "".join(line for line in markdown.split_lines(base) if line.rstrip() not in unsure)


def _removed(base: str, ours: str, merged: str, own: set[str]) -> set[str]:
    """wolfmem's lines that base and ours held and the merge leaves out: the person removed them."""
    kept = set(content_lines(merged))
    return (set(content_lines(base)) & set(content_lines(ours)) & own) - kept


def _facts_on(text: str, lines: set[str]) -> list[markdown.Fact]:
    """The facts of text on the given (right-stripped) lines."""
    rows = [line.rstrip() for line in markdown.split_lines(text)]
    return [fact for fact in markdown.parse(text).facts if fact.line <= len(rows) and rows[fact.line - 1] in lines]


def _kept_out(rel: str, theirs: str, lines: Counter[str], now: datetime) -> Repair:
    """The repair telling of lines of theirs the merge kept out: where they were in it, how many."""
    at = [number for number, line in enumerate(markdown.split_lines(theirs), 1) if line.rstrip() in lines]
    return Repair(Kind.KEPT_OUT, rel, at[0], at[-1], lines.total(), now.isoformat(timespec="seconds"))
