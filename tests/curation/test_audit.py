"""The monthly audit: LLM findings against the fake server, staging, hand edits, and the offline checks."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fakellm import FakeLLM

from wolfmem import Config, Memory
from wolfmem.curation.audit.findings import edit, mechanical_findings
from wolfmem.curation.audit.run import apply_staged, run_audit
from wolfmem.errors import UsageError
from wolfmem.jobs.runner import JobRunner

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 1, 4, 0, tzinfo=TZ)
PEOPLE = "knowledge/people.md"
PROJECTS = "knowledge/projects.md"
NOTHING = {"summary": "Nothing to report.", "findings": []}


def finding(lines, action="remove", new="", kind="stale", explanation="not mentioned since March"):
    return {"kind": kind, "lines": lines, "explanation": explanation,
            "evidence": ["episodes/2026-10-14.md"], "action": action, "new": new}


def by_file(replies: dict[str, dict]):
    """A FakeLLM spec answering each file's audit request with its scripted reply."""

    def answer(request):
        user = request["messages"][-1]["content"]
        for rel, reply in replies.items():
            if user.startswith(f"Audit {rel} "):
                return reply
        return NOTHING

    return answer


@pytest.fixture
def fake():
    with FakeLLM() as server:
        yield server


def llm_memory(vault: Path, tmp_path: Path, fake: FakeLLM, **settings) -> Memory:
    config = Config(state_dir=str(tmp_path / "state"), llm_base_url=fake.base_url, llm_model="fake-model",
                    llm_timeout=5.0, llm_max_retries=0, **settings)
    return Memory(vault, config, clock=lambda: NOW)


def seed(memory: Memory) -> None:
    """Wolfmem-written facts (so not hand edits) and one month of episodes."""
    memory.save("Bob leads Project Atlas.", type="projects", topic="Atlas")
    memory.save("Atlas ships to production every Friday.", type="projects", topic="Atlas")
    memory.save("Tom always hates meetings.", type="people", topic="Tom")
    memory.save("Sarah manages the platform team.", type="people", topic="Sarah (Manager)")
    memory.log_episode(["Alice took over Atlas from Bob today."], "atlas", when=datetime(2026, 10, 14, 10, tzinfo=TZ))
    # The evidence that backs the narrower replacements of "Tom always hates meetings" below.
    memory.log_episode(["Tom said he only dislikes long meetings."], "tom", when=datetime(2026, 10, 20, 10, tzinfo=TZ))


def read(vault: Path, rel: str) -> str:
    return (vault / rel).read_text()


def test_good_audit_applies_through_the_curation_path(vault, tmp_path, fake):
    memory = llm_memory(vault, tmp_path, fake)
    seed(memory)
    fake.default = by_file({
        PROJECTS: {"summary": "Atlas changed hands.", "findings": [
            finding(["- Bob leads Project Atlas.  [first seen 2026-11-01]"], "replace", "- Alice leads Project Atlas.",
                    kind="contradicted", explanation="Alice took over Atlas on 2026-10-14")]},
        PEOPLE: {"summary": "One over-general claim.", "findings": [
            finding(["- Tom always hates meetings."], "keep", kind="over-general", explanation="one incident")]},
    })
    before = read(vault, PROJECTS)

    result = run_audit(memory.services, "2026-10", NOW)

    assert result["status"] == "ok", result
    text = read(vault, PROJECTS)
    assert "- Alice leads Project Atlas." in text and "Bob leads" not in text
    assert (vault / f"{PROJECTS}.bak").read_text() == before
    assert result["counts"]["applied"] == 1
    report = read(vault, "consolidated/audit-2026-10.md")
    assert ". contradicted in knowledge/projects.md" in report
    assert "- Evidence: episodes/2026-10-14.md" in report
    assert "- Outcome: applied" in report
    assert "over-general in knowledge/people.md" in report and "- Outcome: reported" in report
    # The evidence reached the model, fenced as data.
    prompt = next(r for r in fake.requests if "Audit knowledge/projects.md" in r["messages"][-1]["content"])
    user = prompt["messages"][-1]["content"]
    assert "Alice took over Atlas from Bob today." in user and "<data-" in user
    assert prompt["response_format"]["type"] == "json_schema"
    # The change is searchable and the report is indexed as a consolidated source.
    assert memory.search("who leads Atlas", sources="knowledge")[0].text == "Alice leads Project Atlas."
    assert memory.search("contradicted Atlas", sources="consolidated")


