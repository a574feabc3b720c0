"""Unit symbols, whose case carries meaning: 10MB is ten megabytes, 10Mb ten megabits (pure).

Facts are compared without case ("Alice likes tea" is "alice likes tea"), except a unit symbol
after a number: the letters written against it (`10MB`, `5ms`, `4K`), or a unit word of at most
three letters after a space (`10 MB`, `5 ms`). MB/Mb, KB/Kb, GB/Gb, ms/Ms, mW/MW stay apart
that way. Ordinals and clock times (`3rd`, `9AM`) fold like any other word.
"""

from __future__ import annotations

import re

from wolfmem.core.wording import UNITS

_SYMBOL_CHARS = 3  # a unit word after a space longer than this is spelled out ("10 Days"), not a symbol
_FOLDED = frozenset({"st", "nd", "rd", "th", "am", "pm"})
_AFTER_NUMBER = re.compile(r"(?<=\d)(?:(?P<glued>[^\W\d_]+)|[^\S\n](?P<word>[^\W\d_]+)\b)")


def _symbols(text: str) -> list[re.Match[str]]:
    """The unit symbols of `text` whose case is kept, as matches of their group."""
    return [match for match in _AFTER_NUMBER.finditer(text) if _is_symbol(match.group("glued"), match.group("word"))]


def _is_symbol(glued: str | None, word: str | None) -> bool:
    if glued is not None:
        return glued.casefold() not in _FOLDED
    return word is not None and len(word) <= _SYMBOL_CHARS and word.casefold() in UNITS


def unit_symbols(text: str) -> tuple[str, ...]:
    """The unit symbols after numbers in `text`, in order and as written: `("MB", "ms")`."""
    return tuple(match.group("glued") or match.group("word") for match in _symbols(text))


def casefold_but_units(text: str) -> str:
    """`text` casefolded, except the unit symbols after its numbers."""
    pieces, end = [], 0
    for match in _symbols(text):
        group = "glued" if match.group("glued") is not None else "word"
        start = match.start(group)
        pieces += [text[end:start].casefold(), match.group(group)]
        end = match.end(group)
    pieces.append(text[end:].casefold())
    return "".join(pieces)
