"""Text as people's editors write it is found: decomposed Unicode (macOS), code blocks, tab-indented lists."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from wolfmem import Memory


def put(vault: Path, rel: str, text: str) -> bytes:
    """Write a file as an editor would, and return its bytes."""
    path = vault / rel
    path.write_text(text, encoding="utf-8")
    return path.read_bytes()


@pytest.mark.parametrize(("written", "typed"), [("NFD", "NFC"), ("NFC", "NFD")])
@pytest.mark.parametrize("word", ["Zoë", "café", "Ångström"])
def test_a_word_is_found_whichever_way_its_accents_are_composed(
    memory: Memory, vault: Path, written: str, typed: str, word: str
) -> None:
    line = f"{word} is mentioned in the notes from Lisbon"
    data = put(vault, "knowledge/notes.md", unicodedata.normalize(written, f"# Notes\n\n- {line}\n"))
    assert unicodedata.normalize(written, word) != unicodedata.normalize(typed, word)
    hits = memory.search(unicodedata.normalize(typed, word))
    assert [(hit.path, hit.line) for hit in hits] == [("knowledge/notes.md", 3)]
    # The file keeps its bytes, and the hit shows the text as it is written there.
    assert (vault / "knowledge/notes.md").read_bytes() == data
    assert hits[0].text == unicodedata.normalize(written, line)


def test_code_blocks_and_a_tab_indented_list_are_searchable(memory: Memory, vault: Path) -> None:
    put(vault, "knowledge/technical.md", (
        "# Technical\n\n"
        "## Servers\n"
        "- The jump host fronts production.\n\n"
        "```sh\n"
        "ssh deploy@bastion.example.com\n"
        "```\n\n"
        "## Build\n\n"
        "    make release VERSION=7\n\n"
        "## Hosts\n"
        "\t- db1 is the primary database\n"
    ))
    # The host name is one dotted word; its parts find it too.
    for query in ("bastion", "bastion.example.com", "deploy bastion"):
        hits = memory.search(query)
        first = [(hit.text, hit.line, hit.section) for hit in hits][:1]
        assert first == [("ssh deploy@bastion.example.com", 7, "Servers")]
    assert [(hit.text, hit.section) for hit in memory.search("release")] == [("make release VERSION=7", "Build")]
    assert [(hit.line, hit.section) for hit in memory.search("primary database")] == [(15, "Hosts")]
