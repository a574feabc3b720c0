"""The deterministic offline curator: what wolfmem tidies with no LLM configured.

It only ever does four mechanical things, each on whole raw lines so every
other byte of the file stays as it was:

1. files the lines of a section whose heading is just a name (`## Sarah`) into
   the one other section about that entity (`## Sarah (Manager)`), by the rule
   a save's topic is matched with;
2. merges exact and near-duplicate bullet facts within a file about the same
   subject (the save path's `compare.duplicates`), keeping the first one, or the
   hand-written one if only one is;
3. files a fact from the `## Unfiled` section into the one section whose
   heading names an entity the fact mentions (the save path's rule);
4. drops `##` sections left with nothing under them.

It never reorders, rewords, invents or deletes anything else, and never drops a
hand-edited line. Its proposals go through the same validation as the LLM's.

Steps 2 and 3 look facts up instead of comparing pairs (a duplicate by the words
`relate` compares, a section by its heading's words), and step 3 moves every
unfiled fact in one pass, so a 10,000-line file takes seconds (BENCHMARKS.md).
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict

from wolfmem.core import markdown
from wolfmem.core.compare import duplicates, subject_key
from wolfmem.core.entities import entity_heading, entity_key, mentions_entity
from wolfmem.core.markdown import content_lines
from wolfmem.curation.candidates import DuplicateFinder
from wolfmem.curation.contract import Change, ChangeKind, CurationRequest, FileInput, FileProposal, Proposal
from wolfmem.memory.saving import UNFILED

_TOP_BULLET = re.compile(r"^- \S")
_WORD = re.compile(r"\w+")


class OfflineCurator:
    """Tidies curated files deterministically; needs no network."""

    label = (
        "offline curator (deterministic, no LLM: merges sections about one entity and duplicates, "
        "files unfiled facts, drops empty sections)"
    )
    reads_episodes = False

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


def tidy(item: FileInput) -> tuple[str, list[Change]]:
    """One file tidied: sections about one entity joined, duplicates merged, unfiled facts filed, empty ones dropped."""
    current, joined = _join_entity_sections(item.text, item.hand_lines)
    current, changes = _merge_duplicates(current, item.hand_lines)
    changes = joined + changes
    current, filed = _file_unfiled(current)
    current, dropped = _drop_empty_sections(current, item.hand_lines)
    return current, changes + filed + dropped


def _summary(changes: list[Change]) -> str:
    counts: dict[str, int] = defaultdict(int)
    for change in changes:
        counts[change.kind.value] += 1
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


# --- 0. sections about one entity -------------------------------------------------------


def _join_entity_sections(text_: str, hand_lines: frozenset[str]) -> tuple[str, list[Change]]:
    """Move the lines of each section headed by a bare name into the one other section about that entity.

    Only a heading that is nothing but the name ("## Sarah", not "## Sarah (Manager)" or
    "## [[Sarah]]") is given up, so no heading says something the kept one does not; a heading a
    person wrote is kept, and so is any move that would reorder hand-written lines. The emptied
    heading is then dropped as an empty section.
    """
    changes: list[Change] = []
    skipped: set[str] = set()
    while True:
        parsed = markdown.parse(text_)
        for section in parsed.sections:
            target = _entity_target(text_, parsed, section, hand_lines)
            if target is None or section.heading in skipped:
                continue
            moved = _move_section_body(text_, parsed, section, target, hand_lines)
            if moved is None:
                skipped.add(section.heading)
                continue
            reason = f"filed under '## {target.heading}': '## {section.heading}' names the same entity"
            changes += [
                Change(ChangeKind.FILED, (line,), line, reason) for line in _body_lines(text_, section)
            ]
            text_ = moved
            break  # line numbers changed: parse again
        else:
            return text_, changes


def _is_bare(heading: str) -> bool:
    """Whether a heading is nothing but the words naming its entity ("Sarah", not "Sarah (Manager)")."""
    key = entity_key(heading)
    return bool(key) and sorted(heading.casefold().split()) == sorted(key)


def _entity_target(
    text_: str, parsed: markdown.ParsedFile, section: markdown.Section, hand_lines: frozenset[str]
) -> markdown.Section | None:
    """The section that `section`'s lines should join, if its heading is a bare name nobody wrote by hand."""
    if not _is_bare(section.heading) or not _body_lines(text_, section):
        return None
    if _lines(text_)[section.line - 1].rstrip() in hand_lines:
        return None
    key = entity_key(section.heading)
    # Of two sections that are both the bare name, the later joins the earlier.
    others = [
        other for other in parsed.sections
        if other.line != section.line
        and not (other.line > section.line and _is_bare(other.heading) and entity_key(other.heading) == key)
    ]
    heading = entity_heading([other.heading for other in others], section.heading)
    return next((other for other in others if other.heading == heading), None)


