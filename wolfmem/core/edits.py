"""Line-level edits of a markdown file: add a fact under a section, replace or remove one fact line, episode blocks.

Every edit reads its result back with the parser and refuses (ValueError) one that would change how
the rest of the file reads; nothing is ever re-rendered.
"""

from __future__ import annotations

import re

from wolfmem.core.markdown import (
    BOM,
    NEWLINE_RE,
    ParsedFile,
    find_section,
    forget,
    heading_key,
    lines_of,
    newline_of,
    parse,
    scan,
)
from wolfmem.core.markers import hunks


def _one_line(value: str, what: str) -> str:
    """Strip value and insist it is a single non-empty line."""
    value = value.strip()
    if not value or len(value.splitlines()) != 1:
        raise ValueError(
            f"{what} must be one non-empty line, got {value!r}; join or split it first"
        )
    return value


def _reads_back(line: str, what: str, expect: str, got: str | None) -> None:
    """Refuse text whose markdown would not read back as itself (e.g. '# x', '```')."""
    if got != expect:
        raise ValueError(
            f"{what} {expect!r} would be read as markdown structure in {line!r}; "
            "rephrase it or escape its leading character with a backslash"
        )


def _with_title(text: str, title: str, newline: str) -> tuple[str, ParsedFile]:
    """Give text a ``# title`` (after any front matter) if it has none; return it parsed."""
    parsed, front_end = scan(text)
    if parsed.title is not None and text.strip():
        return text, parsed
    # A byte-order mark stays the file's first character, ahead of a title put in.
    bom = BOM if text.startswith(BOM) else ""
    body = text.removeprefix(bom)
    if body.strip() == "":
        text = f"{bom}# {title}{newline}{newline}"
        return text, parse(text)
    lines = lines_of(body)
    if front_end and not NEWLINE_RE.search(lines[front_end - 1][-1:]):
        lines[front_end - 1] += newline  # front matter was the whole file, unterminated
    rest = lines[front_end:]
    gap = newline if rest and rest[0].strip() else ""
    text = bom + "".join([*lines[:front_end], f"# {title}{newline}{gap}", *rest])
    return text, parse(text)


def _splice(lines: list[str], at: int, new: list[str], newline: str, ends_nl: bool) -> str:
    """Insert ``new`` lines before 0-based index ``at``, keeping every other line's ending."""
    head, tail = lines[:at], lines[at:]
    if head and not tail and not NEWLINE_RE.search(head[-1][-1:]):
        head[-1] += newline  # appending after an unterminated last line
    body = [line + newline for line in new]
    if not tail and not ends_nl:
        body[-1] = new[-1]  # keep the file's missing final newline
    return "".join(head + body + tail)


def add_fact(text: str, bullet: str, heading: str, title: str, *, written: str | None = None) -> tuple[str, int]:
    """Append ``- bullet`` to section ``heading`` (made if missing); return (text, its line).

    ``written`` is the line to add instead, when it must keep its own shape (a restored ``* [ ] task``);
    it must read as the fact ``bullet``.
    """
    bullet = _one_line(bullet, "bullet")
    heading = _one_line(heading, "heading")
    title = _one_line(title, "title")
    line_text = _one_line(written, "line") if written is not None else f"- {bullet}"
    probe = parse(line_text).facts
    _reads_back(line_text, "bullet", bullet, probe[0].text if len(probe) == 1 else None)
    probe_sections = parse(f"## {heading}").sections
    got = heading_key(probe_sections[0].heading) if probe_sections else None
    _reads_back(f"## {heading}", "heading", heading_key(heading), got)

    newline = newline_of(text)
    # A file we create (or fill from blank) ends with a newline; otherwise keep its habit.
    ends_nl = text.removeprefix(BOM).strip() == "" or text.endswith(("\n", "\r"))
    base, before = _with_title(text, title, newline)
    lines = lines_of(base)
    section = find_section(before, heading)
    spans = [(hunk.start, hunk.end) for hunk in hunks(base)] if "<<<<<<<" in base else []
    if section is not None and any(start <= section.line <= end for start, end in spans):
        section = None  # its heading is one side of a git conflict: the fact goes under a new one, after it
    if section is None:
        while lines and not lines[-1].strip():
            lines.pop()  # exactly one blank line before the new heading
        last = len(lines)
        attempts = [(_splice(lines, last, ["", f"## {heading}", line_text], newline, ends_nl), last + 3)]
    else:
        last = next(
            (n for n in range(section.end, section.line, -1) if lines[n - 1].strip()),
            section.line,
        )
        # Never inside a git conflict hunk: after its closing marker.
        last = next((end for start, end in spans if start <= last < end), last)
        # An HTML block or table swallows a following line; a blank line closes them.
        attempts = [
            (_splice(lines, last, [line_text], newline, ends_nl), last + 1),
            (_splice(lines, last, ["", line_text], newline, ends_nl), last + 2),
        ]
    for new_text, line in attempts:
        after = parse(new_text)  # from the parse of base, remembered: only the lines around the new one
        if _landed(before, after, bullet, heading, line):
            if section is not None:
                forget(text, base)  # superseded: keeping them would push other files' parses out
            return new_text, line
    raise ValueError(
        f"could not add {bullet!r} under '## {heading}': the file's markdown swallows the new "
        "line (an unclosed ``` code fence?); fix the file and retry"
    )


