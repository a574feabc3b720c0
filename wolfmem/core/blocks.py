"""Text ⇄ blocks: the whole parse of vault markdown into title, ``##`` sections, facts and code lines.

markdown-it-py only tells us *where* things are (token ``.map`` line ranges); nothing is re-rendered.
Line model: lines end at ``\\r\\n``, ``\\r`` or ``\\n`` — the same breaks markdown-it normalises.
A leading UTF-8 byte-order mark is not part of the first line's markdown. Code lines (fenced or
indented blocks, and so a tab-indented list) are kept apart from the facts. `core.markdown` is the
interface the rest of wolfmem uses (a cache of recent parses, and parses from an earlier text's,
`core.reparse`); this module is the parser both build on.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from wolfmem.core.markers import without_markers

_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
# The characters besides \r and \n at which `str.splitlines` also breaks a line.
_OTHER_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_TASK_BOX_RE = re.compile(r"^\[[ xX]\](?:\s+|$)")
_ROW_PREFIX_RE = re.compile(r"^[\s>]*")
BOM = "\ufeff"
# A code line with no letter or digit ("}", "fi;", "---") says nothing a search could ask for.
_WORDY = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class Fact:
    """One fact: a content line of a list item, paragraph, blockquote or table body row (or, in
    ``ParsedFile.code``, one line of a code block)."""

    text: str  # markers (list, task box, `>`) removed, stripped; a table row keeps its pipes
    line: int  # 1-based
    section: str  # heading of the enclosing `##`, '' before the first one (or after a `#`)


@dataclass(frozen=True)
class Section:
    """A top-level ATX ``##`` heading and its lines, up to the next ``#``/``##`` or EOF."""

    heading: str  # as written after the `##`, stripped; inline markup kept
    line: int  # 1-based line of the heading
    end: int  # 1-based last line, trailing blank lines included


@dataclass(frozen=True)
class ParsedFile:
    """What a markdown file says, addressed by 1-based line numbers."""

    title: str | None  # the first top-level ATX `#` heading
    sections: tuple[Section, ...]
    facts: tuple[Fact, ...]
    code: tuple[Fact, ...] = ()  # the worded lines of code blocks, stripped: searchable, never edited
    title_line: int = 0  # 1-based line of the title's heading, 0 without one

    def searchable(self) -> list[Fact]:
        """Every line the index holds, in line order: the facts and the code lines."""
        if not self.code:
            return list(self.facts)
        return sorted((*self.facts, *self.code), key=lambda fact: fact.line)


@functools.cache
def _md() -> MarkdownIt:
    """The shared block-level parser (built on first use, never at import)."""
    # Inline parsing is disabled: we only need block structure and each block's raw
    # inline source, and skipping it makes large files several times faster.
    md = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    return md.disable(["inline", "text_join"])


def lines_of(text: str) -> list[str]:
    """Split text into lines, each keeping its own line ending (only ``\\r\\n``, ``\\r`` and ``\\n`` break one).

    `str.splitlines` breaks at the same places, five times faster than the pattern, when the text holds
    none of the other characters it also breaks at (a busy 500 kB file is split on every sync).
    """
    if not any(mark in text for mark in _OTHER_BREAKS):
        return text.splitlines(keepends=True)
    return _LINE_RE.findall(text)


def scan_whole(text: str) -> tuple[ParsedFile, int]:
    """Parse text; also return the last line of its front matter (0 if none)."""
    # git's conflict markers are no markdown: emptied, they are neither facts nor (`=======`) headings.
    text = without_markers(text)
    # The mark sits inside line 1, so dropping it leaves every line number as it was.
    tokens = _md().parse(text[1:] if text.startswith(BOM) else text)
    lines = lines_of(text)
    title: str | None = None
    title_line = 0
    front_end = 0
    in_body = False
    heads: list[tuple[int, str, bool]] = []  # (line, text, is_section) of top-level # and ##
    facts: list[tuple[int, str]] = []
    code: list[tuple[int, str]] = []
    for i, tok in enumerate(tokens):
        in_body = tok.type == "tbody_open" or (in_body and tok.type != "tbody_close")
        if tok.map is None:
            continue
        start, stop = tok.map
        if tok.type == "front_matter":
            front_end = stop
        elif tok.type == "heading_open" and tok.level == 0 and tok.markup in ("#", "##"):
            content = tokens[i + 1].content.strip()
            heads.append((start + 1, content, tok.markup == "##"))
            if tok.markup == "#" and title is None:
                title, title_line = content, start + 1
        elif tok.type == "inline" and tokens[i - 1].type == "paragraph_open":
            # A list item's task box is markup, not part of the fact.
            in_item = i >= 2 and tokens[i - 2].type == "list_item_open"
            facts.extend(_paragraph_facts(tok.content, start, stop, in_item))
        elif tok.type == "tr_open" and in_body and start < len(lines):
            # Body rows only: the header row names columns and the separator is markup.
            row = _ROW_PREFIX_RE.sub("", lines[start].removeprefix(BOM)).strip()
            if row:
                facts.append((start + 1, row))
        elif tok.type in ("fence", "code_block"):
            # A fence's content starts below its opening line; an indented block's on its first.
            first = start + 1 if tok.type == "fence" else start
            code.extend(_code_lines(tok.content, first, stop))
    return _assemble(title, title_line, heads, facts, len(lines), code), front_end


def _code_lines(content: str, first: int, stop: int) -> list[tuple[int, str]]:
    """One (line, text) per worded line of a code block's content (its container's indent removed)."""
    out = []
    for offset, raw in enumerate(content.split("\n")):
        text = raw.strip()
        if first + offset < stop and _WORDY.search(text):
            out.append((first + offset + 1, text))
    return out


def _paragraph_facts(
    content: str, start: int, stop: int, in_item: bool
) -> list[tuple[int, str]]:
    """One (line, text) per non-empty source line of a paragraph's raw inline content."""
    out = []
    for offset, raw in enumerate(content.split("\n")):
        line = min(start + offset, stop - 1) + 1  # clamp: never point past the paragraph
        text = raw.strip()
        if offset == 0 and in_item:
            text = _TASK_BOX_RE.sub("", text)
        if text:
            out.append((line, text))
    return out


def _assemble(
    title: str | None,
    title_line: int,
    heads: list[tuple[int, str, bool]],
    facts: list[tuple[int, str]],
    n_lines: int,
    code: list[tuple[int, str]],
) -> ParsedFile:
    """Build sections from top-level headings and attach each fact and code line to its ``##``."""
    sections = []
    for k, (line, heading, is_section) in enumerate(heads):
        if is_section:
            # A `#` also closes a section: what follows it is not under the old `##`.
            end = heads[k + 1][0] - 1 if k + 1 < len(heads) else n_lines
            sections.append(Section(heading, line, max(end, line)))
    return ParsedFile(title, tuple(sections), _placed(heads, facts), _placed(heads, code), title_line)


def _placed(heads: list[tuple[int, str, bool]], lines: list[tuple[int, str]]) -> tuple[Fact, ...]:
    """Each (line, text) as a Fact in the ``##`` section above it."""
    out: list[Fact] = []
    k, current = 0, ""
    for line, text in sorted(lines, key=lambda f: f[0]):
        while k < len(heads) and heads[k][0] < line:
            current = heads[k][1] if heads[k][2] else ""
            k += 1
        out.append(Fact(text, line, current))
    return tuple(out)


# A line that starts a top-level list item (core/reparse.py restarts a parse at one).
TOP_BULLET = re.compile(r"[-*+][ \t]")
