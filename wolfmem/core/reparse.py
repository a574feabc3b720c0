"""A text's parse from an earlier text's parse: only the lines around the change are parsed again.

A script appending a line to a 3,000-line people.md every 20 ms made every sync, save and check
parse the whole file again (issue 28: most of a contended save's time). Given a text parsed before,
the lines both texts share at their start are kept, parsing starts again at a line that opens a
block on its own, and it stops at the first top-level heading of the lines they share at their end,
whose parse is kept, moved by the change in length; or, when no heading is added, taken out or
crossed, at the first top-level bullet there (a hand edit inside one 8,000-line section parsed the
rest of the file, 250,174 characters).

Why each cut gives exactly the whole parse (CommonMark, as markdown-it reads it):
- the parser reads forward: the state at a shared line is the state the earlier parse had there;
- a top-level ``##`` heading the earlier parse made one lay in no code fence or HTML block and
  closes every block: the lines from it on parse alike alone and in the file;
- a top-level bullet ("- x" at column 0) the earlier parse read a fact from starts a list item
  whatever precedes it (it interrupts a paragraph, never continues one) and lay in no fence or
  HTML block, and its item's lines parse alike whether a list was open above it or not;
- a shared heading after the change is kept only when the changed lines, parsed up to and
  including it, still make it a top-level heading: nothing opened in them swallows it;
- so is a shared top-level bullet, by the bullet rule above, when the changed lines parsed up to and
  including it still read its fact from it, and hold no heading, old or new: the facts after it keep
  their section.
git conflict markers (read across the whole file), a first line that may open front matter (its
end is looked for ahead), or no such line, mean a whole parse.
`tests/core/test_reparse.py` checks results against whole parses.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from wolfmem.core import blocks
from wolfmem.core.blocks import BOM, TOP_BULLET, Fact, ParsedFile, Section

CONFLICT = "<<<<<<<"
# Facts looked back over for a top-level bullet before the section heading is taken instead.
REACH = 64


def common_ends(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """How many lines old and new share at their start, and then at their end (never overlapping)."""
    shortest = min(len(old), len(new))
    prefix = 0
    while prefix < shortest and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return prefix, suffix


def reparse(old_text: str, old: tuple[ParsedFile, int], text: str) -> tuple[ParsedFile, int] | None:
    """`markdown.scan(text)`, built from `old`, the scan of `old_text`; None when it must be parsed whole."""
    if CONFLICT in text or CONFLICT in old_text:
        return None
    before, front_end = old
    old_lines, new_lines = blocks.lines_of(old_text), blocks.lines_of(text)
    if not front_end and old_lines and old_lines[0].removeprefix(BOM).startswith("-"):
        return None  # a `---` on line 1 opens front matter wherever its closing line comes: read ahead
    prefix, suffix = common_ends(old_lines, new_lines)
    start = _restart(before, old_lines, prefix, front_end)
    if start is None:
        return None
    delta = len(new_lines) - len(old_lines)
    kept = next((s for s in before.sections if s.line > len(old_lines) - suffix), None)
    bullet = _resume_bullet(before, old_lines, len(old_lines) - suffix, kept)
    resume = bullet.line if bullet is not None else kept.line if kept is not None else None
    stop = len(new_lines) if resume is None else resume + delta  # the last line parsed again
    local = blocks.scan_whole("".join(new_lines[start - 1:stop]))[0]
    offset = start - 1
    if bullet is not None:
        at_stop = next((f for f in reversed(local.facts) if f.line + offset == stop), None)
        if (local.title is not None or local.sections or not _one_block(before, start, bullet.line)
                or at_stop is None or at_stop.text != bullet.text):
            return None  # a heading added or taken out, or the change swallows the shared bullet: parse whole
    elif kept is not None and (not local.sections or local.sections[-1].line != stop - start + 1):
        return None  # the change swallows the shared heading (an unclosed fence, say): parse whole
    heads = [line for line in (local.title_line, *(s.line for s in local.sections[:1])) if line]
    first_head = min(heads) + offset if heads else len(new_lines) + 1
    context = _section_at(before, start)
    title = _title(before, local, offset, start, resume, delta)
    if title is None:
        return None
    if bullet is not None:  # the section the change is in goes on past it; the lines from the bullet on are kept
        sections = [Section(s.heading, s.line, s.end + delta) if s.end >= start else s
                    for s in before.sections if s.line < start]
    else:
        sections = [Section(s.heading, s.line, max(s.line, first_head - 1)) if s.end >= start else s
                    for s in before.sections if s.line < start]
        sections += [Section(s.heading, s.line + offset, s.end + offset) for s in local.sections
                     if s.line + offset < stop or kept is None]
    if resume is not None:
        sections += [Section(s.heading, s.line + delta, s.end + delta) for s in before.sections if s.line >= resume]

    def spliced(earlier: tuple[Fact, ...], parsed: tuple[Fact, ...]) -> tuple[Fact, ...]:
        out = list(earlier[:bisect.bisect_left(earlier, start, key=lambda fact: fact.line)])
        out += [Fact(f.text, f.line + offset, context if f.line + offset < first_head else f.section) for f in parsed
                if resume is None or f.line + offset < stop]
        if resume is not None:
            tail = earlier[bisect.bisect_left(earlier, resume, key=lambda fact: fact.line):]
            out += [Fact(f.text, f.line + delta, f.section) for f in tail] if delta else tail
        return tuple(out)

    name, title_line = title
    parsed = ParsedFile(name, tuple(sections), spliced(before.facts, local.facts), spliced(before.code, local.code),
                        title_line)
    return parsed, front_end


def _restart(before: ParsedFile, lines: Sequence[str], prefix: int, front_end: int) -> int | None:
    """The last shared line (1-based, after line 1 and the front matter) the parse may start again at."""
    floor = max(front_end, 1)
    at = bisect.bisect_right(before.sections, prefix, key=lambda section: section.line)
    heading = before.sections[at - 1].line if at else 0
    facts = before.facts
    k = bisect.bisect_right(facts, prefix, key=lambda fact: fact.line)
    for fact in reversed(facts[max(0, k - REACH):k]):
        if fact.line <= max(heading, floor):
            break
        raw = lines[fact.line - 1]
        # A table row's text is its whole line; a list item's is the line without its bullet.
        if TOP_BULLET.match(raw) and fact.text != raw.strip():
            return fact.line
    return heading if heading > floor else None


def _section_at(before: ParsedFile, line: int) -> str:
    """The section a fact on `line` was in: the heading of the last section starting at or above it."""
    at = bisect.bisect_right(before.sections, line, key=lambda section: section.line)
    if not at or before.sections[at - 1].end < line:
        return ""  # above the first `##`, or after a `#` that closed it
    return before.sections[at - 1].heading


def _resume_bullet(before: ParsedFile, lines: Sequence[str], changed_to: int, kept: Section | None) -> Fact | None:
    """The first fact after the changed lines (old numbering) that is a top-level bullet, before `kept`; or None."""
    end = kept.line if kept is not None else len(lines) + 1
    k = bisect.bisect_right(before.facts, changed_to, key=lambda fact: fact.line)
    for fact in before.facts[k:k + REACH]:
        if fact.line >= end:
            break
        raw = lines[fact.line - 1]
        if TOP_BULLET.match(raw) and fact.text != raw.strip():
            return fact
    return None


def _one_block(before: ParsedFile, first: int, last: int) -> bool:
    """Whether lines `first` to `last` lay under one heading in the earlier parse: no `#` or `##` on the lines
    from `first` up to `last`, and the section `first` was in (if any) still open at `last` (a later `#` closes it)."""
    at = bisect.bisect_right(before.sections, first, key=lambda section: section.line)
    if (at < len(before.sections) and before.sections[at].line < last) or first <= before.title_line < last:
        return False
    return not at or before.sections[at - 1].end < first or before.sections[at - 1].end >= last


def _title(before: ParsedFile, local: ParsedFile, offset: int, start: int, resume: int | None,
           delta: int) -> tuple[str | None, int] | None:
    """The new text's title and its line, or None when the lines kept (from old line `resume` on) do not tell."""
    if before.title is not None and before.title_line < start:
        return before.title, before.title_line
    if local.title is not None:
        return local.title, local.title_line + offset
    if before.title is None or resume is None:
        return None, 0  # no `#` above the change before, none in the lines parsed again: none after either
    if before.title_line >= resume:
        return before.title, before.title_line + delta
    return None  # the title was on a changed line; a later `#` would be the title, and the kept lines hide it
