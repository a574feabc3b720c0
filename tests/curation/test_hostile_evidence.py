"""A hostile curator picks the evidence: what a line since the last run may back, and what no line backs.

Found by an adversarial review (h10-inputs). Each case accounts for every line and names a change; the
question is whether the evidence it leans on says the new claim, of the same subject, and is the newest
word on it. The validator tables come first; the nights after go through the real openai client to
FakeLLM.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from conftest import UNCHANGED, Clock

from wolfmem import Memory
from wolfmem.curation.contract import Change, ChangeKind
from wolfmem.curation.evidence import Safeguards
from wolfmem.curation.run import run
from wolfmem.curation.validate import validate

PEOPLE = """# People

## Sarah (Manager)
- {fact}
- The printer is on the second floor.

## Tom
- Plays chess on Sundays.
"""


def claim(kind: str, before: str, after: str, evidence: tuple[str, ...] = (), said_on: tuple[str, ...] = ()):
    old, new = PEOPLE.format(fact=before), PEOPLE.format(fact=after)
    change = Change(ChangeKind(kind), (f"- {before}",), f"- {after}", "newer")
    return validate(old, new, [change], hand_lines=set(), title="People",
                    guards=Safeguards(evidence=evidence, **({"said_on": said_on} if said_on else {})))


# (on file, the curator's line, the one evidence line since the last run): none says the new claim.
UNBACKED = [
    # a question, a maybe, a plan or a condition is not what is so
    ("Sarah lives in Berlin.", "Sarah lives in Paris.", "Does Sarah live in Paris?"),
    ("Sarah's birthday is 3 May.", "Sarah's birthday is 4 May.", "Is Sarah's birthday 4 May?"),
    ("Sarah lives in Berlin.", "Sarah lives in Paris.", "Sarah might move to Paris next year."),
    ("Sarah lives in Berlin.", "Sarah lives in Paris.", "If Sarah moves to Paris, she will sell her car."),
    # a polarity flip backed by a line about another thing of hers
    ("Sarah likes tea.", "Sarah dislikes tea.", "Sarah dislikes coffee."),
    ("Sarah arrives before the standup.", "Sarah arrives after the standup.", "Sarah arrives after lunch."),
    # the value, said of someone she owns: her brother, her son
    ("Sarah is 34.", "Sarah is 35.", "Sarah's brother is 35."),
    ("Sarah's birthday is 3 May.", "Sarah's birthday is 4 May.", "Sarah's son's birthday is 4 May."),
    ("Sarah lives in Berlin.", "Sarah lives in Paris.", "Sarah's sister lives in Paris."),
    # the old claim said again beside the new value
    ("Sarah lives in Berlin.", "Sarah lives in Paris.", "Sarah lives in Berlin and visits Paris."),
]


@pytest.mark.parametrize(("before", "after", "evidence"), UNBACKED)
def test_evidence_that_does_not_say_the_new_claim_backs_no_supersession(before, after, evidence):
    verdict = claim("superseded", before, after, (evidence,))
    assert not verdict.ok and "backs it" in verdict.reasons[0], verdict.reasons


@pytest.mark.parametrize(("before", "after", "evidence"), [
    ("Sarah lives in Berlin.", "Sarah lives in Paris.", "Sarah moved to Paris."),
    ("Sarah likes tea.", "Sarah dislikes tea.", "Sarah said she dislikes tea now."),
    ("Sarah is 34.", "Sarah is 35.", "Sarah turned 35 today, and her brother baked a cake."),
    ("Sarah's birthday is 3 May.", "Sarah's birthday is 4 May.", "Sarah's birthday is really 4 May."),
])
def test_evidence_that_says_the_new_claim_still_backs_it(before, after, evidence):
    assert claim("superseded", before, after, (evidence,)).ok


def test_newer_evidence_that_says_the_old_value_again_wins():
    move = ("Sarah lives in Berlin.", "Sarah lives in Paris.")
    there_and_back = ("Sarah moved to Paris.", "Sarah moved back to Berlin.")
    assert not claim("superseded", *move, there_and_back).ok
    assert not claim("superseded", *move, there_and_back, ("2026-11-01", "2026-11-03")).ok
    assert claim("superseded", *move, there_and_back[::-1]).ok  # back and there: Paris is the newest word
    # Said the same day, the order is not known: the line that says the change stands.
    assert claim("superseded", *move, there_and_back, ("2026-11-03", "2026-11-03")).ok


@pytest.mark.parametrize(("before", "after"), [
    ("Sarah prefers tabs over spaces.", "Sarah now prefers spaces over tabs."),
    ("Sarah prefers tabs over spaces.", "Sarah prefers spaces over tabs at work."),
    ("Sarah likes tea more than coffee.", "Sarah likes coffee more than tea now."),
    ("The cache sits in front of the database.", "The database sits in front of the cache layer."),
])
def test_a_merge_that_swaps_the_words_a_preposition_binds_is_refused(before, after):
    # Every word of the old line is in the new one, and one more: it used to "carry" it.
    verdict = claim("merged", before, after)
    assert not verdict.ok and "does not carry" in verdict.reasons[0], verdict.reasons


def test_a_merge_that_keeps_what_each_preposition_binds_is_accepted():
    assert claim("merged", "Sarah prefers tabs over spaces.", "Sarah prefers tabs over spaces for scripts.").ok


# --- the same through nights of the real client ------------------------------------------------------------

START = datetime(2026, 11, 2, 3, 0, tzinfo=UTC)
REL = "knowledge/people.md"


@pytest.fixture
def memory(tmp_path, llm_config):
    clock = Clock(START)
    with Memory(tmp_path / "vault", llm_config, clock=clock) as mem:
        assert mem.save("Sarah lives in Berlin.", "people", "Sarah").status == "saved"
        assert mem.save("Prefers tabs over spaces.", "people", "Sarah").status == "saved"
        yield mem, clock


def _night(memory, clock, curator, fake, episodes: list[str], make) -> object:
    clock.now += timedelta(days=1)
    for hours, text in zip(range(len(episodes), 0, -1), episodes, strict=True):
        memory.log_episode(text, when=clock.now - timedelta(days=hours))  # one a day, oldest first
    path = memory.vault.root / REL

    def reply(request):
        user = request["messages"][1]["content"]
        if not user.startswith(f"Curate {REL} "):
            return UNCHANGED
        content, change = make(path.read_text("utf-8"))
        return {"status": "rewrite", "summary": "tidied", "content": content, "changes": [change]}

    fake.default = reply
    return run(memory.services, curator(), clock.now.date())


def _to_paris(text: str) -> tuple[str, dict]:
    return (text.replace("- Sarah lives in Berlin.", "- Sarah lives in Paris."),
            {"kind": "superseded", "old": ["- Sarah lives in Berlin."], "new": "- Sarah lives in Paris.",
             "reason": "she moved", "source": "episodes"})


@pytest.mark.parametrize(("episodes", "lands"), [
    (["Sarah moved to Paris."], True),
    (["Sarah moved back to Berlin.", "Sarah moved to Paris."], True),
    (["Sarah moved to Paris.", "Sarah moved back to Berlin."], False),  # the newest says Berlin
])
def test_a_night_lets_only_the_newest_evidence_win(memory, fake, curator, episodes, lands):
    mem, clock = memory
    before = (mem.vault.root / REL).read_text("utf-8")
    result = _night(mem, clock, curator, fake, episodes, _to_paris)
    assert result.files[REL].status == ("written" if lands else "rejected"), result.files[REL]
    assert ("- Sarah lives in Paris." in (mem.vault.root / REL).read_text("utf-8")) is lands
    if not lands:
        assert (mem.vault.root / REL).read_text("utf-8") == before


def test_a_night_never_merges_a_fact_into_its_swapped_roles(memory, fake, curator):
    mem, clock = memory
    before = (mem.vault.root / REL).read_text("utf-8")
    swapped = "- Now prefers spaces over tabs."
    result = _night(mem, clock, curator, fake, ["We talked about editors."],
                    lambda text: (text.replace("- Prefers tabs over spaces.", swapped),
                                  {"kind": "merged", "old": ["- Prefers tabs over spaces."], "new": swapped,
                                   "reason": "tidy", "source": ""}))
    assert result.files[REL].status == "rejected", result.files[REL]
    assert (mem.vault.root / REL).read_text("utf-8") == before
