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
    assert changes[0].new == "- My manager is Sarah"


def test_two_hand_written_duplicates_are_left_to_the_person():
    before = "# People\n\n## Sarah\n- Sarah is my manager\n- My manager is Sarah\n"
    assert tidied(before, {"- Sarah is my manager", "- My manager is Sarah"})[0] == before


def test_hand_written_empty_heading_stays():
    before = "# People\n\n## Later\n\n## Tom\n- b\n"
    assert tidied(before, {"## Later"})[0] == before


def test_change_list_names_every_step():
    before = "# People\n\n## Tom\n- Tom runs data.\n- tom runs data\n\n## Gone\n\n## Unfiled\n- Tom likes tea.\n"
    _, changes = tidied(before)
    assert [c.kind for c in changes] == ["merged", "filed", "removed", "removed"]


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


# -- sections about one entity (issue 16) -------------------------------------------------------
ENTITY_CASES = [
    (
        "a bare name joins the section about that entity",
        "# People\n\n## Sarah (Manager)\n- Sarah is my manager.\n\n## Tom\n- Tom runs data.\n\n"
        "## Sarah\n- Sarah likes tea.\n",
        "# People\n\n## Sarah (Manager)\n- Sarah is my manager.\n- Sarah likes tea.\n\n## Tom\n- Tom runs data.\n",
    ),
    (
        "the bare name first: its lines move down, nothing is lost",
        "# People\n\n## Sarah\n- Sarah likes tea.\nShe drinks it black.\n\n"
        "## Sarah (Manager)\n- Sarah is my manager.\n",
        "# People\n\n## Sarah (Manager)\n- Sarah is my manager.\n- Sarah likes tea.\nShe drinks it black.\n",
    ),
    (
        "a wikilink heading is the entity's section",
        "# People\n\n## [[Dave Smith|Dave]]\n- Dave owns billing.\n\n## Dave\n- Dave likes chess.\n",
        "# People\n\n## [[Dave Smith|Dave]]\n- Dave owns billing.\n- Dave likes chess.\n",
    ),
    (
        "a repeated bare heading joins the first",
        "# People\n\n## Tom\n- Tom runs data.\n\n## Ana\n- Ana runs ops.\n\n## tom\n- Tom likes chess.\n",
        "# People\n\n## Tom\n- Tom runs data.\n- Tom likes chess.\n\n## Ana\n- Ana runs ops.\n",
    ),
    (
        "two candidates: left alone",
        "# People\n\n## Dave Smith\n- a\n\n## Dave Jones\n- b\n\n## Dave\n- Dave likes chess.\n",
        "# People\n\n## Dave Smith\n- a\n\n## Dave Jones\n- b\n\n## Dave\n- Dave likes chess.\n",
    ),
    (
        "two people of that name: left alone",
        "# People\n\n## Sarah\n- Sarah likes tea.\n\n## Sarah (Manager)\n- Sarah is my manager.\n\n"
        "## Sarah (Designer)\n- c\n",
        "# People\n\n## Sarah\n- Sarah likes tea.\n\n## Sarah (Manager)\n- Sarah is my manager.\n\n"
        "## Sarah (Designer)\n- c\n",
    ),
    (
        "another person with the same first name stays apart",
        "# People\n\n## Sarah (Manager)\n- a\n\n## Sarah Connor\n- b\n",
        "# People\n\n## Sarah (Manager)\n- a\n\n## Sarah Connor\n- b\n",
    ),
    (
        "generic headings name no entity",
        "# People\n\n## Notes\n- a\n\n## Project Notes\n- b\n",
        "# People\n\n## Notes\n- a\n\n## Project Notes\n- b\n",
    ),
]


@pytest.mark.parametrize(("name", "before", "after"), ENTITY_CASES, ids=[c[0] for c in ENTITY_CASES])
def test_sections_about_one_entity_are_joined(name: str, before: str, after: str) -> None:
    text, changes = tidied(before)
    assert text == after
    def content(text: str) -> list[str]:
        return sorted(line for line in text.splitlines() if line.strip() and not line.startswith("#"))

    assert content(text) == content(before)  # not a line lost
    if text != before:
        assert validate(before, text, changes, hand_lines=set(), title="People").ok
        assert {change.kind for change in changes} == {"filed", "removed"}


