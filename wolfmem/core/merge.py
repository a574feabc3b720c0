"""Three-way merge of line-based text, and finding the version an outside writer started from.

`merge3(base, ours, theirs)` is diff3 on lines, as git does it: a region only one side changed takes
that side; a region both changed the same way takes it once; a region both changed differently is a
conflict, resolved without marker lines: `theirs` (the person's lines, in their order) less the facts of
`base` that `ours` took out (updated, forgotten, merged) and `theirs` only kept, then the lines `ours`
added there. Lines compare without their line ending, so an editor that converts endings is no conflict;
every line of `theirs` the merge keeps keeps its own bytes, ending included (a file with some CRLF and
some LF lines stays so), and a line only `ours` gives takes `theirs`' line ending (its first, as a save
does).

`choose_base(theirs, versions)` is the version a person's editor most likely loaded: the one whose
non-blank lines differ least (as multisets) from what it wrote, the newest on a tie.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import TypeVar

from wolfmem.core.markdown import content_lines, newline_of, split_lines

K = TypeVar("K")
BOM = "\ufeff"


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
    """Merge the change from base to ours into theirs, line by line, never dropping a line theirs changed or added."""
    b, o, t = _lines(base), _lines(ours), _lines(theirs)
    raw_t = split_lines(theirs)
    merged: list[str] = []
    conflicts: list[Conflict] = []
    bz = oz = tz = 0
    for bstart, bend, ostart, oend, tstart, tend in _sync_regions(b, o, t):
        base_part, our_part, their_part = b[bz:bstart], o[oz:ostart], t[tz:tstart]
        if our_part in (base_part, their_part):
            merged += raw_t[tz:tstart]
        elif their_part == base_part:
            merged += _as_theirs(our_part, raw_t[tz:tstart])
        else:
            added = Counter(our_part) - Counter(base_part) - Counter(their_part)
            ours_added = [line for line in our_part if _take(added, line)]
            # A fact of base's that ours took out (updated, forgotten, merged) and theirs only kept stays out.
            dropped = Counter({line: n for line, n in (Counter(base_part) - Counter(our_part)).items() if _fact(line)})
            dropped &= Counter(their_part) & Counter(base_part)
            their_raw = raw_t[tz:tstart]
            theirs_kept = [raw for line, raw in zip(their_part, their_raw, strict=True) if not _take(dropped, line)]
            conflicts.append(Conflict(len(merged) + 1, len(theirs_kept) + len(ours_added)))
            merged += theirs_kept + ours_added
        merged += raw_t[tstart:tend]
        bz, oz, tz = bend, oend, tend
    return MergeResult(_join(merged, theirs if theirs else ours), conflicts)


def _fact(line: str) -> bool:
    """Whether a line may be a fact (neither blank nor a heading): structure is never dropped from a conflict."""
    return bool(line.strip()) and not line.lstrip().startswith("#")


def _as_theirs(lines: list[str], theirs: list[str]) -> list[str]:
    """Lines (without endings), each as theirs wrote it, ending included, where theirs holds a line of that text."""
    pool: dict[str, list[str]] = {}
    for raw in reversed(theirs):
        pool.setdefault(raw.rstrip("\r\n"), []).append(raw)
    return [pool[line].pop() if pool.get(line) else line for line in lines]


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
    union of both, section by section (as git's merge=union, but a copy's line goes to the end of its own
    `##` section, and a section only the copy has goes to the end of the file). Only a line one side
    holds and `gone(line)` says was removed on purpose (forgotten, removed by hand, merged away by
    curation: the archive, which every machine syncs) stays out. A byte-order mark is no part of the first
    line: the merge starts as the current file does, with one only if it had one.
    """
    bom = BOM if current.startswith(BOM) else ""
    raw_cur = split_lines(current.removeprefix(BOM))
    cur, other = _lines(current.removeprefix(BOM)), _lines(copy.removeprefix(BOM))
    only_cur = Counter(cur) - Counter(other)
    missing = Counter(other) - Counter(cur)
    # The current file's lines as they are (endings included); the copy's lines take the file's line ending.
    out = [raw for line, raw in zip(cur, raw_cur, strict=True)
           if not (line.strip() and only_cur[line] and gone(line) and _take(only_cur, line))]
    extras: dict[str, list[str]] = {}
    headings: dict[str, str] = {}
    for key, start, end in _spans(other):
        headings.setdefault(key, other[start] if key else "")
        body = other[start + 1 if key else start:end]
        extras.setdefault(key, []).extend(
            line for line in body if line.strip() and not gone(line) and _take(missing, line))
    # the first section of a name
    spans = {key: (start, end) for key, start, end in reversed(_spans([line.rstrip("\r\n") for line in out]))}
    for key in sorted((k for k in extras if k in spans and extras[k]), key=lambda k: -spans[k][1]):
        start, end = spans[key]
        at = next((n for n in range(end, start, -1) if out[n - 1].strip()), start + (1 if key else 0))
        out[at:at] = extras[key]
    for key, lines in extras.items():
        if key not in spans and lines:
            while out and not out[-1].strip():
                out.pop()
            out += ["", headings[key], *lines] if out else [headings[key], *lines]
    return MergeResult(bom + _join(out, current if current else copy))


_HEADING = re.compile(r"^ {0,3}##(?:[ \t]+(.*?))?[ \t#]*$")


def _spans(lines: list[str]) -> list[tuple[str, int, int]]:
    """Each `##` section (and the text before the first, keyed "") as (key, first line index, end index)."""
    starts = [(0, "")]
    for number, line in enumerate(lines):
        match = _HEADING.match(line)
        if match:
            starts.append((number, " ".join((match.group(1) or "").split()).casefold() or "#"))
    if len(starts) > 1 and starts[1][0] == 0:
        starts.pop(0)
    return [(key, start, starts[i + 1][0] if i + 1 < len(starts) else len(lines))
            for i, (start, key) in enumerate(starts)]


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
    """Lines joined into text: a line that has its ending keeps it, one without takes the model text's.

    The text ends with a line ending when the model does (or is empty), and otherwise without one.
    """
    if not lines:
        return ""
    newline = newline_of(model) if model else "\n"
    ends = not model or model.endswith(("\n", "\r"))
    last = lines[-1] if ends and lines[-1].endswith(("\n", "\r")) else lines[-1].rstrip("\r\n") + newline
    text = "".join(line if line.endswith(("\n", "\r")) else line + newline for line in lines[:-1])
    return text + (last if ends else last.rstrip("\r\n"))
