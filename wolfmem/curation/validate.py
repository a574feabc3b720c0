"""Checking a proposed rewrite of a curated file against the old one (pure; no I/O).

`validate(old, new, changes, hand_lines=..., title=...)` first repairs what is
mechanical, then rejects the rest. In order:

* repairs: a code fence wrapped round the whole file, line endings (the old
  file's style), trailing whitespace, runs of blank lines, a missing final
  newline, prompt annotations copied into the file (`[first seen …]`,
  `[hand-edited …]`), a missing `# Title`, and front matter the model dropped;
* structure: not empty, not cut off mid-line, one `# Title`, and every *new*
  fact is a `- ` bullet under a `##` section (old content is left as it was);
* no unaccounted loss: each old fact is in the new file, or a change names it:
  `merged`/`superseded` into a line that is in the new file, or `removed` with
  a reason;
* hand edits survive: every line a person wrote since wolfmem last wrote the
  file appears verbatim;
* nothing new is a secret, an instruction or behavioural rule for the agent,
  or carries control characters (NUL, bidi overrides, odd line breaks);
* the title stays, and hand-edited lines keep their order and stay facts;
* a merged/superseded line shares a content word with the line it replaces,
  so a change list cannot launder deletions into an unrelated kept line;
* size bounds: a rewrite may not balloon (a runaway model), when more than half
  of the facts go each must be explained, and junk removal alone may not take
  more than half of a file of four or more facts.

New facts the change list does not declare are not refused; they are added to
the verdict's change list as undeclared additions, so the curation log shows them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from wolfmem.core import markdown
from wolfmem.core import tokens as words
from wolfmem.core.credentials import find_secret
from wolfmem.core.facts import normalise
from wolfmem.core.markdown import content_lines
from wolfmem.core.untrusted import looks_like_instruction, unsafe_characters

# "filed" (moved to the section it names) is the offline curator's; the LLM uses the first four.
CHANGE_KINDS = ("merged", "removed", "superseded", "added", "filed")
QUOTE_CHARS = 80
MASS_DELETION_MIN_FACTS = 4
# A nightly rewrite never legitimately grows a file this much; a looping model does.
MAX_GROWTH_CHARS = 64_000

_ANNOTATION = re.compile(r"\s*\[(?:first seen \d{4}-\d{2}-\d{2}[^\]]*|hand-edited[^\]]*)\]\s*$")
_WHOLE_FENCE = re.compile(r"^\s*(```|~~~)[A-Za-z]*[ \t]*\n(.*?)\n?\1\s*$", re.DOTALL)
_FRONT_MATTER = re.compile(r"^---[ \t]*\r?\n.*?\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BULLET = re.compile(r"^\s*- \S")
_FENCE_LINE = re.compile(r"^\s*(```|~~~)")
# A last line ending like this was most likely cut off by a token limit.
_DANGLING_END = re.compile(r"(?:[,(\[{:;]|\s[-–—&]|\b(?:and|or|the|a|an|to|of|with))$", re.IGNORECASE)
@dataclass(frozen=True)
class Verdict:
    """The outcome of validating one proposed file: the repaired text, or why it was refused."""

    ok: bool
    text: str
    reasons: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """One line of text for a message, shortened."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def hand_edited_lines(old_text: str, snapshot: Iterable[str] | None, template: str = "") -> set[str]:
    """Lines of the old file wolfmem neither wrote nor accepted (its template counts as written)."""
    known = set(snapshot or ()) | set(content_lines(template))
    return {line for line in content_lines(old_text) if line not in known}


def clean_changes(raw: Any) -> list[dict[str, Any]]:
    """Coerce a model's change list into dicts with kind/old/new/reason/source; drop what is unusable."""
    out: list[dict[str, Any]] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, Mapping) or item.get("kind") not in CHANGE_KINDS:
            continue
        old = item.get("old") or []
        if isinstance(old, str):
            old = [old]
        elif not isinstance(old, list):
            old = []  # a number, object or boolean names no line
        old = [line for line in old if isinstance(line, str)]
        out.append(
            {
                "kind": item["kind"],
                "old": [_strip_annotation(line) for line in old if line.strip()],
                "new": _strip_annotation(" ".join(str(item.get("new") or "").split())),
                "reason": " ".join(str(item.get("reason") or "").split()),
                "source": " ".join(str(item.get("source") or "").split()),
            }
        )
    return out


def _strip_annotation(line: str) -> str:
    return _ANNOTATION.sub("", line.rstrip())


# --- repair ----------------------------------------------------------------------------


