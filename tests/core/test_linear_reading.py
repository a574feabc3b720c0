"""Long lines are read in one pass (h10-inputs review): the patterns that re-read a run from each of its
characters were rewritten, and quoting a line scans only what it shows.

The rewritten patterns must match exactly what the old ones did: each is compared with the old one on
random strings over the characters that matter. Their speed on 1 MB lines is in BENCHMARKS.md
("Long lines"); here the work of quoting is counted in characters handed to the checks.
"""

from __future__ import annotations

import random
import re

import pytest

from wolfmem.core import credentials, entities, instructions, untrusted
from wolfmem.core.credentials import find_secret
from wolfmem.core.markdown import parse
from wolfmem.curation import evidence, validate
from wolfmem.curation.evidence import Safeguards

# The patterns as they were, each quadratic in a run ("a-a-a-…", spaces, "___…", "[[[…").
OLD_ASSIGNMENT_PREFIX = r"(?i)\b(?:[a-z0-9]+[_-])*"
OLD = {
    "clause": (r"\s*(?:[,:;–—]|\s-)\s+(?:(?:and|but|so|then|also|or)\s+)?", instructions._CLAUSE, " ,;-–a"),
    "emphasis": (r"[*`]+|~~|(?<!\w)_+|_+(?!\w)", instructions._EMPHASIS, "_a *~`"),
    "annotation": (r"\s*\[(?:first seen \d{4}-\d{2}-\d{2}[^\]]*|hand-edited[^\]]*)\]\s*$", validate._ANNOTATION,
                   None),
    "separator": (r"\s+[-\u2013\u2014|]\s+|:\s", entities._HEADING_SEPARATOR, " -|:a\u2014"),
}


def _strings(alphabet: str, count: int = 20_000, longest: int = 12) -> list[str]:
    rng = random.Random(7)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(count)]


@pytest.mark.parametrize("name", ["clause", "emphasis"])
def test_a_rewritten_pattern_splits_and_finds_what_the_old_one_did(name):
    old_pattern, new, alphabet = OLD[name]
    old = re.compile(old_pattern)
    for text in _strings(alphabet):
        assert [m.span() for m in new.finditer(text)] == [m.span() for m in old.finditer(text)], repr(text)


def test_the_heading_separator_is_found_where_it_was():
    old_pattern, new, alphabet = OLD["separator"]
    old = re.compile(old_pattern)
    for text in _strings(alphabet):  # a heading is split at its first separator only
        assert new.split(text, maxsplit=1) == old.split(text, maxsplit=1), repr(text)


def test_the_annotation_pattern_strips_what_it_did():
    old = re.compile(OLD["annotation"][0])
    pieces = [" ", "\t", "[first seen 2026-11-01]", "[hand-edited]", "[first seen 2026-11-01 in x]", "a", "]", "["]
    rng = random.Random(3)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        assert validate._ANNOTATION.sub("", text) == old.sub("", text), repr(text)


def test_the_assignment_pattern_finds_what_it_did():
    tail = credentials._ASSIGNMENT.pattern.split("(?P<key>", 1)[1]
    old = re.compile(OLD_ASSIGNMENT_PREFIX + "(?P<key>" + tail)
    pieces = ["a", "1", "_", "-", "db", "password", "token", "=", " ", ":", "x9y8z7w6v5u4", "é", '"']
    rng = random.Random(5)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        found = [(m.group("key"), m.group("value")) for m in credentials._ASSIGNMENT.finditer(text)]
        # The key may now also end an identifier the old prefix could not read ("_x1_token"): never fewer.
        before = [(m.group("key"), m.group("value")) for m in old.finditer(text)]
        assert all(item in found for item in before), repr(text)


def test_qualifiers_are_cut_as_the_old_pattern_cut_them():
    old = re.compile(r"\([^)]*\)|\[[^\]]*\]")
    for text in _strings("ab ()[]", 50_000, 14):
        assert entities._without_qualifiers(text) == old.sub(" ", text), repr(text)


@pytest.mark.parametrize(("text", "kind"), [
    ("DB_PASSWORD=s3cr3t-Value-42", "password"),
    ("the api-token: 9f8e7d6c5b4a3f2e1d0c", "token value"),
    ("key sk-proj-abcdefghij0123456789abcd", "OpenAI API key"),
    ("postgres://admin:hunter2@db.internal/app", "connection string with a password"),
])
def test_secrets_are_still_found(text, kind):
    assert find_secret(text) == kind
    assert find_secret("a-" * 50_000 + " " + text) == kind  # after a long run of what once cost a pass a word


@pytest.mark.parametrize("text", ["uses sk-learn-style-pipelines-for-tabular-data", "sha256:" + "ab12" * 16])
def test_what_is_not_a_secret_still_passes(text):
    assert find_secret(text) is None


def test_quoting_a_long_line_scans_only_what_it_shows(monkeypatch):
    scanned = []
    bound = 240 + untrusted.SCANNED_PAST_QUOTE

    def counting(check):
        def run(text: str, *args):
            scanned.append(len(text))
            assert len(text) <= bound, f"a check was handed {len(text):,} characters to quote at most 240"
            return check(text, *args)
        return run

    for module in (untrusted, evidence):
        monkeypatch.setattr(module, "find_secret", counting(credentials.find_secret))
    monkeypatch.setattr(untrusted, "looks_like_instruction", counting(instructions.looks_like_instruction))
    long = "a-b_" * 250_000  # a 1 MB hand-written line, no spaces
    old = f"# People\n\n## Blob\n- {long}\n- Tom likes tea.\n"
    new = "# People\n\n## Blob\n- Tom likes tea.\n"
    verdict = validate.validate(old, new, [], hand_lines=set(), title="People", guards=Safeguards())
    assert not verdict.ok and "does not account for" in verdict.reasons[0]
    assert scanned and max(scanned) <= bound, max(scanned)
    assert untrusted.quote_untrusted(long, 80).endswith("…") and len(untrusted.quote_untrusted(long, 80)) == 80
    assert max(scanned) <= bound
    assert parse(old).facts  # the line is a fact: what the refusal quoted


def test_a_secret_just_past_what_a_quote_shows_is_still_withheld():
    key = "sk-proj-" + "Ab1" * 10
    assert untrusted.quote_untrusted("x" * 70 + " " + key, 80) == untrusted.WITHHELD_SECRET
