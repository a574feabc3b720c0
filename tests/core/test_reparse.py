"""A parse built from an earlier text's parse equals the whole parse (core/reparse.py)."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wolfmem.core import blocks, markdown
from wolfmem.core.reparse import reparse

PARTS = [
    "# T", "# Second", "## A", "## Unfiled", "## Sarah (Manager)", "### Sub", "- a fact", "- another fact",
    "* star fact", "+ plus fact", "  - nested", "  continued", "para", "> quote", "", "", "", "<!-- c -->",
    "<!--", "-->", "| h |", "|---|", "| r |", "- x | y", "---", "***", "- - -", "<div>", "</div>", "1. one",
    "- [ ] todo", "text  ", "```", "```sh", "~~~", "    code x", "\t- tabbed", "===", "[ref]: /url", "-",
    "- ", "\\- escaped", "## ", "#", "#not a heading",
]
# Mostly the lines of a vault file, so most edits leave a line to start again from.
COMMON = ["- a fact", "- another fact", "## A", "## Sarah (Manager)", ""]
LINES = st.lists(st.sampled_from([*PARTS, *COMMON * 8]), max_size=60)


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, str]:
    """A markdown text and the same text after a few line edits (inserts, deletes, replacements, appends)."""
    lines = draw(LINES)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    front = ["---", "k: v", "---"] if draw(st.booleans()) else []
    old = [*front, *lines]
    new = list(old)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(new)))
        kind = draw(st.sampled_from(["insert", "delete", "replace", "append"]))
        added = draw(st.lists(st.sampled_from([*PARTS, *COMMON * 2]), min_size=1, max_size=4))
        if kind == "insert":
            new[at:at] = added
        elif kind == "delete":
            del new[at:at + len(added)]
        elif kind == "replace":
            new[at:at + 1] = added
        else:
            new += added
    end = newline if draw(st.booleans()) else ""
    bom = markdown.BOM if draw(st.booleans()) else ""

    def text(lines: list[str]) -> str:
        return bom + newline.join(lines) + (end if lines else "")

    return text(old), text(new)


@settings(max_examples=3000, deadline=None)
@given(pair=edits())
def test_a_reparse_equals_the_whole_parse(pair: tuple[str, str]) -> None:
    old_text, text = pair
    derived = reparse(old_text, markdown.scan_whole(old_text), text)
    if derived is not None:
        assert derived == markdown.scan_whole(text)


def _people(facts: int) -> str:
    return "# People\n" + "".join(
        f"\n## Person {n // 10}\n" * (n % 10 == 0) + f"- Person {n // 10} fact number {n}\n" for n in range(facts))


def test_an_append_to_a_big_file_parses_the_appended_lines_only() -> None:
    """Issue 28: a script appending to a 3,000-line file made every sync parse all of it again."""
    old_text = _people(3000)
    text = old_text + "- Script line 1 appended during the run\n- Script line 2\n"
    parsed_chars: list[int] = []
    real = blocks.scan_whole

    def counting(source: str):  # type: ignore[no-untyped-def]
        parsed_chars.append(len(source))
        return real(source)

    old = real(old_text)
    with mock.patch.object(blocks, "scan_whole", counting):
        derived = reparse(old_text, old, text)
    assert derived == real(text)
    assert sum(parsed_chars) < 200


def _parsed_chars(old_text: str, text: str) -> list[int]:
    """The lengths of the sources `reparse` parsed from `old_text` to `text`, once its result equals a whole parse."""
    parsed_chars: list[int] = []
    real = blocks.scan_whole

    def counting(source: str):  # type: ignore[no-untyped-def]
        parsed_chars.append(len(source))
        return real(source)

    with mock.patch.object(blocks, "scan_whole", counting):
        derived = reparse(old_text, real(old_text), text)
    assert derived == real(text)
    return parsed_chars


def test_an_edit_in_the_middle_parses_its_section_only() -> None:
    old_text = _people(3000)
    lines = markdown.lines_of(old_text)
    lines[1500] = "- A person's new line, typed by hand\n- and a second one\n"
    text = "".join(lines)
    parsed_chars = _parsed_chars(old_text, text)
    assert sum(parsed_chars) < 600


@pytest.mark.parametrize("facts", [2_000, 8_000])
def test_an_edit_in_one_big_section_parses_up_to_the_next_bullet_only(facts: int) -> None:
    """A hand edit in the middle of one 8,000-line `##` section parsed the rest of the file (250,174 chars)."""
    old_text = "# Technical\n\n## Stack\n" + "".join(f"- Item {n} runs on port {1000 + n}.\n" for n in range(facts))
    lines = markdown.lines_of(old_text)
    lines[facts // 2] = "- Item typed by hand\n  continued on a second line\n"
    text = "".join(lines)
    parsed_chars = _parsed_chars(old_text, text)
    assert sum(parsed_chars) < 3_000  # the same at both sizes: the lines from the restart to the next bullet


def test_scan_starts_from_the_remembered_text_of_the_same_file() -> None:
    old_text = _people(2000)
    markdown.scan(old_text)
    text = old_text + "- One more line\n"
    with mock.patch("wolfmem.core.reparse.reparse", wraps=reparse) as used:
        assert markdown.scan(text) == markdown.scan_whole(text)
    assert used.call_count == 1


def test_two_big_files_appended_to_in_turn_are_each_parsed_from_their_last_text() -> None:
    """Issue 28: versions of one file at the size cap filled the remembered texts and evicted the other's."""
    texts = {"people": _people(12_000), "projects": _people(12_000).replace("Person", "Project")}
    for text in texts.values():
        markdown.scan(text)
    whole: list[int] = []
    real = blocks.scan_whole

    def counting(source: str):  # type: ignore[no-untyped-def]
        if len(source) > 10_000:
            whole.append(len(source))
        return real(source)

    with mock.patch.object(blocks, "scan_whole", counting):
        for n in range(6):
            for name, versions in (("people", 5), ("projects", 1)):  # a save's retries parse several in a row
                for k in range(versions):
                    texts[name] += f"- Script line {n}.{k} appended to {name}\n"
                    markdown.scan(texts[name])
    assert whole == []
    assert markdown.scan(texts["people"]) == real(texts["people"])


def test_an_unclosed_fence_in_the_change_means_a_whole_parse() -> None:
    old_text = _people(300)
    lines = markdown.lines_of(old_text)
    lines[100:100] = ["```\n"]
    text = "".join(lines)
    derived = reparse(old_text, markdown.scan_whole(old_text), text)
    assert derived is None or derived == markdown.scan_whole(text)
    assert markdown.scan(text) == markdown.scan_whole(text)


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(["a", " ", "\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x85", "\u2028", "é"]),
                max_size=40).map("".join))
def test_lines_break_only_at_cr_and_lf(text: str) -> None:
    """The fast split (str.splitlines) is used only where it breaks exactly where the line pattern does."""
    lines = markdown.lines_of(text)
    assert lines == blocks._LINE_RE.findall(text)
    assert "".join(lines) == text
