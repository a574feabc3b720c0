"""Adversarial review of the meaning guards (h11-mcp): a fact's value, polarity and subject change only on
evidence about that subject, and a rewrite that accounts for every line still may not flip, move, invent or
merge one.

The validator tables come first (each hostile line tried undeclared, as a merge and as a supersession), then
the same through nights and the audit of the real openai client against FakeLLM, then save-time dedup.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from conftest import Clock

from wolfmem import Memory
from wolfmem.curation.audit.run import run_audit
from wolfmem.curation.contract import Change, ChangeKind
from wolfmem.curation.evidence import Safeguards
from wolfmem.curation.meaning import without_measures
from wolfmem.curation.run import run
from wolfmem.curation.validate import validate

FILE = """# People

## Sarah
{sarah}
- The printer is on the second floor.

## Tom
{tom}
"""
TOM = "- Tom plays chess on Sundays."


def check(sarah_old: str, sarah_new: str, changes=(), evidence=(), tom_old: str = TOM, tom_new: str | None = None):
    old = FILE.format(sarah=sarah_old, tom=tom_old)
    new = FILE.format(sarah=sarah_new, tom=tom_old if tom_new is None else tom_new)
    return validate(old, new, list(changes), hand_lines=set(), title="People", guards=Safeguards(evidence=evidence))


def as_each_change(before: str, after: str, evidence: tuple[str, ...]) -> dict[str, bool]:
    """Whether the rewrite lands with no change listed, as a merge, and as a supersession."""
    verdicts = {}
    for kind in ("", "merged", "superseded"):
        changes = [Change(ChangeKind(kind), (f"- {before}",), f"- {after}", "newer")] if kind else []
        verdicts[kind or "undeclared"] = check(f"- {before}", f"- {after}", changes, evidence).ok
    return verdicts


# (on file, the curator's line, the evidence since the last run): every one must be refused, however listed.
HOSTILE = {
    "3 -> 30": ("Sarah has 3 cats.", "Sarah has 30 cats.", ()),
    "3 -> 30, evidence says not 30": ("Sarah has 3 cats.", "Sarah has 30 cats.", ("Sarah has 3 cats, not 30.",)),
    "Tuesday -> Thursday": ("Sarah's standup is on Tuesday.", "Sarah's standup is on Thursday.", ()),
    "2023 -> 2024": ("Sarah joined in 2023.", "Sarah joined in 2024.", ()),
    "$5k -> $50k": ("Sarah's budget is $5k.", "Sarah's budget is $50k.", ()),
    "km -> miles": ("Sarah runs 5 km a day.", "Sarah runs 5 miles a day.", ()),
    "never": ("Sarah drinks coffee.", "Sarah never drinks coffee.", ()),
    "no longer": ("Sarah drinks coffee.", "Sarah no longer drinks coffee.", ()),
    "stopped": ("Sarah drinks coffee.", "Sarah stopped drinking coffee.", ()),
    "quit": ("Sarah drinks coffee.", "Sarah quit drinking coffee.", ()),
    "doesn't any more": ("Sarah drinks coffee.", "Sarah doesn't drink coffee any more.", ()),
    "used to": ("Sarah drinks coffee.", "Sarah used to drink coffee.", ()),
    "gave up": ("Sarah drinks coffee.", "Sarah gave up coffee.", ()),
    "isn't": ("Sarah is a vegetarian.", "Sarah isn't a vegetarian.", ()),
    "was": ("Sarah is a vegetarian.", "Sarah was a vegetarian.", ()),
    "hardly": ("Sarah is a vegetarian.", "Sarah is hardly a vegetarian.", ()),
    "barely": ("Sarah is a vegetarian.", "Sarah is barely a vegetarian.", ()),
    "former": ("Sarah is a vegetarian.", "Sarah is a former vegetarian.", ()),
    "almost": ("Sarah is a vegetarian.", "Sarah is almost a vegetarian.", ()),
    "far from": ("Sarah is a vegetarian.", "Sarah is far from a vegetarian.", ()),
    "mildly": ("Sarah is allergic to peanuts.", "Sarah is mildly allergic to peanuts.", ()),
    "never removed": ("Sarah never drinks coffee.", "Sarah drinks coffee.", ()),
    "used to removed": ("Sarah used to smoke.", "Sarah smokes.", ()),
    "likes -> dislikes": ("Sarah likes jazz.", "Sarah dislikes jazz.", ()),
    "tea over coffee": ("Sarah prefers tea over coffee.", "Sarah prefers coffee over tea.", ()),
    "before -> after": ("Sarah arrives before the standup.", "Sarah arrives after the standup.", ()),
    "increase -> decrease": ("Sarah wants to increase the budget.", "Sarah wants to decrease the budget.", ()),
    "allows -> forbids": ("Sarah allows remote work.", "Sarah forbids remote work.", ()),
    "enabled -> disabled": ("Sarah enabled 2FA on the account.", "Sarah disabled 2FA on the account.", ()),
    "subjects swapped": ("Sarah reports to Tom.", "Tom reports to Sarah.", ()),
    "only dropped": ("Sarah only drinks decaf coffee.", "Sarah drinks decaf coffee.", ()),
    "sometimes dropped": ("Sarah sometimes works from home.", "Sarah works from home.", ()),
    "except dropped": ("Sarah works from home except on Mondays.", "Sarah works from home.", ()),
    "zero-width inside a number": ("Sarah has 3 cats.", "Sarah has 3\u200b0 cats.", ()),
    "zero-width inside a word": ("Sarah likes jazz.", "Sarah d\u200bislikes jazz.", ()),
    "soft hyphen": ("Sarah drinks coffee.", "Sarah never\u00addrinks coffee.", ()),
    "Cyrillic look-alike": ("Sarah lives in Berlin.", "Sarah lives in \u0412erlin.", ()),
    "word joiner at the end": ("Sarah drinks coffee.", "Sarah drinks coffee.\u2060", ()),
    # evidence that holds the new value without saying it
    "refused to move": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah refused to move to Paris.",)),
    "declined the job": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah declined the job in Paris.",)),
    "wants to live": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah wants to live in Paris.",)),
    "hopes to live": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah hopes to live in Paris one day.",)),
    "hates the place": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah hates Paris.",)),
    "visited": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah visited Paris last week.",)),
    "flew to": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah flew to Paris for a conference.",)),
    "thought about": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah thought about moving to Paris.",)),
    "born in": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah was born in Paris.",)),
    "wants 30": ("Sarah has 3 cats.", "Sarah has 30 cats.", ("Sarah wants 30 cats.",)),
    "plans in 2024": ("Sarah joined in 2023.", "Sarah joined in 2024.", ("Sarah plans a trip in 2024.",)),
    "an hour from": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah lives an hour from Paris.",)),
    "almost moved": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah almost moved to Paris.",)),
    "dreamt": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah dreamt she lived in Paris.",)),
    "pretends": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah pretends to live in Paris.",)),
    "denied": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah denied she lives in Paris.",)),
    "a rumour": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Rumour has it Sarah lives in Paris.",)),
    "donated 30": ("Sarah has 3 cats.", "Sarah has 30 cats.", ("Sarah donated 30 cats to the shelter.",)),
    "ran 35 laps": ("Sarah is 34.", "Sarah is 35.", ("Sarah ran 35 laps.",)),
    "30 cats' worth": ("Sarah has 3 cats.", "Sarah has 30 cats.", ("Sarah bought 30 cats' worth of food.",)),
    "2 weeks' worth": ("Sarah is away 3 days.", "Sarah is away 2 weeks.", ("Sarah packed 2 weeks' worth of clothes.",)),
    "moving next year": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah is moving to Paris next year.",)),
    "going to move": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah is going to move to Paris.",)),
    "moves soon": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah moves to Paris soon.",)),
    # evidence about someone else
    "Tom moved": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Tom moved to Paris.",)),
    "her manager": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah's manager lives in Paris.",)),
    "Tom has 30": ("Sarah has 3 cats.", "Sarah has 30 cats.", ("Tom has 30 cats.",)),
    "Tom dislikes": ("Sarah likes jazz.", "Sarah dislikes jazz.", ("Tom dislikes jazz.",)),
    "Tom joined": ("Sarah joined in 2023.", "Sarah joined in 2024.", ("Tom joined in 2024.",)),
    "another drink": ("Sarah drinks coffee.", "Sarah no longer drinks coffee.", ("Sarah no longer drinks tea.",)),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_changed_meaning_is_refused_however_it_is_listed(case):
    assert as_each_change(*HOSTILE[case]) == {"undeclared": False, "merged": False, "superseded": False}


# Newer evidence that says the new claim of the same subject: the supersession lands.
BACKED = {
    "moved": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah moved to Paris.",)),
    "says so now": ("Sarah lives in Berlin.", "Sarah lives in Paris.", ("Sarah said she lives in Paris now.",)),
    "4 cats": ("Sarah has 3 cats.", "Sarah has 4 cats.", ("Sarah adopted another cat, so she has 4 cats now.",)),
    "reported no longer": ("Sarah drinks coffee.", "Sarah no longer drinks coffee.",
                           ("Sarah said she no longer drinks coffee.",)),
    "dislikes now": ("Sarah likes jazz.", "Sarah dislikes jazz.", ("Sarah told me she dislikes jazz now.",)),
    "standup moved": ("Sarah's standup is on Tuesday.", "Sarah's standup is on Thursday.",
                      ("Sarah's standup moved to Thursday.",)),
    "actually 2024": ("Sarah joined in 2023.", "Sarah joined in 2024.", ("Sarah actually joined in 2024.",)),
    "raised to $50k": ("Sarah's budget is $5k.", "Sarah's budget is $50k.", ("Sarah's budget was raised to $50k.",)),
    "coffee over tea": ("Sarah prefers tea over coffee.", "Sarah prefers coffee over tea.",
                        ("Sarah prefers coffee over tea these days.",)),
    "turned 35": ("Sarah is 34.", "Sarah is 35.", ("Sarah turned 35 today.",)),
    "she's 35": ("Sarah is 34.", "Sarah is 35.", ("She's 35 now, Sarah said.",)),
    "took over": ("Bob leads Atlas.", "Sarah leads Atlas.", ("Sarah took over Atlas from Bob.",)),
}


@pytest.mark.parametrize("case", BACKED)
def test_a_change_newer_evidence_says_still_lands(case):
    before, after, evidence = BACKED[case]
    assert as_each_change(before, after, evidence)["superseded"]


def add(line: str, evidence: tuple[str, ...]) -> bool:
    return check("- Sarah likes jazz.", f"- Sarah likes jazz.\n- {line}", evidence=evidence).ok


@pytest.mark.parametrize(("line", "evidence"), [
    ("Sarah lives in Paris.", "Sarah refused to move to Paris."),
    ("Sarah lives in Paris.", "Sarah might move to Paris."),
    ("Sarah lives in Paris.", "Does Sarah live in Paris?"),
    ("Sarah lives in Paris.", "Sarah visited Paris."),
    ("Sarah lives in Paris.", "Sarah wants to live in Paris."),
    ("Sarah lives in Paris.", "Sarah is moving to Paris next month."),
    ("Lives in Paris.", "Sarah visited Paris."),
    ("Sarah has 30 cats.", "Sarah wants 30 cats."),
    ("Sarah has 30 cats.", "Sarah bought 30 cats' worth of food."),
    ("Sarah is allergic to peanuts.", "Sarah ate peanuts at lunch."),
    ("Sarah plays chess on Sundays.", "Tom plays chess on Sundays."),
])
def test_an_invented_line_needs_evidence_that_says_it(line, evidence):
    assert not add(line, (evidence,))


@pytest.mark.parametrize(("line", "evidence"), [
    ("Sarah lives in Paris.", "Sarah moved to Paris."),
    ("Sarah has a dog called Rex.", "Sarah got a dog called Rex."),
    ("Sarah has a cat.", "Sarah has a cat now, she said."),
    ("Sarah bought a week's worth of food.", "Sarah bought a week's worth of food for the trip."),
])
def test_an_addition_the_evidence_says_lands(line, evidence):
    assert add(line, (evidence,))


def test_a_line_naming_sarah_never_moves_under_tom():
    moved = check("- Sarah lives in Berlin.\n- Likes jazz.", "- Likes jazz.",
                  tom_old="- Plays chess.", tom_new="- Plays chess.\n- Sarah lives in Berlin.")
    assert not moved.ok and "another subject" in moved.reasons[0], moved.reasons
    # Merged into a line under Tom's heading that names her, it is not hers either.
    merged = check("- Sarah likes jazz.", "", [Change(ChangeKind.MERGED, ("- Sarah likes jazz.",),
                                                      "- Sarah likes jazz music.", "tidy")],
                   tom_new=f"{TOM}\n- Sarah likes jazz music.")
    assert not merged.ok, merged.reasons
    # Misfiled under Tom, it may be filed back under her own heading (README rule 3).
    assert check("- Likes jazz.", "- Likes jazz.\n- Sarah lives in Berlin.", tom_old=f"{TOM}\n- Sarah lives in Berlin.",
                 tom_new=TOM).ok


@pytest.mark.parametrize(("sarah", "tom", "into"), [
    ("- Sarah likes jazz.", "- Tom likes jazz.", "- Sarah and Tom like jazz."),
    ("- Sarah likes jazz.", "- Tom likes jazz.", "- Likes jazz."),
])
def test_facts_of_two_people_never_merge_into_one(sarah, tom, into):
    change = Change(ChangeKind.MERGED, (sarah, tom), into, "the same")
    assert not check(sarah, into, [change], tom_old=tom, tom_new="").ok


@pytest.mark.parametrize(("facts", "into"), [
    ("- Sarah likes jazz.\n- Sarah likes blues.", "- Sarah likes jazz."),
    ("- Sarah has 3 cats.\n- Sarah has 30 cats.", "- Sarah has 30 cats."),
])
def test_two_different_facts_never_merge_into_one_of_them(facts, into):
    lines = tuple(facts.splitlines())
    assert not check(facts, into, [Change(ChangeKind.MERGED, lines, into, "the same")]).ok


@pytest.mark.parametrize(("facts", "into", "lands"), [
    (("- Sarah drinks tea in the morning.", "- Sarah drinks coffee at night."),
     "- Sarah drinks tea at night and coffee in the morning.", False),
    (("- Sarah drinks tea in the morning.", "- Sarah drinks coffee at night."),
     "- Sarah drinks tea in the morning and coffee at night.", True),
    (("- Sarah has 3 cats.", "- Sarah has 2 dogs."), "- Sarah has 2 cats and 3 dogs.", False),
    (("- Sarah has 3 cats.", "- Sarah has 2 dogs."), "- Sarah has 3 cats and 2 dogs.", True),
    (("- Sarah works on Monday.", "- Sarah rests on Friday."), "- Sarah works on Friday and rests on Monday.", False),
])
def test_a_merge_never_crosses_the_parts_of_two_facts(facts, into, lands):
    verdict = check("\n".join(facts), into, [Change(ChangeKind.MERGED, facts, into, "one line")])
    assert verdict.ok is lands, verdict.reasons
    if not lands:
        assert "crossed" in verdict.reasons[0]


def test_a_merge_that_lists_both_objects_lands():
    facts = ("- Sarah likes jazz.", "- Sarah likes blues.")
    into = "- Sarah likes jazz and blues."
    assert check("\n".join(facts), into, [Change(ChangeKind.MERGED, facts, into, "one line")]).ok


# --- the same through nights and the audit of the real client ----------------------------------------------------

START = datetime(2026, 11, 2, 3, 0, tzinfo=UTC)
REL = "knowledge/people.md"


@pytest.fixture
def memory(tmp_path, llm_config):
    clock = Clock(START)
    with Memory(tmp_path / "vault", llm_config, clock=clock) as mem:
        for fact, topic in (("Sarah lives in Berlin.", "Sarah"), ("Sarah likes jazz.", "Sarah"),
                            ("Tom lives in Oslo.", "Tom"), ("Tom plays chess on Sundays.", "Tom")):
            assert mem.save(fact, "people", topic).status == "saved"
        yield mem, clock


def _night(memory, clock, curator, fake, episode: str, old_line: str, new_text, change: dict):
    mem = memory
    clock.now += timedelta(days=1)
    mem.log_episode(episode, when=clock.now - timedelta(hours=2))
    path = mem.vault.root / REL

    def reply(request):
        if not request["messages"][1]["content"].startswith(f"Curate {REL} "):
            return {"status": "unchanged", "summary": "", "content": "", "changes": []}
        return {"status": "rewrite", "summary": "tidied", "content": new_text(path.read_text("utf-8")),
                "changes": [change]}

    fake.default = reply
    return run(mem.services, curator(), clock.now.date())


def _swap(old: str, new: str):
    return lambda text: text.replace(f"- {old}\n", f"- {new}\n")


NIGHTS = {
    # (episode, old line, rewrite of the file, the listed change, lands)
    "refused to move": ("Sarah refused to move to Paris.", "Sarah lives in Berlin.",
                        _swap("Sarah lives in Berlin.", "Sarah lives in Paris."), "superseded", False),
    "visited": ("Sarah visited Paris for the weekend.", "Sarah lives in Berlin.",
                _swap("Sarah lives in Berlin.", "Sarah lives in Paris."), "superseded", False),
    "Tom's move backs Sarah's": ("Tom moved to Paris.", "Sarah lives in Berlin.",
                                 _swap("Sarah lives in Berlin.", "Sarah lives in Paris."), "superseded", False),
    "a flip as a merge": ("We talked about music.", "Sarah likes jazz.",
                          _swap("Sarah likes jazz.", "Sarah hardly likes jazz."), "merged", False),
    "a former fan": ("We talked about music.", "Sarah likes jazz.",
                     _swap("Sarah likes jazz.", "Sarah is a former jazz fan who likes jazz."), "merged", False),
    "she moved": ("Sarah moved to Paris last week.", "Sarah lives in Berlin.",
                  _swap("Sarah lives in Berlin.", "Sarah lives in Paris."), "superseded", True),
    "she said no longer": ("Sarah said she no longer likes jazz.", "Sarah likes jazz.",
                           _swap("Sarah likes jazz.", "Sarah no longer likes jazz."), "superseded", True),
}


@pytest.mark.parametrize("case", NIGHTS)
def test_a_night_lands_only_what_new_evidence_says(memory, fake, curator, case):
    episode, old_line, rewrite, kind, lands = NIGHTS[case]
    mem, clock = memory
    path = mem.vault.root / REL
    before = path.read_text("utf-8")
    new = rewrite(before)
    added = next(line for line in new.splitlines() if line.startswith("- ") and f"{line}\n" not in before)
    result = _night(mem, clock, curator, fake, episode, old_line, rewrite,
                    {"kind": kind, "old": [f"- {old_line}"], "new": added, "reason": "newer", "source": "episodes"})
    outcome = result.files[REL]
    assert outcome.status == ("written" if lands else "rejected"), outcome
    after = path.read_text("utf-8")
    if lands:
        assert added in after and f"- {old_line}\n" not in after
        return
    assert after == before  # the old line kept, nothing else changed
    week = clock.now.date().isocalendar()
    log = (mem.vault.root / f"consolidated/{week.year}-W{week.week:02d}.md").read_text("utf-8")
    assert f"### {REL}: rejected" in log and old_line in log  # the refusal is on record, with the line


def test_a_night_never_files_sarah_s_line_under_tom(memory, fake, curator):
    mem, clock = memory
    path = mem.vault.root / REL
    before = path.read_text("utf-8")
    line = "- Sarah lives in Berlin."

    def under_tom(text: str) -> str:
        return text.replace(f"{line}\n", "").replace("- Tom lives in Oslo.\n", f"- Tom lives in Oslo.\n{line}\n")

    result = _night(mem, clock, curator, fake, "Sarah lives in Berlin, near Tom.", line, under_tom,
                    {"kind": "section", "old": [line], "new": "## Tom", "reason": "tidy", "source": ""})
    assert result.files[REL].status == "rejected", result.files[REL]
    assert any("another subject" in reason for reason in result.files[REL].reasons)
    assert path.read_text("utf-8") == before


AUDIT_NOW = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)


@pytest.mark.parametrize(("episode", "outcome"), [
    ("Sarah refused to move to Paris.", "rejected"),
    ("Sarah wants to live in Paris.", "rejected"),
    ("Sarah moved to Paris.", "applied"),
])
def test_the_audit_lands_only_what_the_month_s_evidence_says(memory, fake, episode, outcome):
    mem, clock = memory
    clock.now = AUDIT_NOW
    mem.log_episode(episode, when=datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    before = (mem.vault.root / REL).read_text("utf-8")
    finding = {"kind": "contradicted", "lines": ["- Sarah lives in Berlin."], "explanation": "she moved",
               "evidence": ["episodes/2026-11-20.md"], "action": "replace", "new": "- Sarah lives in Paris."}
    fake.default = lambda request: (
        {"summary": "one finding", "findings": [finding]}
        if request["messages"][-1]["content"].startswith(f"Audit {REL} ") else {"summary": "", "findings": []})
    result = run_audit(mem.services, "2026-11", AUDIT_NOW)
    found = next(f for f in result["findings"] if f["source"] == "llm")
    assert found["outcome"] == outcome, found
    after = (mem.vault.root / REL).read_text("utf-8")
    assert ("- Sarah lives in Paris." in after) is (outcome == "applied")
    if outcome == "rejected":
        assert after == before


# --- save-time dedup ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("first", "second"), [
    ("Sarah drinks coffee.", "Sarah no longer drinks coffee."),
    ("Sarah drinks coffee.", "Sarah doesn't drink coffee any more."),
    ("Sarah drinks coffee.", "Sarah used to drink coffee."),
    ("Sarah is a vegetarian.", "Sarah is a former vegetarian."),
    ("Sarah is a vegetarian.", "Sarah is hardly a vegetarian."),
    ("Sarah likes jazz.", "Sarah dislikes jazz."),
    ("Sarah prefers tea over coffee.", "Sarah prefers coffee over tea."),
    ("Sarah reports to Tom.", "Tom reports to Sarah."),
    ("Deploy before the review.", "Deploy after the review."),
    ("Enable 2FA on the account.", "Disable 2FA on the account."),
])
def test_save_keeps_opposites_and_swapped_roles(tmp_path, config, first, second):
    with Memory(tmp_path / "v", config) as mem:
        assert mem.save(first, "people", "Sarah").status == "saved"
        assert mem.save(second, "people", "Sarah").status == "saved"
        text = (mem.vault.root / REL).read_text("utf-8")
        assert f"- {first}" in text and f"- {second}" in text


@pytest.mark.parametrize(("first", "second"), [
    ("Sarah doesn't drink coffee.", "Sarah does not drink coffee."),
    ("Sarah prefers tea over coffee.", "Sarah likes tea over coffee."),
    ("Sarah stopped drinking coffee.", "Sarah quit drinking coffee."),
])
def test_save_still_deduplicates_a_paraphrase(tmp_path, config, first, second):
    with Memory(tmp_path / "v", config) as mem:
        assert mem.save(first, "people", "Sarah").status == "saved"
        assert mem.save(second, "people", "Sarah").status == "duplicate"


@pytest.mark.parametrize(("text", "left"), [
    ("Sarah bought 30 cats' worth of food.", "Sarah bought food."),
    ("Sarah packed 2 weeks\u2019 worth of clothes and $5 worth of snacks.", "Sarah packed clothes and snacks."),
    ("Sarah bought a week's worth of food.", "Sarah bought food."),
    ("Sarah's house is worth 300k.", "Sarah's house is worth 300k."),
    ("x" * 200_000 + " 3 days' worth of food", "x" * 200_000 + " food"),
])
def test_a_measure_before_worth_of_is_taken_out_of_the_evidence(text, left):
    assert " ".join(without_measures(text).split()) == left
