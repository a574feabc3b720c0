"""What a fact is: one self-contained sentence, validated and normalised (pure; no I/O).

`clean_fact` refuses what is not one sentence of plain text (several sentences, markdown structure,
control characters, secrets); `normalise` and `fact_key` give the exact-duplicate key. Comparing two
facts is `core.compare`; which section a fact names is `core.entities`.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

from wolfmem.core import credentials
from wolfmem.core.units import casefold_but_units
from wolfmem.errors import InvalidFact, SecretRefused
from wolfmem.limits import MAX_FACT_CHARS

LIST_MARKER = re.compile(r"^(?:[-*+]|\d{1,3}[.)])(?:\s+(?:\[[ xX]\](?:\s+|$))?|$)")
_HEADING = re.compile(r"^#{1,6}(?:\s|$)")
_TABLE_ROW = re.compile(r"^\|.*\|$")
CANONICAL_CHARS = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
})

# --- sentence splitting --------------------------------------------------------

# A terminator, any closing quotes/brackets, whitespace, then the next sentence.
_BOUNDARY = re.compile(
    r"(?P<end>[.!?\u2026]+)[\"')\]\u201d\u2019]*\s+[\"'(\[\u201c\u2018]*(?P<next>\w)"
)
# CJK full stops end a sentence with no space after them ("李明是经理。他很好。").
_CJK_BOUNDARY = re.compile(r"[\u3002\uff01\uff1f]+[\u300d\u300f\u201d\uff09]*\s*\w")
_ABBREVIATIONS = frozenset(
    """e.g i.e etc vs cf al approx incl esp resp viz dr mr mrs ms mx prof sr jr st mt
    inc ltd co corp dept est fig vol ch sec no ave blvd gen gov rev hon ph.d aka
    jan feb apr jun jul aug sep sept oct nov dec a.m p.m""".split()
)
# "U.S.A", "i.e" — letters only, so a version like "2.0" still ends a sentence.
_DOTTED_ACRONYM = re.compile(r"^(?:[^\W\d_]\.)+[^\W\d_]$")


def _is_sentence_break(fact: str, match: re.Match[str]) -> bool:
    """Whether a terminator followed by more text really ends a sentence."""
    end = match.group("end")
    if "\u2026" in end or ".." in end:
        return False  # ellipses trail off mid-thought
    if not (match.group("next").isupper() or match.group("next").isdigit()):
        return False
    if end != ".":
        return True
    before = fact[: match.start()].split()
    word = before[-1].lstrip("\"'([").lower() if before else ""
    is_initial = len(word) == 1 and word.isalpha()
    return not (is_initial or word in _ABBREVIATIONS or _DOTTED_ACRONYM.match(word))


def count_sentences(fact: str) -> int:
    """How many sentences `fact` holds, ignoring abbreviations, initials, versions and URLs."""
    breaks = sum(_is_sentence_break(fact, m) for m in _BOUNDARY.finditer(fact))
    return 1 + breaks + len(_CJK_BOUNDARY.findall(fact))


# --- validation ----------------------------------------------------------------


# Every character str.splitlines() breaks on: an editor may show any of them as a new line.
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def has_lone_surrogate(value: str) -> bool:
    """Whether `value` cannot be encoded as UTF-8 (JSON's "\\ud800" and undecodable argv bytes)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def text_problem(value: str) -> str | None:
    """Why `value` cannot be written to a UTF-8 markdown line, or None when it can."""
    if has_lone_surrogate(value):
        return "is not valid Unicode (it holds a lone surrogate such as \\ud800)"
    if any(ch in _LINE_BREAKS for ch in value):
        return "spans several lines"
    control = next(
        (ch for ch in value if unicodedata.category(ch) == "Cc" and ch != "\t"), None
    )
    if control is not None:
        return f"holds the control character U+{ord(control):04X}"
    # Bidi overrides and isolates can make the saved line read differently from what it stores.
    bidi = next((ch for ch in value if "\u202a" <= ch <= "\u202e" or "\u2066" <= ch <= "\u2069"), None)
    if bidi is not None:
        return f"holds the invisible text-direction control U+{ord(bidi):04X}"
    return None


def is_blank(value: str) -> bool:
    """Whether `value` has nothing visible: only whitespace and zero-width characters."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in value)


def clean_fact(raw: str) -> str:
    """Return `raw` as one clean sentence, or raise InvalidFact / SecretRefused saying why."""
    # NFC: a fact typed on macOS (decomposed "é") and on Linux is the same fact, byte for byte.
    fact = LIST_MARKER.sub("", unicodedata.normalize("NFC", raw).strip(), count=1).strip()
    if is_blank(fact):
        raise InvalidFact("fact is empty — pass one sentence such as 'Sarah prefers tea'")
    if not any(unicodedata.category(ch)[0] in "LN" for ch in fact):
        raise InvalidFact(f"fact {fact!r} has no words, only marks — pass one sentence such as 'Sarah prefers tea'")
    problem = text_problem(fact)
    if problem == "spans several lines":
        raise InvalidFact(
            "fact spans several lines — save each line as its own fact, one sentence each"
        )
    if problem is not None:
        raise InvalidFact(f"fact {problem} — pass plain text, one sentence")
    fact = fact.replace("\t", " ")
    if len(fact) > MAX_FACT_CHARS:
        raise InvalidFact(
            f"fact is {len(fact)} characters; the limit is {MAX_FACT_CHARS} — "
            "shorten it or split it into several facts"
        )
    if _HEADING.match(fact):
        raise InvalidFact(
            "fact looks like a markdown heading — pass the sentence without '#' "
            "and name the section as the topic instead"
        )
    if "```" in fact or "~~~" in fact:
        raise InvalidFact(
            "fact contains a code fence — describe the code in one sentence, "
            "or use `inline code` for a short snippet"
        )
    if _TABLE_ROW.match(fact):
        raise InvalidFact("fact looks like a table row — write it as a plain sentence")
    sentences = count_sentences(fact)
    if sentences > 1:
        raise InvalidFact(
            f"fact has {sentences} sentences — save each sentence as its own fact"
        )
    kind = credentials.find_secret(fact)
    if kind is not None:
        raise SecretRefused(kind)
    return fact


# Subjects that point at someone or something named elsewhere: a section can name it, nothing else can.
_PRONOUNS = frozenset({"he", "she", "it", "they", "him", "her", "them", "his", "hers", "its", "their", "theirs"})
_WORD = re.compile(r"\w+")
FRAGMENT_CHARS = 40  # a lone word up to this long ("a", "Postgres.") is a fragment
# Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Myanmar): one "word" is a sentence.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1000-\u109f]")


def context_problem(fact: str, topic: str | None) -> str | None:
    """Why `fact` cannot stand alone, or None. The rule: not one lone word (in scripts that space
    words), and a sentence that opens with a bare pronoun ("He likes it.") needs a topic, the section
    that names who or what it means.
    """
    words = _WORD.findall(fact)
    # No words at all: the markdown checks say why. A long one-word run is not a slip of a model's
    # (a pasted token, a test of the length limit): the length and secret checks deal with it.
    if len(words) == 1 and len(fact) <= FRAGMENT_CHARS and not _UNSPACED.search(fact):
        return (f"fact {fact!r} is a fragment, not a sentence — write one sentence that names its subject, "
                "e.g. 'Sarah Chen prefers tea'")
    if topic is None and words and words[0].lower() in _PRONOUNS:
        return (f"fact starts with {words[0]!r}, and nothing says who or what that is — name the subject "
                "('Sarah Chen likes it'), or pass the topic it is about ('Sarah Chen') so it is filed there")
    return None


def normalise(fact: str) -> str:
    """Exact-duplicate key: casefolded but for unit symbols (10MB is not 10Mb), spacing, quotes and dashes
    unified, end punctuation gone."""
    # NFKC folds decomposed accents and full-width forms ("Ｃａｆé" is "Café").
    fact = unicodedata.normalize("NFKC", fact)
    fact = LIST_MARKER.sub("", fact.translate(CANONICAL_CHARS).strip(), count=1)
    return casefold_but_units(" ".join(fact.split())).rstrip(".!?;:, ")


# A save keys every fact of its file to look for a duplicate, and again to index it; remembering the
# keys of recent lines (the five curated files of a 100k-fact vault hold 10k) means only the lines
# that changed are keyed. An entry is ~300 bytes, so the bound is ~5 MB.
@functools.lru_cache(maxsize=16384)
def fact_key(text: str) -> str:
    """The exact-duplicate key of a fact: a digest of its normalised text."""
    return hashlib.sha1(normalise(text).encode()).hexdigest()[:16]
