"""Which section a fact belongs under: the entity words of a `##` heading, wikilinks and aliases included (pure)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from wolfmem.core import tokens
from wolfmem.core.facts import CANONICAL_CHARS

_CLOSERS = {"(": ")", "[": "]"}
# Obsidian links name the entity: "[[people/Dave Smith#Role|Dave]]" reads "Dave Smith Dave".
_WIKILINK = re.compile(r"!?\[\[([^\[\]|#]*)(?:#[^\[\]|]*)?(?:\|([^\[\]]*))?\]\]")
_MARKDOWN_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^()]*\)")
_HEADING_SEPARATOR = re.compile(r"(?<!\s)\s+[-\u2013\u2014|]\s+|:\s")  # a run of spaces read once, from its start
_ENTITY_WORD = re.compile(r"\w[\w.+#'-]*\w|\w[+#]*")
_GENERIC_HEADING_WORDS = frozenset(
    """notes note unfiled general misc miscellaneous other others inbox todo todos
    ideas facts fact info information preferences prefs stuff project projects
    people person topics topic context background details overview summary log
    journal reference references links""".split()
)


def _link_words(link: re.Match[str]) -> str:
    """A wikilink's note name (no folder, no .md) and its alias, as plain words."""
    target = link.group(1).rsplit("/", 1)[-1].removesuffix(".md")
    return f" {target} {link.group(2) or ''} "


def _entity_words(heading: str) -> list[str]:
    """Distinctive words naming a heading's entity ('Project Atlas — x' -> ['Atlas'])."""
    heading = unicodedata.normalize("NFC", heading)  # a decomposed "Zoë" heading names the composed "Zoë"
    name = _MARKDOWN_LINK.sub(r"\1", _WIKILINK.sub(_link_words, heading.lstrip("#").translate(CANONICAL_CHARS)))
    name = _without_qualifiers(name)
    name = _HEADING_SEPARATOR.split(name, maxsplit=1)[0]
    return [
        word for word in (w.rstrip(".") for w in _ENTITY_WORD.findall(name))
        if len(word) >= 2
        and word.lower() not in _GENERIC_HEADING_WORDS
        and word.lower() not in tokens.STOP_WORDS
    ]


def _without_qualifiers(name: str) -> str:
    r"""`name` with each "(…)" and "[…]" (from an opener to the next closer of its kind) read as a space.

    What `re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", name)` does, in one pass: that pattern read from every
    opener to the end when no closer followed, so a heading of "[[[[…" was quadratic in its length.
    """
    out: list[str] = []
    following = {")": -2, "]": -2}  # the next index of each closer at or after the cursor (-2: not looked up)
    i = 0
    while i < len(name):
        closer = _CLOSERS.get(name[i])
        if closer is not None:
            if -1 < following[closer] < i or following[closer] == -2:
                following[closer] = name.find(closer, i)
            if following[closer] != -1:
                out.append(" ")
                i = following[closer] + 1
                continue
        out.append(name[i])
        i += 1
    return "".join(out)


def mentions_entity(heading: str, fact: str) -> bool:
    """Whether `fact` names, as a whole word, the entity that `heading` is about."""
    fact = unicodedata.normalize("NFC", fact)
    return any(
        re.search(rf"(?<!\w){re.escape(word)}(?!\w)", fact, re.IGNORECASE)
        for word in _entity_words(heading)
    )


def entity_key(heading: str) -> frozenset[str]:
    """The casefolded words naming a heading's entity: 'Sarah (Manager)' and '[[Sarah]]' give {'sarah'}."""
    return frozenset(word.casefold() for word in _entity_words(heading))


def entity_heading(headings: Sequence[str], name: str) -> str | None:
    """The heading that names the entity `name` does, or None when none or several might.

    The words are those routing looks for (`mentions_entity`): every one of `name`'s must be one
    of the heading's, so "Sarah" finds "Sarah (Manager)" and "Dave" finds "[[Dave Smith]]", but
    "Sarah Connor" does not find "Sarah (Manager)". A heading naming exactly those words wins
    over one naming more ("Dave" over "Dave Smith"); two candidates left is None, since a guess
    between two people is worse than a new section.
    """
    wanted = entity_key(name)
    if not wanted:
        return None
    named = [heading for heading in headings if wanted <= entity_key(heading)]
    exact = [heading for heading in named if entity_key(heading) == wanted]
    candidates = exact or named
    return candidates[0] if len(candidates) == 1 else None
