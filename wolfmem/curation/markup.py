"""Markup curation never adds: what changes how a fact reads, hides it, or sends vault text off the machine (pure).

Each rule looks only at lines the rewrite brings in; a line already in the old file (a person
wrote it that way) is left alone:

* strikethrough (`~~`): a fact crossed out reads as its opposite;
* a task box (`- [ ]`, `- [x]`) added, ticked or cleared: the fact's text stays, its tick says done or not;
* images (`![…](…)`): an editor that renders one fetches its URL, and the URL can carry vault text;
* a URL or address that neither the old file nor the evidence since the last run holds;
* a link to anything but a web page (a local file, `file:`): it points the reader elsewhere;
* raw HTML, HTML comments: hidden text, or markup an editor acts on;
* zero-width and other invisible format characters inside a line;
* a setext heading (a line of `===` or `---` under text): it turns a fact into a heading;
* front matter added or changed (`publish: true` tells a publishing tool to post the file).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_STRIKE = re.compile(r"~~")
_TASK = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+\[[ xX]\](?:\s|$)")
_IMAGE = re.compile(r"!\[[^\]]*\]\s*[\(\[]")
_URL = re.compile(r"(?i)\b(?:[a-z][a-z0-9+.-]{1,20}://|www\.|mailto:|file:|data:)[^\s<>)\]]*")
_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]+)|^\s*\[[^\]]+\]:\s*<?(\S+?)>?\s*$")
_WEB = re.compile(r"(?i)^(?:https?://|mailto:|#)")
_HTML = re.compile(r"<!--|<\s*/?\s*[A-Za-z][A-Za-z0-9-]*(?:\s[^>]*)?/?\s*>")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_FRONT_MATTER = re.compile(r"^\ufeff?---[ \t]*\r?\n.*?\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)
MAX_REASONS = 5  # reasons listed for one refused rewrite (markup's and the change check's)


def _front(text: str) -> str:
    match = _FRONT_MATTER.match(text)
    return match.group().replace("\r\n", "\n").strip() if match else ""


def added_markup(old_text: str, text: str, evidence: Iterable[str] = ()) -> list[str]:
    """Why the rewrite's new lines carry markup curation never adds (empty: none); see the module docstring."""
    reasons = []
    if _front(text) != _front(old_text):
        reasons.append("adds or changes the front matter (`---` block); curation never does")
    old_lines = {line.rstrip() for line in old_text.splitlines()}
    known = old_text + "\n" + "\n".join(evidence)
    lines = text.splitlines()
    body_start = len(_front(text).splitlines())
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip()
        if number <= body_start or not line.strip() or line in old_lines:
            continue
        why = _line_markup(line, known)
        if not why and _SETEXT.match(line) and number > 1 and _is_text(lines[number - 2]):
            why = "a setext heading (a line of '=' or '-' under text), which turns a fact into a heading"
        if why:
            reasons.append(f"line {number} adds {why}; curation never adds it")
    return reasons[:MAX_REASONS]


def _is_text(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(("#", "- ", "* ", "+ ", ">", "|", "```", "~~~"))


def _line_markup(line: str, known: str) -> str:
    """The first kind of markup curation never adds that `line` holds ('' if none)."""
    body = line.lstrip("\ufeff")
    if any(unicodedata.category(c) == "Cf" for c in body):
        return "an invisible format character (zero-width or similar)"
    if _STRIKE.search(line):
        return "strikethrough ('~~'), which crosses a fact out"
    if _TASK.match(line):
        return "a task box ('[ ]' / '[x]'), whose tick says done or not done"
    if _IMAGE.search(line):
        return "an image, whose address an editor fetches"
    # A tag needs a ">" after it: search only up to the last one, or each "<" of a line with none would be
    # read to the line's end (a 64 kB reply line of "<a <a …" took minutes).
    if "<!--" in line or _HTML.search(line, 0, line.rfind(">") + 1):
        return "HTML or an HTML comment"
    for match in _LINK_TARGET.finditer(line):
        target = match.group(1) or match.group(2) or ""
        if not _WEB.match(target):
            return f"a link to {target[:60]!r}, which is not a web page"
    for match in _URL.finditer(line):
        if match.group().rstrip(".,;:") not in known:
            return "an address that neither the file nor anything said since the last run holds"
    return ""
