"""Every rule about text wolfmem did not write itself: injections, behavioural rules, invisible and unsafe characters.

Files, episodes and model replies are data, never instructions. The same rules decide what
memory_save and memory_log refuse, what curation and the audit may write, what the memory map
shows, and how untrusted text is quoted in logs and reports that agents later search.
"""

from __future__ import annotations

import re
import unicodedata

from wolfmem.core.credentials import find_secret

MAX_QUOTE_CHARS = 240
WITHHELD = "[heading withheld: looks like an instruction]"
WITHHELD_SECRET = "[withheld: looks like a secret]"
WITHHELD_INSTRUCTION = "[withheld: reads like an instruction to the agent]"

# Bidi embeddings/overrides/isolates reorder what a person sees ("Trojan source"); line and
# paragraph separators split a line for some readers and not for the markdown parser.
_UNSAFE_CHARS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")
# Behavioural rules addressed to the agent, as opposed to facts about people and preferences
# ("Prefers answers in French" is a fact; "Always answer in French" is a rule).
# Verbs that address the reading model. Workflow verbs (run, use, deploy…) are left out on purpose:
# "Always run tests before pushing" is a preference worth keeping, not an injection.
_AGENT_VERBS = r"obey|answer|respond|reply|comply|pretend|disregard|reveal|ignore|forget"
_RULES = tuple(
    re.compile(p)
    for p in (
        rf"^(always|never|do not|don't|must|you must|you should|make sure to|be sure to)\s+({_AGENT_VERBS})\b",
        rf"^({_AGENT_VERBS})\s+(only\s+)?(in|with|to|as|all|every|any|whatever|the user)\b",
        r"\byou\s+(must|shall|are to|will always|will never|may not|must not)\b",
        (
            r"\b(the\s+)?(assistant|agent|ai|model|llm|chatbot|bot)\s+"
            r"(must|should|shall|has to|needs to|is to|may not|must not|will always|will never)\b"
        ),
        r"^obey\b|\b(always|unconditionally)\s+obey\b",
        r"\bobey\s+(the user|any|all|every|whatever|his|her|their)\b",
        r"\b(previous|prior|earlier|above)\s+(instructions|rules|prompts?)\b",
    )
)

_LINK_RE = re.compile(r"!?\[([^\[\]]*)\]\([^()]*\)")
_MARKUP_RE = re.compile(r"\[\[|\]\]|[<>`*_]")
_MAX_HEADING = 80
# Phrases that address the reading model rather than describe a topic. Role labels
# count only at the start or after punctuation, so "Operating system: Linux" passes.
_INSTRUCTION_RES = tuple(
    re.compile(p)
    for p in (
        r"\bignore\s+(all|any|previous|prior|earlier|above|the\s+(above|previous))\b",
        r"\bdisregard\b",
        r"\bforget\s+(all|everything|previous|prior|your)\b",
        r"\byou\s+are\s+now\b",
        r"(^|[^\w\s])\s*(system|assistant|developer)\s*:",
        r"<\|",
        r"\[/?inst\]",
        r"<</?sys>>",
    )
)


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
    for candidate in (" ".join(visible.split()).casefold(), plain.casefold()):
        if any(r.search(candidate) for r in _INSTRUCTION_RES):
            return WITHHELD
    if len(plain) > _MAX_HEADING:
        plain = plain[: _MAX_HEADING - 1].rstrip() + "…"
    return plain


def looks_like_instruction(text: str) -> bool:
    """Whether text addresses the agent (prompt injection, a behavioural rule) rather than stating a fact."""
    return neutralise_heading(text) == WITHHELD or _is_rule(text)


def unsafe_characters(line: str) -> str:
    """The code points of control, bidi and separator characters in a line ('' when none)."""
    bad = [c for c in line if c in _UNSAFE_CHARS or (unicodedata.category(c) == "Cc" and c != "\t")]
    return ", ".join(sorted({f"U+{ord(c):04X}" for c in bad}))


def _is_rule(line: str) -> bool:
    """Whether a line reads as a behavioural rule for the agent rather than a fact."""
    plain = re.sub(r"^\s*(?:#+|[-*+]|\d+[.)])\s+", "", line).strip().casefold().replace("’", "'")
    return any(rule.search(plain) for rule in _RULES)


def quote_untrusted(text: str, cap: int = MAX_QUOTE_CHARS) -> str:
    """Model or file text made safe to write where agents read it: one line, capped, no secret, no instruction."""
    flat = " ".join(str(text).split())
    if find_secret(flat):
        return WITHHELD_SECRET
    if looks_like_instruction(flat):
        return WITHHELD_INSTRUCTION
    return flat if len(flat) <= cap else flat[: cap - 1] + "…"