_MARKER_RE = re.compile(r"^(\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?)")


def replace_fact(text: str, line: int, sentence: str) -> str:
    """The text with the fact on ``line`` replaced by ``sentence`` (its list marker kept).

    ValueError if that is not a fact line.
    """
    sentence = _one_line(sentence, "fact")
    before = parse(text)
    if not any(fact.line == line for fact in before.facts):
        raise ValueError(f"line {line} holds no fact")
    lines = lines_of(text)
    bom = BOM if line == 1 and lines[0].startswith(BOM) else ""
    raw = lines[line - 1].removeprefix(bom)
    ending = raw[len(raw.rstrip("\r\n")):]
    marker = _MARKER_RE.match(raw)
    lines[line - 1] = bom + (marker.group(1) if marker else "") + sentence + ending
    new_text = "".join(lines)
    after = parse(new_text)
    mine = [fact for fact in after.facts if fact.line == line]
    others = [(f.text, f.line) for f in after.facts if f.line != line]
    if (
        len(mine) != 1
        or mine[0].text != sentence
        or others != [(f.text, f.line) for f in before.facts if f.line != line]
        or _code_texts(after) != _code_texts(before)
    ):
        raise ValueError(f"line {line} cannot be replaced without changing how the file reads")
    return new_text


def remove_fact(text: str, line: int) -> str:
    """The text without the fact line ``line``; ValueError if it is not a one-line fact or others would change."""
    before = parse(text)
    if not any(fact.line == line for fact in before.facts):
        raise ValueError(f"line {line} holds no fact")
    lines = lines_of(text)
    del lines[line - 1]
    if line == 1 and text.startswith(BOM):
        lines[:1] = [BOM + "".join(lines[:1])]  # the file keeps its byte-order mark
    new_text = "".join(lines)
    expected = [f.text for f in before.facts if f.line != line]
    after = parse(new_text)
    if [f.text for f in after.facts] != expected or _code_texts(after) != _code_texts(before):
        raise ValueError(f"line {line} cannot be removed without changing how the rest of the file reads")
    return new_text


def _landed(before: ParsedFile, after: ParsedFile, bullet: str, heading: str, line: int) -> bool:
    """True if the bullet reads back at ``line`` in the right section and nothing else changed."""
    mine = [f for f in after.facts if f.line == line]
    others = [f.text for f in after.facts if f.line != line]
    return (
        len(mine) == 1
        and mine[0].text == bullet
        and heading_key(mine[0].section) == heading_key(heading)
        and others == [f.text for f in before.facts]
        and _code_texts(after) == _code_texts(before)
    )


def _code_texts(parsed: ParsedFile) -> list[str]:
    """The code lines' texts: an edit of the facts must leave every code block reading as it did."""
    return [line.text for line in parsed.code]


def episode_title(day: str) -> str:
    """The first line of an episode log, e.g. ``'# 2026-11-29\\n'``."""
    return f"# {_one_line(day, 'day')}\n"


def episode_block(time_hhmm: str, headline: str, bullets: list[str], newline: str = "\n") -> str:
    """One episode entry to append: a blank line, ``## HH:MM — headline`` and its bullets."""
    head = f"## {_one_line(time_hhmm, 'time')} — {_one_line(headline, 'headline')}"
    body = [f"- {_one_line(b, 'bullet')}" for b in bullets]
    return newline + newline.join([head, *body]) + newline
