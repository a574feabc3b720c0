"""The text side of a put-back: what an outside write lacks, what it is told back, and where that lands.

Pure functions over the texts `storage/reconcile.py` merges: the merge less lines a person removed again
(with the empty headings they leave), the span of lines put back, and the lines a stale buffer still held
that wolfmem had taken out since.
"""

from __future__ import annotations

import itertools
from collections import Counter
from difflib import SequenceMatcher

from wolfmem.core import markdown
from wolfmem.core.markdown import content_lines
from wolfmem.storage.repairrecords import line_hash


def drop_repeated(merged: str, theirs: str, again: set[str]) -> tuple[str, set[str]]:
    """The merge without lines put back once already and removed again (obeyed), and those lines.

    A heading the merge added for them goes too when its section is left empty, with the blank lines it added.
    """
    if not again:
        return merged, set()
    extra = Counter(content_lines(merged)) - Counter(content_lines(theirs))
    obeyed = {line for line in extra if line_hash(line) in again}
    if not obeyed:
        return merged, set()
    drop = Counter({line: extra[line] for line in obeyed})
    kept = [line for line in reversed(markdown.split_lines(merged)) if not _take(drop, line.rstrip())][::-1]
    return _without_empty_headings(kept, theirs), obeyed


def _without_empty_headings(lines: list[str], theirs: str) -> str:
    """Lines joined, less each heading theirs lacks that heads only blank lines, and the blank lines it brought."""
    extra = Counter(line.rstrip() for line in lines) - Counter(line.rstrip() for line in markdown.split_lines(theirs))
    out: list[str] = []
    skipping = False
    for at, line in enumerate(lines):
        key = line.rstrip()
        if is_heading(key):
            body = itertools.takewhile(lambda later: not is_heading(later), lines[at + 1:])
            skipping = extra[key] > 0 and not any(later.strip() for later in body)
            if skipping:
                extra[key] -= 1
                if out and not out[-1].strip() and _take(extra, ""):
                    out.pop()
                continue
        elif skipping and not key and _take(extra, ""):
            continue
        out.append(line)
    return "".join(out)


def is_heading(line: str) -> bool:
    return line.lstrip().startswith("#")


def _take(counts: Counter[str], key: str) -> bool:
    if counts[key] > 0:
        counts[key] -= 1
        return True
    return False


def added_span(theirs: str, merged: str) -> tuple[int, int, int]:
    """The first and last line (1-based) of merged that theirs lacks, and how many non-blank lines those are."""
    a = [line.rstrip("\r\n") for line in markdown.split_lines(theirs)]
    b = [line.rstrip("\r\n") for line in markdown.split_lines(merged)]
    added = [
        j
        for tag, _i1, _i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        if tag in ("insert", "replace")
        for j in range(j1, j2)
        if b[j].strip()
    ]
    if not added:
        return 0, 0, 0
    return added[0] + 1, added[-1] + 1, len(added)
