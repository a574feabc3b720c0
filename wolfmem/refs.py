"""Refs (`file:knowledge/people.md#L12`) and reading the slice of a file they name."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from . import markdown
from .errors import NotFound, UsageError
from .vault import Vault, content_hash

MAX_LINES = 400
MAX_CHARS = 40_000
_LINE_RANGE = re.compile(r"^L(\d+)(?:-L?(\d+))?$", re.IGNORECASE)


@dataclass(frozen=True)
class Excerpt:
    """What memory_get returns: a file or a slice of it, with the whole file's revision."""

    path: str
    ref: str
    text: str
    revision: str
    start_line: int
    end_line: int
    total_lines: int
    truncated: bool
    next_ref: str | None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return asdict(self)


def make_ref(path: str, line: int | None = None) -> str:
    """The ref of a file, or of one line of it."""
    return f"file:{path}" if line is None else f"file:{path}#L{line}"


def split_ref(ref: str) -> tuple[str, str]:
    """A ref's vault-relative path and its anchor ('' when none)."""
    if not isinstance(ref, str) or not ref.strip():
        raise UsageError("ref is empty — pass a ref from memory_search, e.g. 'file:knowledge/people.md#L12'")
    ref = ref.strip()
    if ref.startswith("file:"):
        ref = ref[len("file:"):]
    while ref.startswith("./"):
        ref = ref[2:]
    path, _, anchor = ref.partition("#")
    if not path:
        raise UsageError(f"ref {ref!r} names no file — e.g. 'file:knowledge/people.md#L12'")
    return path, anchor.strip()


def read_ref(vault: Vault, ref: str) -> Excerpt:
    """Read the file, line range or section a ref names, capped at MAX_LINES / MAX_CHARS."""
    rel, anchor = split_ref(ref)
    path = vault.resolve(rel)
    if not rel.endswith(".md"):
        raise UsageError(f"{rel} is not a markdown note; memory_get reads the vault's .md files")
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise NotFound(f"no file {rel} in the vault; use memory_search or memory_map to find refs") from None
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines(keepends=True)
    start, end = _anchor_range(text, lines, anchor, rel)
    return _excerpt(rel, lines, start, end, content_hash(data))


def _anchor_range(text: str, lines: list[str], anchor: str, rel: str) -> tuple[int, int]:
    total = max(len(lines), 1)
    if not anchor:
        return 1, total
    match = _LINE_RANGE.match(anchor)
    if match:
        start = int(match.group(1))
        end = int(match.group(2) or start)
        if start < 1 or end < start:
            raise UsageError(f"bad line range #{anchor}: use #L10 or #L10-L40 with 1 ≤ start ≤ end")
        if start > len(lines):
            raise NotFound(f"{rel} has only {len(lines)} lines; #{anchor} is past the end")
        return start, min(end, len(lines))
    parsed = markdown.parse(text)
    section = markdown.find_section(parsed, anchor) or _by_slug(parsed, anchor)
    if section is None:
        headings = ", ".join(s.heading for s in parsed.sections[:20]) or "none"
        raise NotFound(f"{rel} has no section #{anchor}; its sections: {headings}")
    return section.line, section.end


def _slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.casefold()).strip("-")


def _by_slug(parsed: markdown.ParsedFile, anchor: str) -> markdown.Section | None:
    wanted = _slug(anchor)
    for section in parsed.sections:
        if _slug(section.heading) == wanted:
            return section
    # "#Sarah" finds "## Sarah (Manager)": a heading's leading words name its entity.
    for section in parsed.sections:
        if _slug(section.heading).startswith(wanted + "-"):
            return section
    return None


def _excerpt(rel: str, lines: list[str], start: int, end: int, revision: str) -> Excerpt:
    chunk: list[str] = []
    size = 0
    last = start - 1
    for number in range(start, end + 1):
        if number - start >= MAX_LINES or size + len(lines[number - 1]) > MAX_CHARS and chunk:
            break
        chunk.append(lines[number - 1])
        size += len(lines[number - 1])
        last = number
    truncated = last < end
    body = "".join(chunk)
    next_ref = None
    if truncated:
        next_ref = f"file:{rel}#L{last + 1}-L{end}"
        body = body.rstrip("\n") + f"\n[… truncated at line {last} of {end}; read on with {next_ref}]\n"
    anchor = "" if (start, end) == (1, max(len(lines), 1)) else f"#L{start}-L{last}"
    return Excerpt(rel, f"file:{rel}{anchor}", body, revision, start, last, len(lines), truncated, next_ref)
