"""Three-way merge of line-based text, and finding the version an outside writer started from.

`merge3(base, ours, theirs)` is diff3 on lines, as git does it: a region only one side changed takes
that side; a region both changed the same way takes it once; a region both changed differently is a
conflict, which never drops a line: it keeps `theirs` (the person's lines, in their order) followed by
the lines `ours` added there, and no marker lines are written. Lines compare without their line
ending, and the result uses `theirs`' line ending, so an editor that converts endings is no conflict.

`choose_base(theirs, versions)` is the version a person's editor most likely loaded: the one whose
non-blank lines differ least (as multisets) from what it wrote, the newest on a tie.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import TypeVar

from wolfmem.core.markdown import content_lines, newline_of, split_lines

K = TypeVar("K")


@dataclass(frozen=True)
class Conflict:
    """A region both sides changed differently: where it starts in the merged text (1-based) and how long it is."""

    line: int
    length: int


@dataclass(frozen=True)
class MergeResult:
    """The merged text and the regions that conflicted (resolved as theirs, then ours' additions)."""

    text: str
    conflicts: list[Conflict] = field(default_factory=list)


def merge3(base: str, ours: str, theirs: str) -> MergeResult:
    """Merge the change from base to ours into theirs, line by line, never dropping a line of either side."""
    b, o, t = _lines(base), _lines(ours), _lines(theirs)
    merged: list[str] = []
    conflicts: list[Conflict] = []
    bz = oz = tz = 0
    for bstart, bend, ostart, oend, tstart, tend in _sync_regions(b, o, t):
        base_part, our_part, their_part = b[bz:bstart], o[oz:ostart], t[tz:tstart]
        if our_part == base_part:
            merged += their_part
        elif their_part == base_part or our_part == their_part:
            merged += our_part
        else:
            added = Counter(our_part) - Counter(base_part) - Counter(their_part)
            ours_added = [line for line in our_part if _take(added, line)]
            conflicts.append(Conflict(len(merged) + 1, len(their_part) + len(ours_added)))
            merged += their_part + ours_added
        merged += b[bstart:bend]
        bz, oz, tz = bend, oend, tend
    return MergeResult(_join(merged, theirs if theirs else ours), conflicts)


def choose_base(theirs: str, versions: Iterable[tuple[K, str]]) -> K | None:
    """The key of the version (given newest first) closest to theirs by non-blank lines; None when there is none."""
    wanted = Counter(content_lines(theirs))
    best: tuple[int, K] | None = None
    for key, text in versions:
        have = Counter(content_lines(text))
        distance = (have - wanted).total() + (wanted - have).total()
        if best is None or distance < best[0]:
            best = (distance, key)
            if distance == 0:
                break
    return None if best is None else best[1]


def merge_copy(current: str, copy: str, gone: Callable[[str], bool] = lambda _line: False) -> MergeResult:
    """Merge a sync engine's conflict copy into the file's current text: both sides' lines, each once.

    Neither side's history tells one machine's deletion from the other's addition, so the merge is the
    union of both (as git's merge=union; the lines both hold are the common version), in the current
    text's order, each line of the copy placed after the line it follows there. Only a line one side
    holds and `gone(line)` says was removed on purpose (forgotten, removed by hand, merged away by
    curation: the archive, which every machine syncs) stays out.
    """
    shared = Counter(_lines(copy))
    common = [line for line in _lines(current) if _take(shared, line)]
    result = merge3("\n".join(common), copy, current)
    merged = _put_missing(_lines(result.text), _lines(current))
    merged = _put_missing(merged, _lines(copy))
    one_side = (Counter(_lines(current)) - Counter(_lines(copy))) + (Counter(_lines(copy)) - Counter(_lines(current)))
    merged = [line for line in merged if not (line.strip() and one_side[line] and gone(line))]
    return MergeResult(_join(merged, current if current else copy), result.conflicts)


def _put_missing(merged: list[str], source: list[str]) -> list[str]:
    """merged with every non-blank line of source it lacks, each after the line before it in source."""
    missing = Counter(line for line in source if line.strip()) - Counter(merged)
    if not missing:
        return merged
    out = list(merged)
    for number, line in enumerate(source):
        if not _take(missing, line):
            continue
        before = next((source[k] for k in range(number - 1, -1, -1) if source[k] in out), None)
        at = len(out) - out[::-1].index(before) if before is not None else 0
        out.insert(at, line)
    return out


def _lines(text: str) -> list[str]:
    return [line.rstrip("\r\n") for line in split_lines(text)]


def _take(counts: Counter[str], line: str) -> bool:
    if counts[line] > 0:
        counts[line] -= 1
        return True
    return False


def _sync_regions(b: Sequence[str], o: Sequence[str], t: Sequence[str]) -> list[tuple[int, int, int, int, int, int]]:
    """Runs of base lines unchanged on both sides, as (base, ours, theirs) start/end pairs, ending with an empty one.

    The classic diff3 walk (as in bzr's merge3): intersect the matching blocks of base→ours and base→theirs.
    """
    ours_blocks = SequenceMatcher(None, b, o, autojunk=False).get_matching_blocks()
    their_blocks = SequenceMatcher(None, b, t, autojunk=False).get_matching_blocks()
    regions = []
    i = j = 0
    while i < len(ours_blocks) and j < len(their_blocks):
        obase, omatch, olen = ours_blocks[i]
        tbase, tmatch, tlen = their_blocks[j]
        start, end = max(obase, tbase), min(obase + olen, tbase + tlen)
        if start < end:
            ostart, tstart = omatch + start - obase, tmatch + start - tbase
            regions.append((start, end, ostart, ostart + end - start, tstart, tstart + end - start))
        if obase + olen < tbase + tlen:
            i += 1
        else:
            j += 1
    regions.append((len(b), len(b), len(o), len(o), len(t), len(t)))
    return regions


def _join(lines: list[str], model: str) -> str:
    """Lines joined with the model text's line ending, ending with one when the model does (or is empty)."""
    if not lines:
        return ""
    newline = newline_of(model) if model else "\n"
    ends = not model or model.endswith(("\n", "\r"))
    return newline.join(lines) + (newline if ends else "")
