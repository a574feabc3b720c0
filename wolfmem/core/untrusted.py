"""Every rule about text wolfmem did not write itself: injections, behavioural rules, invisible and unsafe characters.

Files, episodes and model replies are data, never instructions. The same rules decide what
memory_save and memory_log refuse, what curation and the audit may write, what the memory map
shows, and how untrusted text is quoted in logs and reports that agents later search.
"""

from __future__ import annotations

import re
import unicodedata

from wolfmem.core.credentials import find_secret
from wolfmem.core.instructions import looks_like_instruction

MAX_QUOTE_CHARS = 240
# A quote is judged by what it shows and this much past it (a key cut in two is still withheld), never by the
# whole text: a refusal quoting a 1 MB hand-written line scanned all of it to show 80 characters.
SCANNED_PAST_QUOTE = 2_000
WITHHELD = "[heading withheld: looks like an instruction]"
WITHHELD_SECRET = "[withheld: looks like a secret]"
WITHHELD_INSTRUCTION = "[withheld: reads like an instruction to the agent]"

# Bidi embeddings/overrides/isolates reorder what a person sees ("Trojan source"); line and
# paragraph separators split a line for some readers and not for the markdown parser.
_UNSAFE_CHARS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")
_LINK_RE = re.compile(r"!?\[([^\[\]]*)\]\([^()]*\)")
_MARKUP_RE = re.compile(r"\[\[|\]\]|[<>`*_]")
_MAX_HEADING = 80


def neutralise_heading(heading: str) -> str:
    """Make a heading safe to quote in an LLM prompt: plain text, short, not an instruction."""
    # Control and zero-width characters can hide words from the checks below.
    visible = "".join(
        " " if unicodedata.category(c) in ("Cc", "Zl", "Zp") else c
        for c in heading
        if unicodedata.category(c) != "Cf"
    )
    plain = _MARKUP_RE.sub("", _LINK_RE.sub(r"\1", visible))
    plain = " ".join(plain.split())
    # The map and the curator's prompt show headings as topics: a topic that is an instruction is not shown.
    if looks_like_instruction(" ".join(visible.split())) or looks_like_instruction(plain):
        return WITHHELD
    if len(plain) > _MAX_HEADING:
        plain = plain[: _MAX_HEADING - 1].rstrip() + "…"
    return plain


def unsafe_characters(line: str) -> str:
    """The code points of control, bidi and separator characters in a line ('' when none)."""
    bad = [c for c in line if c in _UNSAFE_CHARS or (unicodedata.category(c) == "Cc" and c != "\t")]
    return ", ".join(sorted({f"U+{ord(c):04X}" for c in bad}))


def quote_untrusted(text: str, cap: int = MAX_QUOTE_CHARS) -> str:
    """Model or file text made safe to write where agents read it: one line, capped, no secret, no instruction."""
    flat = " ".join(str(text).split())
    shown = flat[: cap + SCANNED_PAST_QUOTE]
    if find_secret(shown):
        return WITHHELD_SECRET
    if looks_like_instruction(shown):
        return WITHHELD_INSTRUCTION
    return flat if len(flat) <= cap else flat[: cap - 1] + "…"
