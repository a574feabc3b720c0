"""Refs (`file:knowledge/people.md#L12`) and reading the slice of a file they name."""

from __future__ import annotations

import errno
import re
from dataclasses import asdict, dataclass, field

from wolfmem.core import markdown
from wolfmem.core.facts import has_lone_surrogate
from wolfmem.errors import NotFound, UsageError, storage_error
from wolfmem.limits import MAX_REF_CHARS
from wolfmem.storage.vault import Vault, content_hash

MAX_LINES = 400
MAX_CHARS = 40_000
# Finding a section parses the whole file; past this size a line range is the way in.
MAX_SECTION_SCAN_CHARS = 2_000_000
_LINE_RANGE = re.compile(r"^L([0-9]+)(?:-L?([0-9]+))?$", re.IGNORECASE)
_SCHEME = re.compile(r"^file:\s*", re.IGNORECASE)
_MARKDOWN_PATH = re.compile(r"(.*?\.md)(?:#(.*))?\Z", re.IGNORECASE | re.DOTALL)


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
    # What wolfmem did to the file since an agent last touched it (lines put back after an editor).
    notices: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form (notices only when there are some)."""
        data = asdict(self)
        if not data["notices"]:
            del data["notices"]
        return data


def make_ref(path: str, line: int | None = None) -> str:
    """The ref of a file, or of one line of it."""
    return f"file:{path}" if line is None else f"file:{path}#L{line}"


def split_ref(ref: str) -> tuple[str, str]:
    """A ref's vault-relative path and its anchor ('' when none)."""
    if not isinstance(ref, str) or not ref.strip():
        raise UsageError("ref is empty — pass a ref from memory_search, e.g. 'file:knowledge/people.md#L12'")
    if len(ref) > MAX_REF_CHARS:
        raise UsageError(f"ref is {len(ref)} characters long; refs are short, e.g. 'file:knowledge/people.md#L12'")
    if has_lone_surrogate(ref):
        raise UsageError("ref is not valid Unicode (it holds a lone surrogate); pass a ref from memory_search")
    ref = _SCHEME.sub("", ref.strip(), count=1)
    while ref.startswith("./"):
        ref = ref[2:]
    # A note may have '#' in its name (knowledge/c#.md): the anchor starts after the first ".md#".
    named = _MARKDOWN_PATH.match(ref)
    path, anchor = (named.group(1), named.group(2) or "") if named else ref.partition("#")[::2]
    if not path:
        raise UsageError(f"ref {ref!r} names no file — e.g. 'file:knowledge/people.md#L12'")
    return path, anchor.strip()


def read_ref(vault: Vault, ref: str) -> Excerpt:
    """Read the file, line range or section a ref names, capped at MAX_LINES / MAX_CHARS."""
    rel, anchor = split_ref(ref)
    path = vault.resolve(rel)
    rel = vault.rel(path)  # "knowledge//a.md" and "knowledge/./a.md" name knowledge/a.md
    if not rel.endswith(".md"):
        raise UsageError(f"{rel} is not a markdown note; memory_get reads the vault's .md files")
    try:
        data = vault.read_bytes(rel)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise NotFound(f"no file {rel} in the vault; use memory_search or memory_map to find refs") from None
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise storage_error(exc, "read", rel) from None
        raise NotFound(f"no file {rel[:80]}… in the vault; its name is too long") from None
    text = data.decode("utf-8", errors="replace")
    lines = markdown.split_lines(text)
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
    if len(text) > MAX_SECTION_SCAN_CHARS:
        raise UsageError(
            f"{rel} is too large to look up sections in; read it by line range, e.g. file:{rel}#L1-L{MAX_LINES}"
        )
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
    cut_line = False
    for number in range(start, end + 1):
        if number - start >= MAX_LINES or (size + len(lines[number - 1]) > MAX_CHARS and chunk):
            break
        line = lines[number - 1]
        if len(line) > MAX_CHARS:
            # One enormous line (minified text, a pasted blob) is cut, never returned whole.
            line, cut_line = line[:MAX_CHARS], True
        chunk.append(line)
        size += len(line)
        last = number
        if cut_line:
            break
    truncated = last < end or cut_line
    body = "".join(chunk)
    next_ref = None
    if cut_line and last == end:
        body = body.rstrip("\n") + f"\n[… line {last} is cut at {MAX_CHARS} characters]\n"
    elif truncated:
        next_ref = f"file:{rel}#L{last + 1}-L{end}"
        body = body.rstrip("\n") + f"\n[… truncated at line {last} of {end}; read on with {next_ref}]\n"
    anchor = "" if (start, end) == (1, max(len(lines), 1)) else f"#L{start}-L{last}"
    return Excerpt(rel, f"file:{rel}{anchor}", body, revision, start, last, len(lines), truncated, next_ref)