def test_audit_reply_that_deletes_a_hand_edit_is_rejected(vault, tmp_path, fake):
    memory = llm_memory(vault, tmp_path, fake)
    seed(memory)
    path = vault / PEOPLE
    path.write_text(path.read_text() + "- Tom prefers async updates over meetings.\n")  # a person's edit
    fake.default = by_file({PEOPLE: {"summary": "x", "findings": [
        finding(["- Tom prefers async updates over meetings."], "remove", explanation="junk"),
        finding(["- Tom always hates meetings."], "replace", "- Tom dislikes long meetings.", kind="over-general"),
    ]}})
    before = path.read_text()

    result = run_audit(memory.services, "2026-10", NOW)

    text = path.read_text()
    assert "- Tom prefers async updates over meetings." in text  # the hand edit survives
    assert "- Tom dislikes long meetings." in text  # the good change still landed
    outcomes = {f["lines"][0]: (f["outcome"], f["reasons"]) for f in result["findings"] if f["source"] == "llm"}
    state, reasons = outcomes["- Tom prefers async updates over meetings."]
    assert state == "rejected" and "hand-edited" in reasons[0]
    assert outcomes["- Tom always hates meetings."][0] == "applied"
    assert before != text


def test_staged_audit_applies_later_and_marks_changed_lines_stale(vault, tmp_path, fake):
    memory = llm_memory(vault, tmp_path, fake, audit_apply=False)
    seed(memory)
    fake.default = by_file({
        PROJECTS: {"summary": "x", "findings": [
            finding(["- Bob leads Project Atlas."], "replace", "- Alice leads Project Atlas.",
                    kind="contradicted")]},
        PEOPLE: {"summary": "x", "findings": [
            finding(["- Tom always hates meetings."], "replace", "- Tom dislikes long meetings.",
                    kind="over-general")]},
    })
    projects_before, people_before = read(vault, PROJECTS), read(vault, PEOPLE)

    result = run_audit(memory.services, "2026-10", NOW)

    assert result["counts"]["staged"] == 2
    assert (read(vault, PROJECTS), read(vault, PEOPLE)) == (projects_before, people_before)
    assert "audit apply --month 2026-10" in read(vault, "consolidated/audit-2026-10.md")

    # Meanwhile a person rewrites the Bob line; the Tom line is untouched.
    (vault / PROJECTS).write_text(projects_before.replace("Bob leads", "Bob co-leads"))

    applied = apply_staged(memory.services, "2026-10")

    assert applied["counts"] == {"applied": 1, "stale": 1}
    assert applied["status"] == "partial"
    assert "- Bob co-leads Project Atlas." in read(vault, PROJECTS)
    assert "Alice" not in read(vault, PROJECTS)
    assert "- Tom dislikes long meetings." in read(vault, PEOPLE)
    report = read(vault, "consolidated/audit-2026-10.md")
    assert "- Outcome: stale" in report and "1 applied, 1 stale" in report
    # Nothing is applied twice.
    assert apply_staged(memory.services, "2026-10")["status"] == "noop"


def test_model_failure_is_a_failed_run_and_changes_nothing(vault, tmp_path, fake):
    memory = llm_memory(vault, tmp_path, fake)
    seed(memory)
    fake.default = "not json at all"
    before = read(vault, PEOPLE)
    result = run_audit(memory.services, "2026-10", NOW)
    assert result["status"] == "failed"
    assert read(vault, PEOPLE) == before
    assert "was not audited" in read(vault, "consolidated/audit-2026-10.md")


def test_lines_the_file_does_not_hold_are_not_applied(vault, tmp_path, fake):
    memory = llm_memory(vault, tmp_path, fake)
    seed(memory)
    fake.default = by_file({PEOPLE: {"summary": "x", "findings": [finding(["- Zed runs the zoo."])]}})
    before = read(vault, PEOPLE)
    result = run_audit(memory.services, "2026-10", NOW)
    assert [f["outcome"] for f in result["findings"] if f["source"] == "llm"] == ["not-found"]
    assert read(vault, PEOPLE) == before


