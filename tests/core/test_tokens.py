"""Table tests for wolfmem.text: tokens, stems and content stems."""

from __future__ import annotations

import pytest

from wolfmem.core.tokens import STOP_WORDS, content_stems, stem, tokens


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, World!", ["hello", "world"]),
        ("Uses Python 3.11", ["uses", "python", "3.11"]),
        ("Upgrade to v1.2.3 today.", ["upgrade", "to", "v1.2.3", "today"]),
        ("gpt-4 and utf-8", ["gpt-4", "and", "utf-8"]),
        ("the task-manager service", ["the", "task", "manager", "service"]),
        ("see example.com or node.js", ["see", "example.com", "or", "node.js"]),
        ("Sarah's team", ["sarah", "team"]),
        ("Sarah\u2019s team doesn\u2019t ship", ["sarah", "team", "doesn't", "ship"]),
        ("Café Ünïcode straße", ["café", "ünïcode", "straße"]),
        ("OPENAI_API_KEY env var", ["openai_api_key", "env", "var"]),
        ("3.5 GB (approx.)", ["3.5", "gb", "approx"]),
        ("a/b|c;d", ["a", "b", "c", "d"]),
        ("Ends with a dot.", ["ends", "with", "a", "dot"]),
        ("", []),
    ],
)
def test_tokens(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


@pytest.mark.parametrize(
    "forms",
    [
        ("jog", "jogging", "jogged"),  # Whoosh's Porter gave "jogg": it never undoubles
        ("plan", "planned", "planning"),
        ("organize", "organized", "organizing"),  # ... nor adds back -ize's e ("organiz")
        ("motivate", "motivated"),
        ("deploy", "deploys"),
        ("manager", "managers"),
    ],
)
def test_stem_joins_the_forms_of_a_word(forms: tuple[str, ...]) -> None:
    assert len({stem(form) for form in forms}) == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What did Sarah say about deploys?", ["sarah", "say", "deploy"]),
        ("I prefer conventional commits", ["prefer", "convent", "commit"]),
        ("Uses Python 3.11", ["use", "python", "3.11"]),
        ("the of and", []),
    ],
)
def test_content_stems(text: str, expected: list[str]) -> None:
    assert content_stems(text) == expected


@pytest.mark.parametrize(
    "word", ["the", "what", "when", "where", "who", "how", "did", "does", "my"]
)
def test_stop_words_include(word: str) -> None:
    assert word in STOP_WORDS
