"""Checking a proposed rewrite of a curated file against the old one (pure; no I/O).

`validate(old, new, changes, hand_lines=..., title=...)` first repairs what is
mechanical, then rejects the rest. In order:

* repairs: a code fence wrapped round the whole file, line endings (the old
  file's style), trailing whitespace, runs of blank lines, a missing final
  newline, prompt annotations copied into the file (`[first seen …]`,
  `[hand-edited …]`), a missing `# Title`, and front matter the model dropped;
* structure: not empty, not cut off mid-line, one `# Title`, and every *new*
  fact is a `- ` bullet under a `##` section (old content is left as it was);
* duplicated lines are collapsed to the count the old file had, and a new line
  that brings back a fact the person asked to forget is left out;
* nothing changes meaning unaccounted, judged on evidence (`curation.evidence`): each old fact
  is in the new file as it read, under a heading about the same subject; or it is merged into a
  line that carries it, superseded by a line on the same subject backed by evidence about that
  subject since the last run, moved to another file of the run, or removed as junk with a
  reason (never a protected fact); an undeclared rewording must say the same about the same
  subject; every new fact is backed by an episode line or a save since the last run;
* hand edits survive: every line a person wrote since wolfmem last wrote the
  file appears verbatim;
* nothing new is a secret, an instruction or behavioural rule for the agent,
  or carries control characters (NUL, bidi overrides, odd line breaks), and no new
  line adds markup that changes or leaks what it says (`curation.markup`);
* the title stays, and hand-edited lines keep their order and stay facts;
* size bounds: a rewrite may not balloon (a runaway model) nor grow a file past the
  index's per-file cut, and what leaves or arrives has budgets per run and over 30
  days (`curation.budget`); a rewrite over one that passes every other check is
  *staged* (its verdict carries the text and `over_budget`), never landed.

Changes the change list does not declare (a backed addition, a rewording, a section
move, a heading renamed) are added to the verdict's change list, so the curation log
shows every one.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wolfmem.core import markdown
from wolfmem.core.credentials import find_secret
from wolfmem.core.facts import normalise
from wolfmem.core.markdown import content_lines
from wolfmem.core.untrusted import looks_like_instruction, unsafe_characters
from wolfmem.curation.contract import Change, ChangeKind
from wolfmem.curation.evidence import Departure, Safeguards, account
from wolfmem.curation.forgotten import readded
from wolfmem.curation.markup import added_markup

# "filed" (moved to the section it names) is the offline curator's; the LLM uses the first five.
CHANGE_KINDS = tuple(kind.value for kind in ChangeKind)
QUOTE_CHARS = 80
# A nightly rewrite never legitimately grows a file this much; a looping model does.
MAX_GROWTH_CHARS = 64_000

# Read from the start of a run of spaces only, and never across another "[": either was quadratic in a long line.
_ANNOTATION = re.compile(r"(?<!\s)\s*\[(?:first seen \d{4}-\d{2}-\d{2}[^\][]*|hand-edited[^\][]*)\]\s*$")
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
    text: str  # the repaired rewrite when ok or staged; the old text when refused
    reasons: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    departures: list[Departure] = field(default_factory=list)  # every fact that leaves, for the archive
    over_budget: str = ""  # set when only a budget stands in the way: stage it for a person
    added: int = 0  # new facts and sections it brings, for the 30-day growth budget


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """One line of text for a message, shortened."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def hand_edited_lines(old_text: str, snapshot: Iterable[str] | None, template: str = "") -> set[str]:
    """Lines of the old file wolfmem neither wrote nor accepted (its template counts as written)."""
    known = set(snapshot or ()) | set(content_lines(template))
    return {line for line in content_lines(old_text) if line not in known}


