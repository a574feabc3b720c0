"""The deterministic offline curator: merges duplicates, files unfiled facts, drops empty sections, nothing else."""

from __future__ import annotations

import pytest

from wolfmem.curation.contract import CurationRequest, FileInput
from wolfmem.curation.offline import OfflineCurator, tidy
from wolfmem.curation.validate import validate


def tidied(text: str, hand: set[str] | None = None) -> tuple[str, list[dict]]:
    return tidy(FileInput("knowledge/people.md", text, {}, frozenset(hand or ())))


CASES = [
    (
        "exact duplicate, case and punctuation aside",
        "# People\n\n## Sarah\n- Sarah is my manager.\n- sarah is my manager\n",
        "# People\n\n## Sarah\n- Sarah is my manager.\n",
    ),
    (
        "paraphrase across sections",
        "# People\n\n## Sarah\n- Sarah is my manager\n\n## Unfiled\n- My manager is Sarah\n",
        "# People\n\n## Sarah\n- Sarah is my manager\n",
    ),
    (
        "value change is not a duplicate",
        "# People\n\n## Sarah\n- My manager is Sarah\n- My manager is Susan\n",
        "# People\n\n## Sarah\n- My manager is Sarah\n- My manager is Susan\n",
    ),
    (
        "unfiled fact goes to the section it names",
        "# People\n\n## Sarah (Manager)\n- Sarah is my manager.\n\n## Tom\n- Tom runs data.\n\n"
        "## Unfiled\n- Tom prefers chess.\n- The office is in Berlin.\n",
        "# People\n\n## Sarah (Manager)\n- Sarah is my manager.\n\n## Tom\n- Tom runs data.\n- Tom prefers chess.\n\n"
        "## Unfiled\n- The office is in Berlin.\n",
    ),
    (
        "a fact naming two sections stays unfiled",
        "# People\n\n## Sarah\n- a\n\n## Tom\n- b\n\n## Unfiled\n- Sarah and Tom share an office.\n",
        "# People\n\n## Sarah\n- a\n\n## Tom\n- b\n\n## Unfiled\n- Sarah and Tom share an office.\n",
    ),
    (
        "empty sections are dropped, the emptied Unfiled too",
        "# People\n\n## Empty\n\n## Tom\n- b\n\n## Unfiled\n- Tom likes tea.\n",
        "# People\n\n## Tom\n- b\n- Tom likes tea.\n",
    ),
    (
        "nothing is sorted or reworded",
        "# People\n\n## Zed\n- z fact\n- a fact\n\n## Amy\n- amy fact\n",
        "# People\n\n## Zed\n- z fact\n- a fact\n\n## Amy\n- amy fact\n",
    ),
    (
        "non-bullet content is left alone",
        "# People\n\n## Sarah\nSarah is my manager.\nSarah is my manager.\n| a | b |\n",
        "# People\n\n## Sarah\nSarah is my manager.\nSarah is my manager.\n| a | b |\n",
    ),
]


@pytest.mark.parametrize(("name", "before", "after"), CASES, ids=[c[0] for c in CASES])
def test_tidy(name, before, after):
    text, changes = tidied(before)
    assert text == after
    # Whatever it does passes the same validation the LLM's rewrites must pass.
    if text != before:
        assert validate(before, text, changes, hand_lines=set(), title="People").ok


def test_hand_written_duplicate_is_the_one_kept():
    before = "# People\n\n## Sarah\n- Sarah is my manager\n- My manager is Sarah\n"
    text, changes = tidied(before, {"- My manager is Sarah"})
    assert text == "# People\n\n## Sarah\n- My manager is Sarah\n"
    assert changes[0]["new"] == "- My manager is Sarah"


def test_two_hand_written_duplicates_are_left_to_the_person():
    before = "# People\n\n## Sarah\n- Sarah is my manager\n- My manager is Sarah\n"
    assert tidied(before, {"- Sarah is my manager", "- My manager is Sarah"})[0] == before


def test_hand_written_empty_heading_stays():
    before = "# People\n\n## Later\n\n## Tom\n- b\n"
    assert tidied(before, {"## Later"})[0] == before


def test_change_list_names_every_step():
    before = "# People\n\n## Tom\n- Tom runs data.\n- tom runs data\n\n## Gone\n\n## Unfiled\n- Tom likes tea.\n"
    _, changes = tidied(before)
    assert [c["kind"] for c in changes] == ["merged", "filed", "removed", "removed"]


def test_curator_answers_unchanged_or_rewrite():
    request = CurationRequest(
        "2026-11-29",
        "2026-11-28",
        {
            "knowledge/people.md": FileInput("knowledge/people.md", "# People\n\n## A\n- x\n- x\n"),
            "knowledge/projects.md": FileInput("knowledge/projects.md", "# Projects\n\n## B\n- y\n"),
        },
    )
    proposal = OfflineCurator().propose(request)
    assert proposal.files["knowledge/people.md"].status == "rewrite"
    assert proposal.files["knowledge/people.md"].content == "# People\n\n## A\n- x\n"
    assert proposal.files["knowledge/people.md"].summary == "1 duplicate(s) merged."
    assert proposal.files["knowledge/projects.md"].status == "unchanged"
    assert proposal.requests == 0 and proposal.usage == {}
    assert "offline" in OfflineCurator.label


def test_many_facts_stay_fast():
    lines = "".join(f"- Service number {i} listens on port {8000 + i}.\n" for i in range(400))
    text, changes = tidied(f"# Technical\n\n## Ports\n{lines}")
    assert changes == [] and text.endswith("port 8399.\n")
