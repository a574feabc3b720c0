"""Word tokens and Porter2 stems shared by the search index and fact dedup."""

from __future__ import annotations

import re
import unicodedata

from whoosh.lang.snowball.english import EnglishStemmer

# Negations are stop words for search, but dedup reads them from `tokens()`
# itself (see facts.py), so dropping them here never hides a "not".
STOP_WORDS: frozenset[str] = frozenset(
    """
    a an the and or but if then else so than that this these those there here
    i me my mine myself we us our ours ourselves you your yours yourself
    he him his himself she her hers herself it its itself they them their theirs
    is am are was were be been being do does did doing done have has had having
    will would shall should can could may might must
    of in on at to for from by with about as into onto over under up down out off
    what when where who whom whose which why how
    all any both each few more most other some such only own same just also very too
    not no nor never
    """.split()
)

# A word, optionally joined to more word characters by '.', '-' or an apostrophe,
# so "3.11", "v1.2.3", "node.js", "gpt-4" and "don't" stay whole.
_WORD = re.compile(r"\w+(?:[.\-']\w+)*")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def _split_token(raw: str) -> list[str]:
    """Split one regex match into the tokens a reader would expect."""
    word = raw[:-2] if raw.endswith("'s") else raw  # possessive: "sarah's" -> "sarah"
    if "-" in word and not any(ch.isdigit() for ch in word):
        # Hyphens bind only when a number is involved ("gpt-4", "utf-8");
        # "task-manager" should still be found by "manager".
        return [part for part in word.split("-") if part]
    return [word]


def tokens(text: str) -> list[str]:
    """Lowercase word tokens of `text`, keeping versions, decimals and dotted names whole."""
    found: list[str] = []
    # Composed (NFC) first: "Zoë" typed on macOS (decomposed) is the same word as "Zoë" typed elsewhere.
    for match in _WORD.finditer(unicodedata.normalize("NFC", text).translate(_APOSTROPHES).lower()):
        found.extend(_split_token(match.group()))
    return found


# Porter2 (Snowball English), not Whoosh's `porter.stem`: that one anchors two of Porter's step-1b
# rules at the word's start, so it never undoubles ("jogging" -> "jogg", "planned" -> "plann") nor
# adds back the e of -ate/-ize ("organized" -> "organiz"), and a question's "jogging" missed the
# fact's "jog" (on the LoCoMo and LongMemEval text 662 of Porter's word classes were split; BENCHMARKS.md).
_STEMMER = EnglishStemmer()


def stem(word: str) -> str:
    """Porter2 stem of one lowercase word, as the search index's analyzer stems it."""
    return _STEMMER.stem(word)


def content_stems(text: str) -> list[str]:
    """Stems of the tokens of `text` that are not stop words, in order."""
    return [stem(tok) for tok in tokens(text) if tok not in STOP_WORDS]
