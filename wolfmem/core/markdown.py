"""File text ⇄ sections and facts: the parse of vault markdown (`core.blocks`, remembered and redone
only around a change, `core.reparse`) and the line helpers around it.

We never re-render markdown. markdown-it-py only tells us *where* things are
(token ``.map`` line ranges); every edit splices raw lines into the original text,
so front matter, wikilinks and syntax we do not understand survive byte for byte.

Line model: lines end at ``\\r\\n``, ``\\r`` or ``\\n`` — the same breaks markdown-it
normalises — so line numbers agree with ``str.splitlines()`` for ``\\n``/``\\r\\n`` files.

Text as editors write it: a leading UTF-8 byte-order mark (Windows Notepad) is not part of the
first line's markdown, so ``\\ufeff# People`` is the title. Code lines (fenced or indented blocks,
and so a tab-indented list, which CommonMark reads as code) are kept apart from the facts: they are
searchable (``ParsedFile.code``) but never facts a save, a correction or curation may rewrite.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import OrderedDict

from wolfmem.core import blocks, reparse
from wolfmem.core.blocks import BOM as BOM
from wolfmem.core.blocks import Fact as Fact
from wolfmem.core.blocks import ParsedFile as ParsedFile
from wolfmem.core.blocks import Section as Section
from wolfmem.core.blocks import lines_of as lines_of
from wolfmem.core.blocks import scan_whole as scan_whole

NEWLINE_RE = re.compile(r"\r\n|\r|\n")
_ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def split_lines(text: str) -> list[str]:
    """Lines as markdown and line refs count them: only ``\\r\\n``, ``\\r`` and ``\\n`` break a line.

    ``str.splitlines()`` also breaks on form feeds, U+2028 and friends, which would shift every
    later line number against the parser's.
    """
    return lines_of(text)


def as_bullet_text(text: str) -> str:
    """``text`` as it must follow ``- `` to read back as itself, escaping a leading markdown character."""
    facts = parse(f"- {text}").facts
    if len(facts) == 1 and facts[0].text == text:
        return text
    escaped = "\\" + text
    facts = parse(f"- {escaped}").facts
    if text[:1] in _ESCAPABLE and len(facts) == 1 and facts[0].text == escaped:
        return escaped  # "## x" or "```" in an episode stays a searchable line, not structure
    return text


def newline_of(text: str) -> str:
    """The file's line-ending style: its first line break, or ``\\n`` if it has none."""
    match = NEWLINE_RE.search(text)
    return match.group() if match else "\n"


def parse(text: str) -> ParsedFile:
    """Parse markdown text into its title, ``##`` sections and facts; never raises."""
    return scan(text)[0]


_MIN_CACHED_CHARS, _CACHED_CHARS = 256, 1_000_000
_RECENT: OrderedDict[str, tuple[ParsedFile, int]] = OrderedDict()
_RECENT_SIZE = 16
# A parse holds ~3× its text in Fact objects; the texts remembered are bounded in total too, so a
# sync through many big files leaves a few MB behind at most (the daemon's memory). Two curated files
# at the size cap (512 kB) fit: two such files changing in turn would otherwise evict each other's
# base and be parsed whole on every change (core/reparse.py).
_RECENT_CHARS = 2_000_000
_RECENT_GUARD = threading.Lock()


def scan(text: str) -> tuple[ParsedFile, int]:
    """The parse of text and the line where its front matter ends, remembered for recent texts.

    A save parses the same file text several times over (to route, to insert, to check the insert,
    to index it); results are immutable, so the recent few are shared.
    """
    if not _MIN_CACHED_CHARS <= len(text) <= _CACHED_CHARS:
        return blocks.scan_whole(text)  # tiny texts are cheap, and must not evict the files
    with _RECENT_GUARD:
        if text in _RECENT:
            _RECENT.move_to_end(text)
            return _RECENT[text]
        earlier = _nearest(text) if len(text) >= _REPARSE_CHARS else None
    result = reparse.reparse(*earlier, text) if earlier is not None else None
    if result is None:
        result = blocks.scan_whole(text)
    elif earlier is not None:
        # Its successor takes its place: the earlier text, if asked again, is parsed from this one, and
        # a file changing often (a script appending every 20 ms) keeps one text here, not the bases of
        # other files (two files at the size cap changing in turn evicted each other's base).
        forget(earlier[0])
    _remember(text, result)
    return result


# A text this long is parsed from a remembered text sharing a quarter of it at its start or end (the
# same file a moment before, as an appender or a save left it; one side of a small change always
# holds half of the rest), not whole: see core/reparse.py.
_REPARSE_CHARS = 4_096


def _nearest(text: str) -> tuple[str, tuple[ParsedFile, int]] | None:
    """The most recent remembered text sharing a quarter of text's length at its start or end (under the guard)."""
    quarter = len(text) // 4
    head, tail = text[:quarter], text[-quarter:]
    for earlier in reversed(_RECENT):
        if earlier.startswith(head) or earlier.endswith(tail):
            return earlier, _RECENT[earlier]
    return None


def _remember(text: str, result: tuple[ParsedFile, int]) -> None:
    if not _MIN_CACHED_CHARS <= len(text) <= _CACHED_CHARS:
        return
    with _RECENT_GUARD:
        _RECENT[text] = result
        _RECENT.move_to_end(text)
        while len(_RECENT) > _RECENT_SIZE or sum(map(len, _RECENT)) > _RECENT_CHARS:
            _RECENT.popitem(last=False)


def forget(*texts: str) -> None:
    with _RECENT_GUARD:
        for text in texts:
            _RECENT.pop(text, None)


def heading_key(heading: str) -> str:
    """Normalise a heading for matching: NFC, casefold and collapse whitespace."""
    return " ".join(unicodedata.normalize("NFC", heading).split()).casefold()


def find_section(parsed: ParsedFile, heading: str) -> Section | None:
    """The first section whose heading matches ``heading`` by heading_key, or None."""
    key = heading_key(heading)
    return next((s for s in parsed.sections if heading_key(s.heading) == key), None)


def content_lines(text: str) -> list[str]:
    """The non-blank lines of text, right-stripped: what a snapshot and hand-edit check compare."""
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def content_changes(old_text: str, new_text: str) -> tuple[set[str], set[str]]:
    """The content lines only the new text holds, and those only the old one holds (as sets).

    Worked out from the lines the texts do not share at their start and end: a shared line is in both
    sets alike, so it matters only when a changed line's words are a shared one's, and a changed line
    found nowhere in the other text is none. Only then are both texts read whole. A save into a
    2,000-line file changes one line (issue 28: the whole-file sets were a tenth of such a save).
    """
    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    prefix, suffix = reparse.common_ends(old_lines, new_lines)
    old = {line.rstrip() for line in old_lines[prefix:len(old_lines) - suffix] if line.strip()}
    new = {line.rstrip() for line in new_lines[prefix:len(new_lines) - suffix] if line.strip()}
    added, removed = new - old, old - new
    if any(line in old_text for line in added) or any(line in new_text for line in removed):
        old, new = set(content_lines(old_text)), set(content_lines(new_text))
        return new - old, old - new
    return added, removed


