"""git's conflict markers in a note: found, resolved where both sides are lists of facts, never read as facts.

An unresolved merge leaves hunks in the file:

    <<<<<<< HEAD
    - one side's lines
    ||||||| base            (only with merge.conflictStyle diff3 or zdiff3)
    - the common version's lines
    =======
    - the other side's lines
    >>>>>>> origin/main

A hunk is resolved by keeping both sides' lines, the first side's first, each line once, without the
marker lines; a line the common version held (diff3 style) that one side removed stays removed. That is
right only where a line is a fact on its own: in a knowledge file, when every non-blank line of both sides
is a list item; in an episode log (append-only blocks), always. A knowledge hunk of list items and `##`
headings where one side's headings are all among the other's (two machines saved into the same new
sections at the end of a file) is the union of both sides section by section, as a conflict copy is
merged (`core.merge.merge_copy`): each side's facts under their own heading, each heading once. Any other
hunk (headings only one side each has, which may be a rename; a `#` title or a deeper heading; prose; a
half-rewritten paragraph) is left as it is and reported: it needs a person.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

_OPEN, _BASE, _SPLIT, _CLOSE = (re.compile(p) for p in (r"^<{7}(?: .*)?$", r"^\|{7}(?: .*)?$", r"^={7}$",
                                                          r"^>{7}(?: .*)?$"))
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_SECTION = re.compile(r"^ {0,3}##(?:[ \t]|$)")
# Two texts merged section by section, less the lines `gone` says stay out (core.merge.merge_copy's text).
Union = Callable[[str, str, Callable[[str], bool]], str]


@dataclass(frozen=True)
class Hunk:
    """One conflict hunk: its marker lines' numbers (1-based) and the two sides' lines (and the base's)."""

    start: int
    end: int
    ours: tuple[str, ...]
    theirs: tuple[str, ...]
    base: tuple[str, ...] | None
    markers: tuple[int, ...]

    def facts_only(self) -> bool:
        """Whether every non-blank line of both sides is a list item (one fact per line)."""
        return all(_LIST_ITEM.match(line) for line in (*self.ours, *self.theirs) if line.strip())

    def sections_of_facts(self) -> bool:
        """Whether every non-blank line of both sides is a list item or a `##` heading, and no heading was renamed.

        A heading only one side has, while the other has one only it has, may be a rename (`## Tom` and
        `## Thomas`): that needs a person. Headings one side adds to the other's are new sections.
        """
        lines = (*self.ours, *self.theirs)
        if not all(_LIST_ITEM.match(line) or _SECTION.match(line) for line in lines if line.strip()):
            return False
        ours, theirs = ({line.strip() for line in side if _SECTION.match(line)} for side in (self.ours, self.theirs))
        return ours <= theirs or theirs <= ours

    def resolved(self) -> list[str]:
        """Both sides' lines, the first's first, each once; what one side removed from the base stays removed."""
        base = Counter(self.base or ())
        ours, theirs = Counter(self.ours), Counter(self.theirs)
        kept = [line for line in self.ours if not (base[line] and not theirs[line])]
        seen = Counter(kept)
        for line in self.theirs:
            if seen[line] or (base[line] and not ours[line]):
                continue
            kept.append(line)
        return kept

    def resolved_by_section(self, union: Union) -> list[str]:
        """Both sides' lines, the first side's as they are and the other's under their own `##` headings, each once.

        `union(current, copy, gone)` is that merge of two texts (`core.merge.merge_copy`'s text); as in
        `resolved`, a line the common version held that one side removed stays removed.
        """
        base, ours, theirs = Counter(self.base or ()), Counter(self.ours), Counter(self.theirs)
        merged = union("".join(line + "\n" for line in self.ours), "".join(line + "\n" for line in self.theirs),
                       lambda line: bool(base[line]) and not (ours[line] and theirs[line]))
        return merged.splitlines()


@dataclass(frozen=True)
class Resolution:
    """A text with the hunks it could resolve resolved, and the ones it could not (numbered as in the input)."""

    text: str
    resolved: int = 0
    unresolved: list[Hunk] = field(default_factory=list)


def hunks(text: str) -> list[Hunk]:
    """The well-formed conflict hunks of a text (an open, a split and a close marker, in that order)."""
    found: list[Hunk] = []
    lines = _LINE.findall(text)
    i = 0
    while i < len(lines):
        if not _OPEN.match(lines[i].rstrip("\r\n")):
            i += 1
            continue
        hunk = _hunk_at(lines, i)
        if hunk is None:
            i += 1
            continue
        found.append(hunk)
        i = hunk.end
    return found


def _hunk_at(lines: list[str], start: int) -> Hunk | None:
    parts: list[list[str]] = [[]]
    markers = [start + 1]
    kinds = ["open"]
    for j in range(start + 1, len(lines)):
        line = lines[j].rstrip("\r\n")
        if _OPEN.match(line):
            return None  # another open before this one closed: not a hunk git wrote
        kind = "base" if _BASE.match(line) else "split" if _SPLIT.match(line) else "close" if _CLOSE.match(line) \
            else None
        if kind is None:
            parts[-1].append(line)
            continue
        if (kind == "base" and kinds != ["open"]) or (kind == "split" and kinds[-1] not in ("open", "base")) \
                or (kind == "close" and kinds[-1] != "split"):
            return None
        kinds.append(kind)
        markers.append(j + 1)
        if kind == "close":
            base = tuple(parts[1]) if "base" in kinds else None
            return Hunk(start + 1, j + 1, tuple(parts[0]), tuple(parts[-1]), base, tuple(markers))
        parts.append([])
    return None


def marker_lines(text: str) -> set[int]:
    """The 1-based numbers of the marker lines of every well-formed hunk: never facts, never headings."""
    return {number for hunk in hunks(text) for number in hunk.markers}


def without_markers(text: str) -> str:
    """The text with each hunk's marker lines emptied (their line endings kept), so line numbers stay."""
    if "<<<<<<<" not in text:
        return text
    drop = marker_lines(text)
    if not drop:
        return text
    lines = _LINE.findall(text)
    return "".join(line[len(line.rstrip("\r\n")):] if number in drop else line
                   for number, line in enumerate(lines, 1))


def resolve(text: str, *, facts_only: bool = True, union: Union | None = None) -> Resolution:
    """Resolve each hunk that is a list of facts on both sides (every hunk, with facts_only=False).

    With `union`, a hunk of facts and `##` headings is resolved too, section by section.
    """
    found = hunks(text)
    if not found:
        return Resolution(text)
    lines = _LINE.findall(text)
    newline = next((line[len(line.rstrip("\r\n")):] for line in lines if line.endswith(("\n", "\r"))), "\n")
    out: list[str] = []
    unresolved: list[Hunk] = []
    at = 0
    for hunk in found:
        out += lines[at:hunk.start - 1]
        if not facts_only or hunk.facts_only():
            out += [line + newline for line in hunk.resolved()]
        elif union is not None and hunk.sections_of_facts():
            out += [line + newline for line in hunk.resolved_by_section(union)]
        else:
            unresolved.append(hunk)
            out += lines[hunk.start - 1:hunk.end]
        at = hunk.end
    out += lines[at:]
    return Resolution("".join(out), len(found) - len(unresolved), unresolved)