def clean_changes(raw: Any) -> list[Change]:
    """Parse a change list as it comes in (a model's reply, a staged file) into Changes; drop what is unusable."""
    out: list[Change] = []
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
            Change(
                kind=ChangeKind(item["kind"]),
                old=tuple(_strip_annotation(line) for line in old if line.strip()),
                new=_strip_annotation(" ".join(str(item.get("new") or "").split())),
                reason=" ".join(str(item.get("reason") or "").split()),
                source=" ".join(str(item.get("source") or "").split()),
            )
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
    elif old_text.startswith("\ufeff") and not new_text.startswith("\ufeff"):
        # The person's editor wrote one (Windows Notepad); it is part of their first line, kept as it was.
        new_text = "\ufeff" + new_text
        repairs.append("kept the file's byte-order mark")
    fenced = _WHOLE_FENCE.match(new_text)
    if fenced:
        new_text = fenced.group(2)
        repairs.append("removed a code fence around the whole file")
    lines = new_text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    collapsed: list[str] = []
    fence, trimmed = "", False
    for raw in lines:
        opened = _FENCE_LINE.match(raw)
        if fence:
            # Inside a code block every line stays as written: blank runs and trailing spaces are code.
            collapsed.append(raw)
            fence = "" if opened and opened.group(1) == fence else fence
            continue
        fence = opened.group(1) if opened else ""
        line = _strip_annotation(raw)
        trimmed = trimmed or line != raw
        if line or (collapsed and collapsed[-1]):
            collapsed.append(line)
    if any(_ANNOTATION.search(line) for line in lines):
        repairs.append("removed prompt annotations ([first seen …]) copied into the file")
    elif trimmed:
        repairs.append("removed trailing whitespace")
    while collapsed and not collapsed[-1]:
        collapsed.pop()
    text = "\n".join(collapsed) + "\n" if collapsed else ""
    text, copies = _collapse_copies(old_text, text)
    if copies:
        repairs.append(f"collapsed {copies} duplicated line(s)")
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
    changes: Sequence[Change],
    *,
    hand_lines: Iterable[str],
    title: str,
    guards: Safeguards | None = None,
) -> Verdict:
    """Repair then check a proposed rewrite of one curated file; see the module docstring."""
    guards = guards or Safeguards()
    changes = list(changes)
    if len(new_text) > 2 * len(old_text) + MAX_GROWTH_CHARS:
        reason = f"the rewrite is {len(new_text)} characters against {len(old_text)}; a runaway reply, not curation"
        return Verdict(False, old_text, [reason], [], changes)
    text, repairs = repair(old_text, new_text, title)
    if not text.strip() or not markdown.parse(text).facts:
        return Verdict(False, old_text, ["the rewrite is empty (no facts left)"], repairs, changes)
    old = markdown.parse(old_text)
    text, forgotten = _without(text, readded(old, markdown.parse(text), guards.forgotten))
    if forgotten:
        repairs.append(f"left out {forgotten} line(s) that would bring back a fact the person asked to forget")
    new = markdown.parse(text)
    hand_lines = list(hand_lines)
    accounting = account(old, new, changes, guards)
    reasons = [
        *_cut_off(text, set(content_lines(old_text))),
        *_structure(old_text, text, old, new),
        *_title(old, new),
        *_hand_edits(text, hand_lines),
        *_code_kept(old, new),
        *_hand_order_and_shape(old_text, text, old, new, hand_lines),
        *_secrets_and_rules(old_text, text),
        *added_markup(old_text, text, guards.evidence),
        *_size(old_text, text, guards.growth.max_bytes),
        *accounting.reasons,
    ]
    if reasons:
        return Verdict(False, old_text, reasons, repairs, changes)
    changes = changes + accounting.listed
    changes += _undeclared_additions(old, new, changes)
    if accounting.over_budget:
        return Verdict(False, text, [accounting.over_budget], repairs, changes, accounting.departures,
                       accounting.over_budget, accounting.added)
    return Verdict(True, text, [], repairs, changes, accounting.departures, added=accounting.added)


def _size(old_text: str, text: str, max_bytes: int) -> list[str]:
    """A file is never grown past the bytes the index reads of it: what lies beyond is not searchable."""
    size = len(text.encode("utf-8"))
    if size > max_bytes and size > len(old_text.encode("utf-8")):
        return [f"the rewrite is {size:,} bytes, past the {max_bytes:,} the index reads of a file "
                "(index.max_file_bytes); the facts beyond would not be found"]
    return []


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
        moved = next(a for a, b in zip(old_order, new_order, strict=True) if a != b)
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


def _code_kept(old: markdown.ParsedFile, new: markdown.ParsedFile) -> list[str]:
    """Every line of the old file's code blocks is still a code line, word for word: curation never rewrites code."""
    missing = Counter(line.text for line in old.code) - Counter(line.text for line in new.code)
    lost = sorted(missing.elements())
    return [f"drops or changes a line of a code block: {quote(line)}" for line in lost[:5]] + (
        [f"…and {len(lost) - 5} more code lines"] if len(lost) > 5 else []
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
            reasons.append(
                f"line {number} holds control or bidi characters ({unsafe_characters(line)}): {quote(visible)}")
        elif looks_like_instruction(visible):
            # Not quoted: the reasons go into the curation log, which agents search.
            reasons.append(f"line {number} reads like an instruction to the agent, not a fact; never written")
    return reasons


def _simple_bullet(lines: list[str], index: int) -> bool:
    """A one-line top-level `- ` bullet: removing it cannot change how the lines around it read."""
    following = lines[index + 1] if index + 1 < len(lines) else ""
    return lines[index].startswith("- ") and (not following.strip() or following.startswith(("- ", "#")))


def _without(text: str, facts: Iterable[markdown.Fact]) -> tuple[str, int]:
    """The text without the lines of these facts that are simple bullets (the others stay, and face the checks)."""
    parts = _LINE_BREAK.split(text)  # the lines as the parser numbers them, with their breaks between
    pieces = re.split(f"({_LINE_BREAK.pattern})", text)
    drop = {fact.line - 1 for fact in facts if _simple_bullet(parts, fact.line - 1)}
    kept = [piece for i, piece in enumerate(pieces) if i // 2 not in drop]
    return "".join(kept), len(drop)


def _collapse_copies(old_text: str, text: str) -> tuple[str, int]:
    """Drop bullet lines repeating a fact more often than the old file did (a model that doubled lines)."""
    allowed = Counter(normalise(fact.text) for fact in markdown.parse(old_text).facts)
    seen: Counter[str] = Counter()
    copies = []
    for fact in markdown.parse(text).facts:
        key = normalise(fact.text)
        seen[key] += 1
        if seen[key] > max(allowed[key], 1):
            copies.append(fact)
    return _without(text, copies)


def _undeclared_additions(
    old: markdown.ParsedFile, new: markdown.ParsedFile, changes: list[Change]
) -> list[Change]:
    """New facts no change names, as "added" entries, so the log shows every addition."""
    before = {normalise(fact.text) for fact in old.facts}
    declared = {normalise(change.new) for change in changes if change.new}
    out = []
    for fact in new.facts:
        key = normalise(fact.text)
        if key not in before and key not in declared:
            declared.add(key)
            out.append(Change(ChangeKind.ADDED, new=f"- {fact.text}",
                              reason="not declared in the curator's change list"))
    return out