def repair(old_text: str, new_text: str, title: str) -> tuple[str, list[str]]:
    """Fix mechanical problems in a proposed file; return the text and what was fixed."""
    repairs: list[str] = []
    if new_text.startswith("\ufeff") and not old_text.startswith("\ufeff"):
        new_text = new_text[1:]
        repairs.append("removed a byte-order mark")
    fenced = _WHOLE_FENCE.match(new_text)
    if fenced:
        new_text = fenced.group(2)
        repairs.append("removed a code fence around the whole file")
    lines = new_text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if any(_ANNOTATION.search(line) for line in lines):
        repairs.append("removed prompt annotations ([first seen …]) copied into the file")
    elif any(line != line.rstrip() for line in lines):
        repairs.append("removed trailing whitespace")
    collapsed: list[str] = []
    for line in (_strip_annotation(line) for line in lines):
        if line or (collapsed and collapsed[-1]):
            collapsed.append(line)
    while collapsed and not collapsed[-1]:
        collapsed.pop()
    text = "\n".join(collapsed) + "\n" if collapsed else ""
    old_front = _FRONT_MATTER.match(old_text)
    if text and old_front and not _FRONT_MATTER.match(text):
        text = old_front.group().replace("\r\n", "\n").rstrip("\n") + "\n" + text
        repairs.append("restored the front matter")
    if text.strip() and markdown.parse(text).title is None:
        front = _FRONT_MATTER.match(text)
        cut = front.end() if front else 0
        text = f"{text[:cut]}# {title}\n\n{text[cut:]}"
        repairs.append(f"added the missing '# {title}' title")
    first_break = _LINE_BREAK.search(old_text)
    if first_break and first_break.group() != "\n":
        text = text.replace("\n", first_break.group())  # keep the old file's line endings
    return text, repairs


# --- checks ----------------------------------------------------------------------------


def validate(
    old_text: str,
    new_text: str,
    changes: Any,
    *,
    hand_lines: Iterable[str],
    title: str,
) -> Verdict:
    """Repair then check a proposed rewrite of one curated file; see the module docstring."""
    changes = clean_changes(changes)
    if len(new_text) > 2 * len(old_text) + MAX_GROWTH_CHARS:
        reason = f"the rewrite is {len(new_text)} characters against {len(old_text)}; a runaway reply, not curation"
        return Verdict(False, old_text, [reason], [], changes)
    text, repairs = repair(old_text, new_text, title)
    if not text.strip() or not markdown.parse(text).facts:
        return Verdict(False, old_text, ["the rewrite is empty (no facts left)"], repairs, changes)
    old, new = markdown.parse(old_text), markdown.parse(text)
    hand_lines = list(hand_lines)
    reasons = [
        *_cut_off(text, set(content_lines(old_text))),
        *_structure(old_text, text, old, new),
        *_title(old, new),
        *_hand_edits(text, hand_lines),
        *_hand_order_and_shape(old_text, text, old, new, hand_lines),
        *_secrets_and_rules(old_text, text),
        *_losses(old, new, changes),
    ]
    if reasons:
        return Verdict(False, old_text, reasons, repairs, changes)
    return Verdict(True, text, [], repairs, changes + _undeclared_additions(old, new, changes))


def _cut_off(raw: str, old_lines: set[str]) -> list[str]:
    """The model's output was cut off mid-line: an open code fence or a dangling last line."""
    lines = [line for line in raw.replace("\r", "\n").split("\n") if line.strip()]
    if sum(1 for line in lines if _FENCE_LINE.match(line)) % 2:
        return ["the rewrite looks cut off: a code fence is never closed"]
    last = lines[-1].strip() if lines else ""
    if last.startswith("#") or last in {line.strip() for line in old_lines}:
        return []
    if _DANGLING_END.search(last) or last.count("`") % 2 or last.count("(") > last.count(")"):
        return [f"the rewrite looks cut off mid-line at its end: {quote(last)}"]
    return []


def _structure(
    old_text: str, text: str, old: markdown.ParsedFile, new: markdown.ParsedFile
) -> list[str]:
    """One title; every new fact is a `- ` bullet under a `##` section."""
    reasons = []
    titles = sum(1 for line in text.splitlines() if re.match(r"^# \S", line))
    old_titles = sum(1 for line in old_text.splitlines() if re.match(r"^# \S", line))
    if titles > max(1, old_titles):
        reasons.append(f"the rewrite has {titles} '# ' titles; a curated file has one")
    old_lines = set(content_lines(old_text))
    lines = text.splitlines()
    for fact in new.facts:
        raw = lines[fact.line - 1].rstrip() if fact.line <= len(lines) else ""
        if raw in old_lines:
            continue  # content a person wrote keeps whatever shape they gave it
        if not _BULLET.match(raw):
            reasons.append(f"new line {fact.line} is not a '- ' bullet fact: {quote(raw)}")
        elif not fact.section:
            reasons.append(f"new fact on line {fact.line} is outside any '## ' section: {quote(raw)}")
    return reasons[:5]


def _title(old: markdown.ParsedFile, new: markdown.ParsedFile) -> list[str]:
    """The file keeps its `# Title`: a curator tidies facts, it does not rename files."""
    if old.title is not None and new.title != old.title:
        return [f"changes the title {quote('# ' + old.title)} to {quote('# ' + (new.title or ''))}; the title stays"]
    return []


def _fact_lines(text: str, parsed: markdown.ParsedFile) -> list[str]:
    lines = text.splitlines()
    return [lines[fact.line - 1].rstrip() for fact in parsed.facts if fact.line <= len(lines)]