def _body_lines(text_: str, section: markdown.Section) -> list[str]:
    """The non-blank lines under a section's heading, stripped."""
    return [line.strip() for line in _lines(text_)[section.line: section.end] if line.strip()]


def _move_section_body(
    text_: str,
    parsed: markdown.ParsedFile,
    section: markdown.Section,
    target: markdown.Section,
    hand_lines: frozenset[str],
) -> str | None:
    """The text with `section`'s lines moved to the end of `target`, or None if anything would read differently.

    The heading stays behind, empty, for the empty-section step to drop.
    """
    lines = _lines(text_)
    first = next(n for n in range(section.line, section.end) if lines[n].strip())
    stop = next(n for n in range(section.end, section.line, -1) if lines[n - 1].strip())
    body = lines[first:stop]
    last = next((n for n in range(target.end, target.line, -1) if lines[n - 1].strip()), target.line)
    if not body[-1].endswith(("\n", "\r")):
        body[-1] += "\n"
    if not lines[last - 1].endswith(("\n", "\r")):
        lines[last - 1] += "\n"
    if last <= first:
        moved = lines[:last] + body + lines[last:first] + lines[stop:]
    else:
        moved = lines[:first] + lines[stop:last] + body + lines[last:]
    result = "".join(moved)
    after = markdown.parse(result)
    expected = sorted((f.text, target.heading if f.section == section.heading else f.section) for f in parsed.facts)
    hand_order = [line for line in content_lines(text_) if line in hand_lines]
    if sorted((f.text, f.section) for f in after.facts) != expected or hand_order != [
        line for line in content_lines(result) if line in hand_lines
    ]:
        return None
    return result


# --- 1. duplicates -----------------------------------------------------------------------


def _merge_duplicates(text_: str, hand_lines: frozenset[str]) -> tuple[str, list[Change]]:
    """Drop later duplicates of a bullet; a hand-written line is the one kept when only one is.

    Two lines merge only if `compare.duplicates` calls them duplicates: the same claim about the
    same subject, so "Prefers tea" under "## Sarah" never merges into "Prefers tea" under "## Tom".
    """
    lines = _lines(text_)
    bullets = _simple_bullets(text_)
    # A fact can only name a heading's entity if it holds one of its words: look those up, not every heading.
    by_word: dict[str, list[str]] = defaultdict(list)
    for section in markdown.parse(text_).sections:
        for word in {part for name in entity_key(section.heading) for part in _WORD.findall(name)}:
            by_word[word].append(section.heading)
    subjects = [
        subject_key(fact.section, fact.text,
                    list(dict.fromkeys(h for w in set(_WORD.findall(fact.text.lower())) for h in by_word.get(w, ()))))
        for _, fact in bullets
    ]
    # Each fact meets only the kept facts about its subject that share its words (candidates.DuplicateFinder).
    grouped: dict[frozenset[str], list[str]] = defaultdict(list)
    for (_, fact), subject in zip(bullets, subjects, strict=True):
        grouped[subject].append(fact.text)
    finders = {subject: DuplicateFinder(texts) for subject, texts in grouped.items()}
    kept: list[tuple[int, markdown.Fact]] = []
    drop: set[int] = set()
    changes = []
    for (index, fact), subject in zip(bullets, subjects, strict=True):
        finder = finders[subject]
        match = finder.find(fact.text)
        if match is not None and not duplicates(fact.text, subject, kept[match][1].text, subject):
            match = None  # the finder proposes; the rule save-time dedup uses decides
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
        changes.append(Change(ChangeKind.MERGED, (f"- {fact.text}", f"- {keep_fact.text}"), f"- {keep_fact.text}",
                              "duplicate"))
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


def _file_unfiled(text_: str) -> tuple[str, list[Change]]:
    """Move each unfiled fact that names exactly one section's entity to the end of that section."""
    moves = _unfiled_moves(text_)
    for _ in range(3):  # a move that would not read back where it should is left out, and the rest tried again
        if not moves:
            return text_, []
        moved, misplaced = _apply_moves(text_, moves)
        if not misplaced:
            changes = [
                Change(ChangeKind.FILED, (f"- {fact.text}",), f"- {fact.text}", f"filed under '## {target.heading}'")
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


def _drop_empty_sections(text_: str, hand_lines: frozenset[str]) -> tuple[str, list[Change]]:
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
        changes.append(Change(ChangeKind.REMOVED, (heading_line.strip(),), reason="empty section"))
    if not drop:
        return text_, []
    kept = [line for i, line in enumerate(lines) if i not in drop]
    while kept and not kept[-1].strip():
        kept.pop()  # no trailing blank lines where a dropped section ended the file
    result = "".join(kept)
    if kept and text_.endswith(("\n", "\r")) and not result.endswith(("\n", "\r")):
        result += "\n"
    return result, changes