OFFLINE_FILE = """# Projects

## Atlas
- Atlas ships to production every Friday.
- Atlas deploys to production every Friday.
- The Atlas launch is scheduled for 2026-09-15.
- The Atlas review will be on 2027-01-10.

## Empty Thoughts

## Hermes
- Hermes uses Postgres 16.
"""


def test_offline_audit_only_reports_mechanical_findings(vault, tmp_path):
    config = Config(state_dir=str(tmp_path / "state"))
    memory = Memory(vault, config, clock=lambda: NOW)
    (vault / PROJECTS).write_text(OFFLINE_FILE)
    from wolfmem.core.facts import fact_key

    memory.state.note_first_seen(PROJECTS, [fact_key("Hermes uses Postgres 16.")], "2026-05-01")
    memory.state.note_first_seen(PROJECTS, [fact_key("Atlas ships to production every Friday.")], "2026-10-01")

    result = JobRunner(memory.services).run_now("audit", NOW, day=date(2026, 10, 31))

    assert result.status == "ok"
    assert read(vault, PROJECTS) == OFFLINE_FILE
    assert not (vault / f"{PROJECTS}.bak").exists()
    kinds = sorted(f["kind"] for f in result.detail["findings"])
    assert kinds == ["duplicate", "empty-section", "past-upcoming", "untouched"]
    report = read(vault, "consolidated/audit-2026-10.md")
    assert "report only: nothing was changed" in report
    assert "2026-09-15 has passed" in report
    assert "Offline audit: 4 mechanical finding(s)" in result.summary


@pytest.mark.parametrize(
    ("fact", "flagged"),
    [
        ("- The offsite is planned for March 3, 2026.", True),
        ("- The offsite is planned for 3 March 2026.", True),
        ("- The offsite happened on 2026-03-03.", False),  # past, but not marked upcoming
        ("- The offsite is planned for 2026-12-03.", False),  # still ahead
        ("- The offsite is planned for March 3.", False),  # no year: ambiguous
    ],
)
def test_past_upcoming_dates(fact, flagged):
    found = mechanical_findings(PROJECTS, f"# P\n\n## Offsite\n{fact}\n", {}, date(2026, 11, 1))
    assert any(f.kind == "past-upcoming" for f in found) is flagged


def test_edit_replaces_in_place_and_keeps_line_endings():
    text = "# P\r\n\r\n## A\r\n- one\r\n- two\r\n- three\r\n"
    assert edit(text, ["- one", "- three"], "- one and three") == "# P\r\n\r\n## A\r\n- one and three\r\n- two\r\n"
    assert edit(text, ["- two"], "") == "# P\r\n\r\n## A\r\n- one\r\n- three\r\n"
    assert edit(text, ["- four"], "") is None


def test_apply_staged_without_a_report_says_what_to_do(vault, tmp_path):
    memory = Memory(vault, Config(state_dir=str(tmp_path / "state")), clock=lambda: NOW)
    with pytest.raises(UsageError, match="audit --now"):
        apply_staged(memory.services, "2026-10")
    with pytest.raises(UsageError, match="2026-10"):
        run_audit(memory.services, "Oct", NOW)


def test_report_data_survives_awkward_text(vault, tmp_path, fake):
    memory = llm_memory(vault, tmp_path, fake, audit_apply=False)
    seed(memory)
    fake.default = by_file({PEOPLE: {"summary": "x", "findings": [
        finding(["- Tom always hates meetings."], "replace", "- Tom dislikes long meetings -->.",
                explanation="a -- b -->")]}})
    run_audit(memory.services, "2026-10", NOW)
    report = read(vault, "consolidated/audit-2026-10.md")
    data = report.split("<!-- wolfmem-audit-data\n", 1)[1].rsplit("\n-->", 1)[0]
    assert "--" not in data
    assert json.loads(data)["findings"][0]["change"]["new"] == "- Tom dislikes long meetings -->."
    assert apply_staged(memory.services, "2026-10")["counts"] == {"applied": 1}
