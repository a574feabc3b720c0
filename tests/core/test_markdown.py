"""Tests for wolfmem.markdown: parsing facts and sections, and line-level edits."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wolfmem.core import blocks, edits, markdown, reparse
from wolfmem.core.edits import add_fact, episode_block, episode_title
from wolfmem.core.markdown import Fact, Section, find_section, heading_key, parse

PEOPLE = """\
---
tags: [x]
---
# People

<!-- Names, roles and relationships -->

## Sarah (Manager)
- Sarah is my manager.
- Sarah prefers async updates; see [[Standup]].

## Unfiled
- Something.
"""

EPISODE = """\
# 2026-11-29

## 14:05 — Deployed the API
- Deployed v2 to staging.
- Caroline: I went to the support group yesterday.
"""


def facts(text: str) -> list[tuple[str, int, str]]:
    """The parsed facts of text as plain (text, line, section) tuples."""
    return [(f.text, f.line, f.section) for f in parse(text).facts]


# --- parse -------------------------------------------------------------------


def test_people_file() -> None:
    parsed = parse(PEOPLE)
    assert parsed.title == "People"
    assert parsed.sections == (
        Section("Sarah (Manager)", 8, 11),
        Section("Unfiled", 12, 13),
    )
    assert parsed.facts == (
        Fact("Sarah is my manager.", 9, "Sarah (Manager)"),
        Fact("Sarah prefers async updates; see [[Standup]].", 10, "Sarah (Manager)"),
        Fact("Something.", 13, "Unfiled"),
    )


def test_episode_file() -> None:
    parsed = parse(EPISODE)
    assert parsed.title == "2026-11-29"
    assert parsed.sections == (Section("14:05 — Deployed the API", 3, 5),)
    assert [f.text for f in parsed.facts] == [
        "Deployed v2 to staging.",
        "Caroline: I went to the support group yesterday.",
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("- a\n- b\n", [("a", 1, ""), ("b", 2, "")]),
        (
            "* star\n+ plus\n1. one\n2) two\n",
            [("star", 1, ""), ("plus", 2, ""), ("one", 3, ""), ("two", 4, "")],
        ),
        (
            "- [ ] todo\n- [x] done\n- [X] Done\n",
            [("todo", 1, ""), ("done", 2, ""), ("Done", 3, "")],
        ),
        ("- [ ]\n", []),
        (
            "- outer\n  - inner\n    - deepest\n",
            [("outer", 1, ""), ("inner", 2, ""), ("deepest", 3, "")],
        ),
        ("- first line\n  second line\n", [("first line", 1, ""), ("second line", 2, "")]),
        ("- lazy\ncontinuation\n", [("lazy", 1, ""), ("continuation", 2, "")]),
        ("one\ntwo\n\nthree\n", [("one", 1, ""), ("two", 2, ""), ("three", 4, "")]),
        ("> quoted\n> again\n", [("quoted", 1, ""), ("again", 2, "")]),
        ("> - quoted item\n", [("quoted item", 1, "")]),
        ("- item\n  > quote in item\n", [("item", 1, ""), ("quote in item", 2, "")]),
        ("  indented para  \n", [("indented para", 1, "")]),
        ("trailing hard break  \nnext\n", [("trailing hard break", 1, ""), ("next", 2, "")]),
        ("see [[Wiki]], `code`, <b>x</b>\n", [("see [[Wiki]], `code`, <b>x</b>", 1, "")]),
        ("{{unknown}} ::syntax::\n", [("{{unknown}} ::syntax::", 1, "")]),
        # Tables: body rows are facts; the header row and separator are not.
        ("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 |\n", [("| 1 | 2 |", 3, ""), ("| 3 |", 4, "")]),
        ("a | b\n--|--\n1 | 2\n", [("1 | 2", 3, "")]),
        ("> | a |\n> |---|\n> | 1 |\n", [("| 1 |", 3, "")]),
    ],
)
def test_fact_lines(text: str, expected: list[tuple[str, int, str]]) -> None:
    assert facts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "# Title\n",
        "## Heading\n",
        "### Sub\n#### Deeper\n",
        "Setext\n======\n",
        "Setext two\n----------\n",
        "---\ntitle: x\ntags: [a]\n---\n",
        "<!-- a comment -->\n",
        "<!--\nmulti\nline\n-->\n",
        "<div>\nhtml block\n</div>\n",
        "```\n- not a fact\n## not a section\n```\n",
        "~~~python\ncode\n~~~\n",
        "    indented code\n",
        "***\n",
        "- - -\n",
        "\n\n   \n\t\n",
        "",
        "- \n",
    ],
)
def test_not_facts(text: str) -> None:
    assert facts(text) == []


def code(text: str) -> list[tuple[str, int, str]]:
    """The parsed code lines of text as plain (text, line, section) tuples."""
    return [(f.text, f.line, f.section) for f in parse(text).code]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("## Servers\n```sh\nssh deploy@bastion.example.com\n```\n",
         [("ssh deploy@bastion.example.com", 3, "Servers")]),
        ("~~~\nfirst\n\n  second\n~~~\n", [("first", 2, ""), ("second", 4, "")]),
        ("## S\n\n    make deploy\n    }\n", [("make deploy", 3, "S")]),  # no word, no line
        # CommonMark reads a tab-indented list as an indented code block: its lines are still found.
        ("## Hosts\n\t- db1 is the primary\n\t- db2\n", [("- db1 is the primary", 2, "Hosts"), ("- db2", 3, "Hosts")]),
        ("- item\n  ```\n  in an item\n  ```\n> ```\n> quoted code\n> ```\n",
         [("in an item", 3, ""), ("quoted code", 6, "")]),
        ("```\nunclosed\nfence", [("unclosed", 2, ""), ("fence", 3, "")]),
        ("```\n- not a fact\n## not a section\n```\n", [("- not a fact", 2, ""), ("## not a section", 3, "")]),
        ("- a fact\n## S\npara\n", []),
    ],
)
def test_code_lines_are_kept_apart_from_facts(text: str, expected: list[tuple[str, int, str]]) -> None:
    assert code(text) == expected
    assert [f.line for f in parse(text).searchable()] == sorted(f.line for f in (*parse(text).facts, *parse(text).code))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_byte_order_mark_is_not_part_of_the_title(newline: str) -> None:
    text = newline.join(["\ufeff# People", "", "## Sarah", "- Sarah likes tea", ""])
    parsed = parse(text)
    assert parsed.title == "People"
    assert facts(text) == [("Sarah likes tea", 4, "Sarah")]
    assert facts("\ufeff- first fact\n") == [("first fact", 1, "")]
    assert facts("\ufeff| a |\n|---|\n| 1 |\n") == [("| 1 |", 3, "")]


def test_edits_keep_a_byte_order_mark() -> None:
    bom = "\ufeff"
    assert add_fact(f"{bom}# People\n\n## S\n- a\n", "b", "S", "People") == (f"{bom}# People\n\n## S\n- a\n- b\n", 5)
    assert add_fact(f"{bom}# People\n", "b", "S", "People")[0] == f"{bom}# People\n\n## S\n- b\n"
    assert add_fact(bom, "b", "S", "People")[0] == f"{bom}# People\n\n## S\n- b\n"
    assert edits.replace_fact(f"{bom}- old\n- b\n", 1, "new") == f"{bom}- new\n- b\n"
    assert edits.remove_fact(f"{bom}- old\n- b\n", 1) == f"{bom}- b\n"


def test_fact_sections_and_deeper_headings() -> None:
    text = "- before\n## A\n- a1\n### Deeper\n- a2\n# Reset\n- loose\n## B\n- b1\n"
    assert facts(text) == [
        ("before", 1, ""),
        ("a1", 3, "A"),
        ("a2", 5, "A"),
        ("loose", 7, ""),
        ("b1", 9, "B"),
    ]


@pytest.mark.parametrize(
    "text, title",
    [
        ("# T\n# U\n", "T"),
        ("---\na: 1\n---\n# After front matter\n", "After front matter"),
        ("## Only h2\n", None),
        ("> # quoted\n", None),
        ("Setext\n===\n", None),
        ("text\n\n# Late title #\n", "Late title"),
        ("", None),
    ],
)
def test_title(text: str, title: str | None) -> None:
    assert parse(text).title == title


@pytest.mark.parametrize(
    "text",
    [
        "## S\r\n- a\r\n\r\n- b\r\n",
        "## S\n- a\n\n- b",
        "## S\r\n- a\r\n\r\n- b",
        "## S\r- a\r\r- b\r",
    ],
)
def test_line_endings_count_like_splitlines(text: str) -> None:
    assert facts(text) == [("a", 2, "S"), ("b", 4, "S")]
    assert parse(text).sections == (Section("S", 1, 4),)


def test_large_file_parses_every_section_and_fact() -> None:
    chunk = (
        "\n## Topic {i}\n- fact {i} with [[link]]\n- more *{i}*\n  wrapped\n"
        "> quote\n\n| a |\n|---|\n| {i} |\n"
    )
    text = "# Big\n" + "".join(chunk.format(i=i) for i in range(1000))
    assert len(text.splitlines()) > 10_000
    parsed = parse(text)
    assert len(parsed.sections) == 1000
    assert len(parsed.facts) == 5000


TOKENS = [*"#->*+`~|[]()!<>:_= \t\n\r1xX.\\é\x00", "---", "```", "<!--", "-->", "\r\n", "## "]


@pytest.mark.parametrize(
    "text",
    ["> " * 5000 + "x", "- " * 5000 + "x", "[" * 5000, "`" * 5000, "a\ud800b\n## \udfff", "\x00\r"],
)
def test_parse_survives_pathological_input(text: str) -> None:
    parse(text)


MARKDOWNISH = st.lists(st.sampled_from(TOKENS), max_size=150).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), MARKDOWNISH))
def test_parse_never_raises(text: str) -> None:
    parsed = parse(text)
    unix = text.replace("\r\n", "\n").replace("\r", "\n")
    n = len(unix.split("\n")) - unix.endswith("\n")
    lines = [f.line for f in parsed.facts]
    assert lines == sorted(lines)
    assert all(1 <= line <= max(n, 1) for line in lines)
    assert all(f.text and f.text == f.text.strip() for f in parsed.facts)
    for s in parsed.sections:
        assert 1 <= s.line <= s.end <= max(n, 1)


# --- heading_key / find_section ----------------------------------------------


@pytest.mark.parametrize(
    "a, b",
    [
        ("Sarah (Manager)", "sarah (manager)"),
        ("  Sarah   (Manager) ", "Sarah (Manager)"),
        ("Straße", "STRASSE"),
        ("a\tb", "a b"),
    ],
)
def test_heading_key_matches(a: str, b: str) -> None:
    assert heading_key(a) == heading_key(b)


def test_find_section() -> None:
    parsed = parse(PEOPLE)
    assert find_section(parsed, "sarah  (MANAGER)") == Section("Sarah (Manager)", 8, 11)
    assert find_section(parsed, "Sarah") is None
    assert find_section(parse("## A\n## a\n"), "A") == Section("A", 1, 1)  # first wins


# --- add_fact ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, heading, expected, line",
    [
        # into an existing section, after its last non-blank line
        (PEOPLE, "Sarah (Manager)", PEOPLE.replace("[[Standup]].\n", "[[Standup]].\n- New.\n"), 11),
        (PEOPLE, "unfiled", PEOPLE + "- New.\n", 14),
        ("# T\n\n## A\n- a\n\n\n## B\n", "A", "# T\n\n## A\n- a\n- New.\n\n\n## B\n", 5),
        ("# T\n\n## A\n- a\n\n\n", "A", "# T\n\n## A\n- a\n- New.\n\n\n", 5),
        # an empty section: right after the heading
        ("# T\n\n## A\n\n## B\n", "A", "# T\n\n## A\n- New.\n\n## B\n", 4),
        ("# T\n\n## A", "A", "# T\n\n## A\n- New.", 4),
        # a new section at the end, after exactly one blank line
        ("# T\n", "New topic", "# T\n\n## New topic\n- New.\n", 4),
        ("# T\n- x\n\n\n\n", "N", "# T\n- x\n\n## N\n- New.\n", 5),
        ("# T\n- x", "N", "# T\n- x\n\n## N\n- New.", 5),
        # no title yet
        ("", "N", "# Title\n\n## N\n- New.\n", 4),
        ("  \n\n", "N", "# Title\n\n## N\n- New.\n", 4),
        ("- x\n", "N", "# Title\n\n- x\n\n## N\n- New.\n", 6),
        ("---\na: 1\n---\n", "N", "---\na: 1\n---\n# Title\n\n## N\n- New.\n", 7),
        ("---\na: 1\n---\n\n- x\n", "N", "---\na: 1\n---\n# Title\n\n- x\n\n## N\n- New.\n", 9),
        # line endings are the file's own
        ("# T\r\n\r\n## A\r\n- a\r\n", "A", "# T\r\n\r\n## A\r\n- a\r\n- New.\r\n", 5),
        ("# T\r\n", "B", "# T\r\n\r\n## B\r\n- New.\r\n", 4),
        ("# T\r\n## A\n- a\r\n", "A", "# T\r\n## A\n- a\r\n- New.\r\n", 4),  # others untouched
        # an HTML block would swallow the bullet: a blank line closes it first
        ("# T\n\n## A\n<div>\nx\n", "A", "# T\n\n## A\n<div>\nx\n\n- New.\n", 7),
        # a list item ends a table, so no blank line is needed there
        ("# T\n## A\n| a |\n|---|\n| 1 |\n", "A", "# T\n## A\n| a |\n|---|\n| 1 |\n- New.\n", 6),
        # a `#` after the section ends it
        ("# T\n## A\n- a\n# U\n- u\n", "A", "# T\n## A\n- a\n- New.\n# U\n- u\n", 4),
    ],
)
def test_add_fact(text: str, heading: str, expected: str, line: int) -> None:
    assert add_fact(text, "New.", heading, "Title") == (expected, line)


@pytest.mark.parametrize(
    "bullet, heading",
    [
        ("", "A"),
        ("   ", "A"),
        ("two\nlines", "A"),
        ("two\rlines", "A"),
        ("sep\u2028arator", "A"),
        ("# looks like a heading", "A"),
        ("```", "A"),
        ("> quote", "A"),
        ("1. nested", "A"),
        ("[ ] task", "A"),
        ("---", "A"),
        ("<div>", "A"),
        ("fine", ""),
        ("fine", "a\nb"),
        ("fine", "trailing ##"),
    ],
)
def test_add_fact_refuses(bullet: str, heading: str) -> None:
    with pytest.raises(ValueError):
        add_fact("# T\n", bullet, heading, "T")


def test_add_fact_refuses_when_file_swallows_line() -> None:
    with pytest.raises(ValueError, match="code fence"):
        add_fact("# T\n## A\n```\n- a\n", "b", "A", "T")


BULLETS = st.text(
    alphabet=st.characters(categories=["L", "N", "P", "S", "Zs"], exclude_characters="\x00"),
    min_size=1,
    max_size=40,
).filter(lambda s: s.strip() and s.strip()[0].isalnum())
HEADINGS = st.sampled_from(["Sarah (Manager)", "sarah (manager)", "Unfiled", "New", "14:05 — x"])
FILE_PARTS = st.sampled_from(
    [
        "# T", "## A", "## Unfiled", "## Sarah (Manager)", "### Sub", "- a fact", "  - nested",
        "para", "> quote", "", "", "<!-- c -->", "| h |", "|---|", "| r |", "---", "<div>",
        "1. one", "- [ ] todo", "text  ", "---\nk: v\n---", "```", "```sh", "    code x", "\t- tabbed",
    ]
)


@st.composite
def vault_files(draw: st.DrawFn) -> tuple[str, str]:
    """A vault-like markdown text built from typical lines, and its line ending."""
    parts = draw(st.lists(FILE_PARTS, max_size=16))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(p.replace("\n", newline) for p in parts)
    bom = markdown.BOM if draw(st.booleans()) else ""
    return bom + text + (newline if parts and draw(st.booleans()) else ""), newline


@settings(max_examples=300, deadline=None)
@given(file=vault_files(), bullet=BULLETS, heading=HEADINGS)
def test_add_fact_round_trips(file: tuple[str, str], bullet: str, heading: str) -> None:
    text, newline = file
    old = parse(text)
    try:
        new_text, line = add_fact(text, bullet, heading, "Title")
    except ValueError:
        return  # refused bullets are covered elsewhere; refusal must never corrupt
    new = parse(new_text)
    mine = [f for f in new.facts if f.line == line]
    assert [f.text for f in mine] == [bullet.strip()]
    assert heading_key(mine[0].section) == heading_key(heading)
    assert [f.text for f in new.facts if f.line != line] == [f.text for f in old.facts]
    assert new_text.startswith(markdown.BOM) == text.startswith(markdown.BOM)
    if text.removeprefix(markdown.BOM).strip():
        assert new_text.endswith(newline) == text.endswith(newline)
    if "\r\n" in text:
        assert new_text.replace("\r\n", "").count("\n") == 0
    assert new.title is not None


@settings(max_examples=400, deadline=None)
@given(file=vault_files(), bullet=BULLETS, heading=HEADINGS)
def test_the_parse_add_fact_leaves_behind_equals_a_full_parse(
    file: tuple[str, str], bullet: str, heading: str
) -> None:
    # add_fact's parse starts from the parse of the text before (core/reparse.py): it must equal a whole one.
    text, _ = file
    with _reparsing_every_text(), contextlib.suppress(ValueError):
        new_text, _line = add_fact(text, bullet, heading, "Title")
        assert markdown.scan(new_text) == markdown.scan_whole(new_text)


@contextlib.contextmanager
def _reparsing_every_text() -> Iterator[list[bool]]:
    """Remember and reparse texts of any length (not only big files'); yields one True per reparse."""
    used: list[bool] = []
    real = reparse.reparse

    def counted(*args):  # type: ignore[no-untyped-def]
        result = real(*args)
        used.append(result is not None)
        return result

    with mock.patch.object(markdown, "_REPARSE_CHARS", 0), mock.patch.object(markdown, "_MIN_CACHED_CHARS", 0), \
            mock.patch.object(reparse, "reparse", counted):
        yield used


@settings(max_examples=200, deadline=None)
@given(bullet=BULLETS, heading=HEADINGS)
def test_add_fact_accepts_plain_bullets(bullet: str, heading: str) -> None:
    # A bullet starting with a letter or digit (and not "1." etc.) must always be accepted.
    if bullet.strip()[0].isdigit():
        return
    new_text, _line = add_fact(PEOPLE, bullet, heading, "People")
    assert new_text.startswith("---\ntags: [x]\n---\n# People\n")


# --- episodes ------------------------------------------------------------------


def test_episode_helpers() -> None:
    assert episode_title("2026-11-29") == "# 2026-11-29\n"
    block = episode_block("14:05", "Deployed the API", ["Deployed v2 to staging.", "Caroline: hi."])
    assert block == "\n## 14:05 — Deployed the API\n- Deployed v2 to staging.\n- Caroline: hi.\n"
    assert episode_block("09:00", "x", ["a"], "\r\n") == "\r\n## 09:00 — x\r\n- a\r\n"
    assert episode_block("09:00", "Quiet", []) == "\n## 09:00 — Quiet\n"
    text = episode_title("2026-11-29") + block + episode_block("15:00", "More", ["b"])
    headings = [s.heading for s in parse(text).sections]
    assert headings == ["14:05 — Deployed the API", "15:00 — More"]
    assert facts(text)[-1] == ("b", 8, "15:00 — More")


@pytest.mark.parametrize(
    "args", [("", "h", []), ("14:05", "two\nlines", []), ("14:05", "h", ["a\nb"])]
)
def test_episode_block_refuses_multiline(args: tuple[str, str, list[str]]) -> None:
    with pytest.raises(ValueError):
        episode_block(*args)


TRICKY_SECTIONS = [
    "- a\n- b\n",
    "- a\n\n- b\n\n",
    "- a\n  - nested\n- b\n  continued\n",
    "- a\n```\n- inside a fence\n\n- still inside\n",
    "- a\n<!--\n- in a comment\n\n- still\n",
    "- a\n### Sub\n- under sub\n",
    "- a\n> quote\n- b\n",
    "* a\n+ b\n1. c\n",
    "- a\n---\n- b\n",
    "text\n- a\nmore text\n",
    "- a\n    - deep\n\n  - b\n",
    "| x | y |\n|---|---|\n| 1 | 2 |\n- a\n",
]


@pytest.mark.parametrize("body", TRICKY_SECTIONS)
@pytest.mark.parametrize("bullets", [1, 200])
def test_a_section_parsed_from_its_last_bullet_equals_a_full_parse(body: str, bullets: int) -> None:
    text = "# T\n\n## S\n" + "".join(f"- fact {n}\n" for n in range(bullets)) + body + "\n## Next\n- z\n"
    with _reparsing_every_text() as used, contextlib.suppress(ValueError):
        markdown.scan(text)
        new_text, _line = add_fact(text, "Brand new fact", "S", "T")
        assert markdown.scan(new_text) == markdown.scan_whole(new_text)
    assert any(used)


def test_an_insert_into_a_big_section_parses_a_few_lines_not_the_section() -> None:
    """Issue 24: saves into one section of 2,000 facts re-parsed all of it (p50 60 -> 259 ms)."""
    text = "# T\n\n## S\n" + "".join(f"- fact number {n}\n" for n in range(2000))
    parse(text)  # the save has parsed the file already, to route and dedup
    parsed_chars = []
    real = blocks.scan_whole

    def counting(source: str):  # type: ignore[no-untyped-def]
        parsed_chars.append(len(source))
        return real(source)

    with mock.patch.object(blocks, "scan_whole", counting):
        new_text, line = add_fact(text, "Brand new fact", "S", "T")
    assert line == 2004 and sum(parsed_chars) < 200
    assert parse(new_text).facts[-1] == markdown.Fact("Brand new fact", 2004, "S")


# -- content_changes: the snapshot's update from the changed lines ----------------------------------
_LINE = st.sampled_from(["- Ann", "- Ann ", "- Bob", "  ", "", "## Team", "- Ann is the CTO.", "Ann", "\x1c- Ann"])


@given(st.lists(_LINE, max_size=8), st.lists(_LINE, max_size=4), st.lists(_LINE, max_size=4),
       st.lists(_LINE, max_size=8), st.sampled_from(["\n", "\r\n"]))
@settings(max_examples=400, deadline=None)
def test_content_changes_are_the_whole_sets_difference(head, old_mid, new_mid, tail, newline) -> None:
    old = newline.join([*head, *old_mid, *tail])
    new = newline.join([*head, *new_mid, *tail])
    old_set, new_set = set(markdown.content_lines(old)), set(markdown.content_lines(new))
    assert markdown.content_changes(old, new) == (new_set - old_set, old_set - new_set)


def test_content_changes_of_one_inserted_line_read_only_the_change() -> None:
    old = "".join(f"- Fact {n} about the stack.\n" for n in range(2000))
    new = old.replace("- Fact 1000 about", "- New fact.\n- Fact 1000 about")
    with mock.patch.object(markdown, "content_lines", side_effect=AssertionError("read whole")):
        assert markdown.content_changes(old, new) == ({"- New fact."}, set())
    # A changed line whose words a shared line also holds needs the whole sets: it is not new.
    again = old.replace("- Fact 1000 about", "- Fact 7 about the stack.\n- Fact 1000 about")
    assert markdown.content_changes(old, again) == (set(), set())