def _hand_order_and_shape(
    old_text: str, text: str, old: markdown.ParsedFile, new: markdown.ParsedFile, hand_lines: list[str]
) -> list[str]:
    """Hand-edited lines keep their relative order, and a hand-written fact is still a fact (not fenced away)."""
    hand = set(hand_lines)
    new_lines = content_lines(text)
    present = set(new_lines)
    if not hand or not hand <= present:
        return []  # _hand_edits already names the missing ones
    reasons = []
    old_order = list(dict.fromkeys(line for line in content_lines(old_text) if line in hand))
    new_order = list(dict.fromkeys(line for line in new_lines if line in hand))
    if old_order != new_order:
        moved = next(a for a, b in zip(old_order, new_order) if a != b)
        reasons.append(f"reorders hand-edited lines (first out of place: {quote(moved)}); a person's order stays")
    new_facts = set(_fact_lines(text, new))
    for line in sorted(set(_fact_lines(old_text, old)) & hand - new_facts)[:5]:
        reasons.append(f"keeps a hand-edited fact only as text that is no longer a fact: {quote(line)}")
    return reasons


def _hand_edits(text: str, hand_lines: Iterable[str]) -> list[str]:
    """Every line a person added or changed since wolfmem last wrote the file is still there verbatim."""
    present = set(content_lines(text))
    missing = sorted(line for line in hand_lines if line not in present)
    return [f"drops or changes a hand-edited line: {quote(line)}" for line in missing[:5]] + (
        [f"…and {len(missing) - 5} more hand-edited lines"] if len(missing) > 5 else []
    )


def _secrets_and_rules(old_text: str, text: str) -> list[str]:
    """No new line holds a secret or an instruction addressed to the agent."""
    reasons = []
    old_lines = {line.rstrip() for line in _LINE_BREAK.split(old_text)}
    # Split only where the markdown parser does, so no line hides behind a form feed or U+2028.
    for number, line in enumerate(_LINE_BREAK.split(text), 1):
        if not line.strip() or line.rstrip() in old_lines:
            continue
        # Zero-width and other format characters can hide a key or a phrase from the checks.
        visible = "".join(c for c in line if unicodedata.category(c) != "Cf")
        kind = find_secret(line) or find_secret(visible)
        if kind:
            reasons.append(f"line {number} looks like a secret ({kind}); secrets are never written")
        elif unsafe_characters(line):
            reasons.append(f"line {number} holds control or bidi characters ({unsafe_characters(line)}): {quote(visible)}")
        elif looks_like_instruction(visible):
            # Not quoted: the reasons go into the curation log, which agents search.
            reasons.append(f"line {number} reads like an instruction to the agent, not a fact; never written")
    return reasons


def _losses(old: markdown.ParsedFile, new: markdown.ParsedFile, changes: list[dict[str, Any]]) -> list[str]:
    """No unaccounted loss, and the size bound on large deletions."""
    kept = {normalise(fact.text) for fact in new.facts}
    covered: dict[str, str] = {}  # normalised old fact -> the kind of change that explains it
    for change in changes:
        kind = change["kind"]
        if kind == "removed" and not change["reason"]:
            continue
        if kind in ("merged", "superseded") and normalise(change["new"]) not in kept:
            continue
        for line in change["old"]:
            if kind in ("merged", "superseded") and not _related(line, change["new"]):
                continue  # "merged" into an unrelated line would launder a deletion
            covered.setdefault(normalise(line), kind)
    dropped = [fact for fact in old.facts if normalise(fact.text) not in kept]
    reasons = []
    unexplained = [fact for fact in dropped if normalise(fact.text) not in covered]
    for fact in unexplained[:5]:
        reasons.append(f"drops a fact the change list does not account for: {quote(fact.text)}")
    if len(unexplained) > 5:
        reasons.append(f"…and {len(unexplained) - 5} more unaccounted facts")
    total = len(old.facts)
    junk = sum(1 for fact in dropped if covered.get(normalise(fact.text)) == "removed")
    if total >= MASS_DELETION_MIN_FACTS and junk * 2 > total:
        reasons.append(
            f"mass deletion: {junk} of {total} facts removed as junk in one run; "
            "wolfmem never does that unattended — delete them by hand if you mean it"
        )
    elif unexplained and len(dropped) * 2 > total:
        reasons.append(f"drops {len(dropped)} of {total} facts without explaining each")
    return reasons


def _related(old: str, new: str) -> bool:
    """Whether a replaced line and its replacement share a content word (or either has none)."""
    old_stems, new_stems = set(words.content_stems(old)), set(words.content_stems(new))
    return not old_stems or not new_stems or bool(old_stems & new_stems)


def _undeclared_additions(
    old: markdown.ParsedFile, new: markdown.ParsedFile, changes: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """New facts no change names, as "added" entries, so the log shows every addition."""
    before = {normalise(fact.text) for fact in old.facts}
    declared = {normalise(change["new"]) for change in changes if change["new"]}
    out = []
    for fact in new.facts:
        key = normalise(fact.text)
        if key not in before and key not in declared:
            declared.add(key)
            out.append({"kind": "added", "old": [], "new": f"- {fact.text}",
                        "reason": "not declared in the curator's change list", "source": ""})
    return out
