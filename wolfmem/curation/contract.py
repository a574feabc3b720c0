"""The curator contract: what a curator is given, what it proposes, and what became of each file.

A curation request holds the curated files to look at (with each fact's
first-seen day and the hand-edited lines), the episodes of the days covered,
and the facts saved since the last run. A curator answers per file:
"unchanged", a whole new text with a change list, or "failed" with the reason.
Nothing here writes; `curation.landing` validates and lands proposals.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

ProposalStatus = Literal["unchanged", "rewrite", "failed"]
FileStatus = Literal["written", "unchanged", "rejected", "skipped-cas", "failed", "proposed", "staged", "skipped"]


class ChangeKind(enum.StrEnum):
    """What one change does; "filed" (moved to the section it names) is the offline curator's."""

    MERGED = "merged"
    REMOVED = "removed"
    SUPERSEDED = "superseded"
    ADDED = "added"
    MOVED = "moved"
    FILED = "filed"
    SECTION = "section"  # a fact or heading that changed section or wording of its heading; listed by validation


@dataclass(frozen=True)
class Change:
    """One entry of a change list: the old lines it takes out, the line it adds (or their target), why, and whence.

    Parsed once where a change list comes in (`validate.clean_changes`: the model's reply, a staged file);
    everything after it, down to the curation log and the archive, reads these fields.
    """

    kind: ChangeKind
    old: tuple[str, ...] = ()
    new: str = ""  # the line added, merged into or superseding; for "moved" the file it moves to
    reason: str = ""
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (the shape the model answers in)."""
        return {"kind": self.kind.value, "old": list(self.old), "new": self.new, "reason": self.reason,
                "source": self.source}


@dataclass(frozen=True)
class FileInput:
    """One curated file as the curator sees it."""

    rel: str
    text: str
    first_seen: dict[str, str] = field(default_factory=dict)  # fact_key -> YYYY-MM-DD
    hand_lines: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Episode:
    """One day's episode log."""

    rel: str
    day: str
    text: str


@dataclass(frozen=True)
class SavedFact:
    """A fact memory_save filed since the last curation."""

    rel: str
    text: str
    day: str


@dataclass(frozen=True)
class CurationRequest:
    """Everything a curator may look at for one run."""

    day: str  # the last day covered
    since: str | None  # the first day covered: saves filed from it through `day` are listed
    files: dict[str, FileInput]
    episodes: tuple[Episode, ...] = ()
    saves: tuple[SavedFact, ...] = ()
    sections: dict[str, list[str]] = field(default_factory=dict)  # every curated file's ## headings
    forgotten: tuple[str, ...] = ()  # facts a person asked to forget: never to be added back


@dataclass
class FileProposal:
    """A curator's answer for one file."""

    status: ProposalStatus
    content: str = ""
    changes: list[Change] = field(default_factory=list)
    summary: str = ""
    error: str = ""


@dataclass
class Proposal:
    """A curator's answers for every file it was given, with its token usage."""

    files: dict[str, FileProposal]
    usage: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    seconds: float = 0.0


class Curator(Protocol):
    """Something that proposes rewrites of curated files: the LLM or the offline curator."""

    label: str  # names the curator in the curation log, e.g. "offline curator (no LLM)"
    # False: its answers depend on the files alone, so a run hands it every pending entry in one round
    # (batches of episodes would each get the same answer, a whole tidy of every file per batch).
    reads_episodes: bool

    def propose(self, request: CurationRequest) -> Proposal:
        """Answer for each file of the request; never write anything."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


@dataclass
class FileOutcome:
    """What happened to one curated file in a run (proposed: validated in a dry run, not written)."""

    status: FileStatus
    reasons: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    revision: str = ""
    archived: list[str] = field(default_factory=list)  # refs of the archive records of the facts that left
    added: int = 0  # new facts and sections it brought (written: counted in the 30-day growth budget)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {**asdict(self), "changes": [change.to_dict() for change in self.changes]}
