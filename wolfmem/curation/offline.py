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
from collections import Counter, defaultdict

from wolfmem.core import markdown
from wolfmem.core.facts import mentions_entity
from wolfmem.curation.candidates import DuplicateFinder
from wolfmem.curation.contract import CurationRequest, FileInput, FileProposal, Proposal
from wolfmem.memory.saving import UNFILED

_TOP_BULLET = re.compile(r"^- \S")
_WORD = re.compile(r"\w+")


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
    bullets = _simple_bullets(text_)
    # Each fact meets only the kept facts that share one of its rarest words (candidates.DuplicateFinder).
    finder = DuplicateFinder([fact.text for _, fact in bullets])
    kept: list[tuple[int, markdown.Fact]] = []
    drop: set[int] = set()
    changes = []
    for index, fact in bullets:
        match = finder.find(fact.text)
        if match is None:
            finder.keep(fact.text, len(kept))
            kept.append((index, fact))
            continue
        keep_index, keep_fact = kept[match]
        loser = _loser(lines, (keep_index, keep_fact), (index, fact), hand_lines)
        if loser is None:
            continue  # both written by the person: theirs to merge
        if loser == keep_index:
            kept[match] = (index, fact)
            finder.keep(fact.text, match)
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
    """Move each unfiled fact that names exactly one section's entity to the end of that section."""
    moves = _unfiled_moves(text_)
    for _ in range(3):  # a move that would not read back where it should is left out, and the rest tried again
        if not moves:
            return text_, []
        moved, misplaced = _apply_moves(text_, moves)
        if not misplaced:
            changes = [
                {"kind": "filed", "old": [f"- {fact.text}"], "new": f"- {fact.text}",
                 "reason": f"filed under '## {target.heading}'", "source": ""}
                for fact, target in moves.values()
            ]
            return moved, changes
        moves = {index: move for index, move in moves.items() if move[1].heading not in misplaced}
    return text_, []


def _unfiled_moves(text_: str) -> dict[int, tuple[markdown.Fact, markdown.Section]]:
    """Line index -> (fact, target section) for each unfiled fact naming exactly one section's entity."""
    parsed = markdown.parse(text_)
    unfiled = markdown.find_section(parsed, UNFILED)
    if unfiled is None:
        return {}
    # A section is a candidate only if the fact holds one of its heading's words: mentions_entity
    # needs its entity's first word as a whole word, so no true match is skipped.
    by_word: dict[str, list[int]] = defaultdict(list)
    targets = [s for s in parsed.sections if markdown.heading_key(s.heading) != markdown.heading_key(UNFILED)]
    for number, section in enumerate(targets):
        for word in set(_WORD.findall(section.heading.lower())):
            by_word[word].append(number)
    moves = {}
    for index, fact in _simple_bullets(text_):
        if fact.section != unfiled.heading:
            continue
        candidates = sorted({n for word in set(_WORD.findall(fact.text.lower())) for n in by_word.get(word, ())})
        named = [targets[n] for n in candidates if mentions_entity(targets[n].heading, fact.text)]
        if len(named) == 1:
            moves[index] = (fact, named[0])
    return moves


def _apply_moves(
    text_: str, moves: dict[int, tuple[markdown.Fact, markdown.Section]]
) -> tuple[str, set[str]]:
    """The text with each moved line after its section's last line, and the headings whose facts did not land."""
    lines = _lines(text_)
    after: dict[int, list[str]] = defaultdict(list)  # 0-based line -> moved lines to put after it
    for index in sorted(moves):
        target = moves[index][1]
        last = next((n for n in range(target.end, target.line, -1) if lines[n - 1].strip()), target.line)
        line = lines[index] if lines[index].endswith(("\n", "\r")) else lines[index] + "\n"
        after[last - 1].append(line)
    out = []
    for number, line in enumerate(lines):
        if number in moves:
            continue
        out.append(line if number not in after or line.endswith(("\n", "\r")) else line + "\n")
        out.extend(after.get(number, ()))
    result = "".join(out)
    landed = Counter((fact.text, fact.section) for fact in markdown.parse(result).facts)
    wanted = Counter((fact.text, target.heading) for fact, target in moves.values())
    misplaced = {heading for (text, heading), n in wanted.items() if landed[(text, heading)] < n}
    before = sorted(fact.text for fact in markdown.parse(text_).facts)
    if sorted(fact.text for fact in markdown.parse(result).facts) != before:
        misplaced |= {target.heading for _, target in moves.values()}
    return result, misplaced


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
