"""Sync engines' conflict copies, told by their names: which engine made one, and of which file.

Each engine names the losing side of a conflict after the file it belongs to:

- Syncthing: `people.sync-conflict-20261201-140509-ABCDEF7.md` (date, time, the other device's short id);
- Dropbox: `people (conflicted copy 2026-12-01).md`, `people (Alice's conflicted copy 2026-12-01 1).md`;
- unison (`copyonconflict`): `people (conflict_on_2026-12-01).md`, `people (conflict #1_on_2026-12-01).md`;
- iCloud Drive: `people 2.md`, the original's name with a number. A note may be called "chapter 2.md",
  so this one counts only for a curated file's name or an episode log's (`2026-12-01 2.md`);
- git's merge tools: `people.md.orig`.

unison's own backups (`.bak.1.people.md`) and temp files (`.unison.people.md.….unison.tmp`) are hidden
files, which are never notes anyway.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass


class Engine(enum.StrEnum):
    """The sync engine (or tool) a conflict copy's name comes from."""

    SYNCTHING = "Syncthing"
    DROPBOX = "Dropbox"
    UNISON = "unison"
    ICLOUD = "iCloud"
    GIT = "git"


@dataclass(frozen=True)
class ConflictName:
    """A conflict copy's engine and the vault-relative path of the file it is a copy of."""

    engine: Engine
    original: str


_EXT = r"(?P<ext>\.[A-Za-z0-9]{1,8})?"
_PATTERNS = (
    (Engine.SYNCTHING, re.compile(r"^(?P<stem>.+?)\.sync-conflict-[A-Za-z0-9-]+?" + _EXT + "$")),
    (Engine.DROPBOX, re.compile(r"^(?P<stem>.+?) \([^()]*conflicted copy[^()]*\)" + _EXT + "$")),
    (Engine.UNISON, re.compile(r"^(?P<stem>.+?) \(conflict(?: #\d+)?_on_[^()]*\)" + _EXT + "$")),
    (Engine.GIT, re.compile(r"^(?P<stem>.+?)(?P<ext>\.[A-Za-z0-9]{1,8})\.orig$")),
)
# iCloud's copies: only of names whose copies cannot be a person's own note.
_ICLOUD = re.compile(r"^(?P<stem>.+?) (?:[2-9]|[1-9]\d)(?P<ext>\.md)$", re.IGNORECASE)
_ICLOUD_STEMS = re.compile(r"^(?:people|projects|preferences|technical|decisions|\d{4}-\d{2}-\d{2})$")


def conflict_name(rel: str) -> ConflictName | None:
    """Which engine's conflict copy rel is, and of which file; None when its name is no conflict copy's."""
    folder, _, name = rel.rpartition("/")
    prefix = folder + "/" if folder else ""
    for engine, pattern in _PATTERNS:
        match = pattern.match(name)
        if match:
            return ConflictName(engine, prefix + match.group("stem") + (match.group("ext") or ""))
    match = _ICLOUD.match(name)
    if match and _ICLOUD_STEMS.match(match.group("stem")) and folder in ("knowledge", "episodes"):
        return ConflictName(Engine.ICLOUD, prefix + match.group("stem") + match.group("ext"))
    return None


def is_conflict_copy(rel: str) -> bool:
    """Whether rel's name is a sync engine's conflict copy's (any file type)."""
    return conflict_name(rel) is not None