def test_a_hand_written_bare_heading_is_kept() -> None:
    before = "# People\n\n## Sarah (Manager)\n- Sarah is my manager.\n\n## Sarah\n- Sarah likes tea.\n"
    assert tidied(before, {"## Sarah"})[0] == before


def test_a_join_that_would_reorder_hand_written_lines_is_not_made() -> None:
    before = "# People\n\n## Sarah\n- Sarah likes tea.\n\n## Tom\n- Tom runs data.\n\n## Sarah (Manager)\n- a\n"
    assert tidied(before, {"- Sarah likes tea.", "- Tom runs data."})[0] == before


def test_joined_section_summary() -> None:
    request = CurationRequest(
        "2026-11-29", "2026-11-28",
        {"knowledge/people.md":
            FileInput("knowledge/people.md", "# People\n\n## Sarah (Manager)\n- a\n\n## Sarah\n- b\n")},
    )
    proposal = OfflineCurator().propose(request).files["knowledge/people.md"]
    assert proposal.content == "# People\n\n## Sarah (Manager)\n- a\n- b\n"
    assert proposal.summary == "1 fact(s) filed, 1 empty section(s) dropped."


def test_the_offline_curator_leaves_code_blocks_as_written() -> None:
    fence = "```sh\nssh deploy@bastion.example.com\n- db1 is the primary\n- db1 is the primary\n\n\n```\n"
    before = (
        "# Technical\n\n## Deploy\n" + fence + "\n## Build\n\n    make release VERSION=7\n\n"
        "## Hosts\n\t- db2 is the replica\n\t- db2 is the replica\n\n"
        "## Unfiled\n- Deploys go through the bastion.\n- deploys go through the bastion\n"
    )
    text, changes = tidy(FileInput("knowledge/technical.md", before, {}, frozenset()))
    # Only the duplicate bullet goes; the code (look-alike duplicates, a section of code alone) stays.
    assert text == before.replace("- deploys go through the bastion\n", "")
    assert fence in text and "\t- db2 is the replica\n\t- db2 is the replica\n" in text
    assert [c.kind for c in changes] == ["merged"]
    assert validate(before, text, changes, hand_lines=set(), title="Technical").ok


# --- issue 23: the same words under another heading are another person's fact ----------------

OPPOSITES = (
    "# People\n\n## Sarah\n- Prefers tabs over spaces\n- Reports to Bob\n- Prefers tea\n- Works from home on Fridays\n"
)


def test_a_night_of_offline_curation_merges_no_fact_into_another_persons_line(tmp_path) -> None:
    from datetime import UTC, date, datetime

    from wolfmem import Config, Memory
    from wolfmem.curation.run import run

    night = datetime(2026, 11, 29, 3, 0, tzinfo=UTC)
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state")), clock=lambda: night) as memory:
        people = memory.vault.root / "knowledge" / "people.md"
        people.write_text(OPPOSITES, "utf-8")  # written by the person
        saved = [
            memory.save("Prefers spaces over tabs", "people", "Tom"),  # the opposite, for someone else
            memory.save("Bob reports to Tom", "people", "Tom"),
            memory.save("Prefers tea", "people", "Tom"),  # the same words, of someone else
            memory.save("Works from home on Fridays", "people"),  # the user's, not Sarah's
        ]
        assert [receipt.status for receipt in saved] == ["saved"] * 4
        before = people.read_text("utf-8")
        memory.log_episode("Talked with Sarah and Tom about the office.", "office",
                           when=datetime(2026, 11, 29, 1, 0, tzinfo=UTC))
        result = run(memory.services, OfflineCurator(), date(2026, 11, 29))
        after = people.read_text("utf-8")
        assert result.status != "failed"
        assert after == before  # nothing merged, nothing removed, nothing moved
        log = memory.vault.root / "consolidated" / "2026-W48.md"
        assert "5 unchanged" in log.read_text("utf-8") and "merged" not in log.read_text("utf-8")


def test_tidy_keeps_the_same_words_under_two_headings() -> None:
    before = "# People\n\n## Sarah\n- Prefers tea\n- Prefers tabs over spaces\n\n## Tom\n- Prefers tea\n" \
             "- Prefers spaces over tabs\n\n## Unfiled\n- Prefers tea\n"
    assert tidied(before) == (before, [])
