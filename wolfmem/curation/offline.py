"""The deterministic offline curator: what wolfmem tidies with no LLM configured.

It only ever does three mechanical things, each on whole raw lines so every
other byte of the file stays as it was:

1. merges exact and near-duplicate bullet facts within a file (the save path's
   `relate`), keeping the first one, or the hand-written one if only one is;
2. files a fact from the `## Unfiled` section into the one section whose
   heading names an entity the fact mentions (the save path's rule);
3. drops `##` sections left with nothing under them.

It never reorders, rewords, invents or deletes anything else, and never drops a
hand-edited line. Its proposals go through the same validation as the LLM's.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict

from wolfmem.core import markdown, tokens
from wolfmem.core.facts import Relation, mentions_entity, normalise, relate
from wolfmem.curation.contract import CurationRequest, FileInput, FileProposal, Proposal
from wolfmem.memory.saving import UNFILED

_TOP_BULLET = re.compile(r"^- \S")
_DIGITS = re.compile(r"\d+")


class OfflineCurator:
    """Tidies curated files deterministically; needs no network."""

    label = "offline curator (deterministic, no LLM: merges duplicates, files unfiled facts, drops empty sections)"

    def propose(self, request: CurationRequest) -> Proposal:
        """Tidy each file of the request; a file with nothing to tidy is "unchanged"."""
        started = time.monotonic()
        files = {}
        for rel, item in request.files.items():
            new_text, changes = tidy(item)
            if new_text == item.text:
                files[rel] = FileProposal("unchanged")
            else:
                files[rel] = FileProposal("rewrite", new_text, changes, _summary(changes))
        return Proposal(files=files, seconds=round(time.monotonic() - started, 3))

    def close(self) -> None:
        """Nothing to release."""


def tidy(item: FileInput) -> tuple[str, list[dict]]:
    """One file tidied: duplicates merged, unfiled facts filed, empty sections dropped."""
    current, changes = _merge_duplicates(item.text, item.hand_lines)
    current, filed = _file_unfiled(current)
    current, dropped = _drop_empty_sections(current, item.hand_lines)
    return current, changes + filed + dropped


def _summary(changes: list[dict]) -> str:
    counts: dict[str, int] = defaultdict(int)
    for change in changes:
        counts[change["kind"]] += 1
    words = {"merged": "duplicate(s) merged", "filed": "fact(s) filed", "removed": "empty section(s) dropped"}
    return ", ".join(f"{n} {words[kind]}" for kind, n in counts.items()) + "."


def _lines(text_: str) -> list[str]:
    return text_.splitlines(keepends=True)


def _simple_bullets(text_: str) -> list[tuple[int, markdown.Fact]]:
    """Top-level one-line `- ` bullet facts (0-based line index, fact); anything fancier is left alone."""
    lines = _lines(text_)
    out = []
    for fact in markdown.parse(text_).facts:
        index = fact.line - 1
        raw = lines[index] if index < len(lines) else ""
        following = lines[index + 1] if index + 1 < len(lines) else ""
        one_line = not following.strip() or following.startswith(("- ", "#"))
        if _TOP_BULLET.match(raw) and one_line:
            out.append((index, fact))
    return out


# --- 1. duplicates -----------------------------------------------------------------------


def _merge_duplicates(text_: str, hand_lines: frozenset[str]) -> tuple[str, list[dict]]:
    """Drop later duplicates of a bullet; a hand-written line is the one kept when only one is."""
    lines = _lines(text_)
    kept: list[tuple[int, markdown.Fact]] = []
    by_key: dict[str, int] = {}  # normalised text -> position in kept
    # (digits, content stem) -> positions in kept. `relate` never calls facts with different
    # numbers duplicates, and paraphrases share a content word, so only those pairs are compared.
    by_stem: dict[tuple[frozenset[str], str], set[int]] = defaultdict(set)
    drop: set[int] = set()
    changes = []
    for index, fact in _simple_bullets(text_):
        match = by_key.get(normalise(fact.text))
        digits = frozenset(_DIGITS.findall(fact.text))
        stems = {(digits, stem) for stem in tokens.content_stems(fact.text)}
        if match is None:
            candidates = sorted(set().union(*(by_stem[s] for s in stems)) if stems else set())
            match = next(
                (k for k in candidates if relate(fact.text, kept[k][1].text) is Relation.DUPLICATE), None
            )
        if match is None:
            by_key[normalise(fact.text)] = len(kept)
            for stem in stems:
                by_stem[stem].add(len(kept))
            kept.append((index, fact))
            continue
        keep_index, keep_fact = kept[match]
        loser = _loser(lines, (keep_index, keep_fact), (index, fact), hand_lines)
        if loser is None:
            continue  # both written by the person: theirs to merge
        if loser == keep_index:
            kept[match] = (index, fact)
            keep_fact, fact = fact, keep_fact
        drop.add(loser)
        changes.append(
            {
                "kind": "merged",
                "old": [f"- {fact.text}", f"- {keep_fact.text}"],
                "new": f"- {keep_fact.text}",
                "reason": "duplicate",
                "source": "",
            }
        )
    return "".join(line for i, line in enumerate(lines) if i not in drop), changes


def _loser(
    lines: list[str], first: tuple[int, markdown.Fact], second: tuple[int, markdown.Fact], hand_lines: frozenset[str]
) -> int | None:
    """Which of two duplicate lines to drop: never a hand-written one, rather an unfiled one, else the later."""
    hand = [lines[index].rstrip() in hand_lines for index, _ in (first, second)]
    if all(hand):
        return None
    if hand[0] or hand[1]:
        return second[0] if hand[0] else first[0]
    unfiled = markdown.heading_key(UNFILED)
    if markdown.heading_key(first[1].section) == unfiled != markdown.heading_key(second[1].section):
        return first[0]
    return second[0]


# --- 2. unfiled facts --------------------------------------------------------------------


def _file_unfiled(text_: str) -> tuple[str, list[dict]]:
    """Move each unfiled fact that names exactly one section's entity into that section."""
    changes = []
    moved_any = True
    skipped: set[str] = set()
    while moved_any:
        moved_any = False
        parsed = markdown.parse(text_)
        unfiled = markdown.find_section(parsed, UNFILED)
        if unfiled is None:
            break
        targets = [s for s in parsed.sections if markdown.heading_key(s.heading) != markdown.heading_key(UNFILED)]
        for index, fact in _simple_bullets(text_):
            if fact.section != unfiled.heading or fact.text in skipped:
                continue
            named = [s for s in targets if mentions_entity(s.heading, fact.text)]
            moved = _move(text_, index, named[0]) if len(named) == 1 else None
            if moved is None:
                skipped.add(fact.text)
                continue
            text_ = moved
            changes.append(
                {"kind": "filed", "old": [f"- {fact.text}"], "new": f"- {fact.text}",
                 "reason": f"filed under '## {named[0].heading}'", "source": ""}
            )
            moved_any = True
            break  # line numbers changed: parse again
    return text_, changes


def _move(text_: str, index: int, target: markdown.Section) -> str | None:
    """The text with line `index` moved to the end of `target`, or None if it would not read back there."""
    lines = _lines(text_)
    line = lines[index]
    last = next((n for n in range(target.end, target.line, -1) if lines[n - 1].strip()), target.line)
    insert_at = last  # 0-based index just after the section's last non-blank line
    if not line.endswith(("\n", "\r")):
        line += "\n"
    if not lines[insert_at - 1].endswith(("\n", "\r")):
        lines[insert_at - 1] += "\n"
    moved = lines[:insert_at] + [line] + lines[insert_at:]
    del moved[index if index < insert_at else index + 1]
    result = "".join(moved)
    fact_text = line.strip()[2:].strip()
    before = sorted(f.text for f in markdown.parse(text_).facts)
    after = markdown.parse(result).facts
    landed = any(f.text == fact_text and f.section == target.heading for f in after)
    return result if landed and sorted(f.text for f in after) == before else None


# --- 3. empty sections -------------------------------------------------------------------


def _drop_empty_sections(text_: str, hand_lines: frozenset[str]) -> tuple[str, list[dict]]:
    """Remove `##` sections with no line under them, unless a person wrote the heading."""
    lines = _lines(text_)
    drop: set[int] = set()
    changes = []
    for section in markdown.parse(text_).sections:
        body = lines[section.line: section.end]
        heading_line = lines[section.line - 1]
        if any(line.strip() for line in body) or heading_line.rstrip() in hand_lines:
            continue
        drop.update(range(section.line - 1, section.end))
        changes.append(
            {"kind": "removed", "old": [heading_line.strip()], "new": "",
             "reason": "empty section", "source": ""}
        )
    if not drop:
        return text_, []
    kept = [line for i, line in enumerate(lines) if i not in drop]
    while kept and not kept[-1].strip():
        kept.pop()  # no trailing blank lines where a dropped section ended the file
    result = "".join(kept)
    if kept and text_.endswith(("\n", "\r")) and not result.endswith(("\n", "\r")):
        result += "\n"
    return result, changes
