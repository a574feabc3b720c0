"""Issue 24: one big episode day must not cost hundreds of LLM requests in one run.

Counted against the fake server: each run sends at most `curation.max_requests` requests, the
backlog continues on the next runs, and `wolfmem status` says how much is left.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

import pytest
from fakellm import FakeLLM

from wolfmem import Config, Memory
from wolfmem.curation.audit.run import run_audit
from wolfmem.curation.llm_budget import Budget
from wolfmem.curation.run import make_curator, run
from wolfmem.ops import status

NOW = datetime(2026, 11, 29, 3, 0, tzinfo=UTC)
DAY = date(2026, 11, 29)
MAX_REQUESTS = 7


def big_day(memory: Memory) -> None:
    """A pasted chat export: 40 entries of ~3,000 characters, far past one prompt's episode budget."""
    blocks = ["# 2026-11-29", ""]
    for n in range(40):
        lines = "\n".join(f"- Message {n}.{k}: we talked about the Atlas launch plan and item {k}."
                          for k in range(45))
        blocks += [f"## 09:{n:02d} — chat part {n}", lines, ""]
    (memory.vault.root / "episodes" / "2026-11-29.md").write_text("\n".join(blocks), "utf-8")


@pytest.fixture
def budgeted(tmp_path, llm_config):
    config = replace(llm_config, curation_max_requests=MAX_REQUESTS)
    with Memory(tmp_path / "vault", config, clock=lambda: NOW) as memory:
        for fact, topic in [("Sarah is my manager.", "Sarah"), ("Tom runs the data team.", "Tom")]:
            memory.save(fact, "people", topic)
        memory.save("We deploy Atlas with Helm.", "projects", "Atlas")
        yield memory


def test_a_run_stops_at_its_request_budget_and_the_backlog_continues(budgeted: Memory, fake: FakeLLM) -> None:
    big_day(budgeted)
    curator = make_curator(budgeted.services.config)
    first = run(budgeted.services, curator, DAY)
    sent = len(fake.requests)
    assert 0 < sent <= MAX_REQUESTS
    assert first.left > 0 and "curation.max_requests" in first.stopped
    record = budgeted.state.run_record("curate")
    assert record["left"] == first.left and record["stopped"] == first.stopped
    shown = status.render(status.collect(budgeted))
    assert f"curation: {first.left:,} episode entries wait for the next run" in shown
    # The next nights go on where the last stopped, each within the budget, until nothing is left.
    left = first.left
    for _ in range(20):
        before = len(fake.requests)
        later = run(budgeted.services, curator, DAY)
        assert len(fake.requests) - before <= MAX_REQUESTS
        assert later.left < left or later.left == 0
        left = later.left
        if not left:
            break
    assert left == 0
    assert "wait for the next run" not in status.render(status.collect(budgeted))


def test_a_run_stops_at_its_token_budget(budgeted: Memory, fake: FakeLLM) -> None:
    big_day(budgeted)
    config = replace(budgeted.services.config, curation_max_requests=1000, curation_max_tokens=1)
    services = replace(budgeted.services, config=config)
    result = run(services, make_curator(config), DAY)
    # The first round always runs (one request per curated file it sends), then the budget is spent.
    assert 0 < len(fake.requests) <= 5
    assert "curation.max_tokens" in result.stopped and result.left > 0


def test_the_audit_keeps_to_the_budget(budgeted: Memory, fake: FakeLLM) -> None:
    config = replace(budgeted.services.config, curation_max_requests=1)
    services = replace(budgeted.services, config=config)
    fake.default = {"summary": "", "items": []}
    result = run_audit(services, "2026-11", NOW, apply=False)
    assert len(fake.requests) == 1
    assert any("not audited" in why and "curation.max_requests" in why for why in result["errors"].values())


@pytest.mark.parametrize(
    ("requests", "usage", "next_requests", "stops"),
    [
        (0, {}, 500, None),  # the first step always runs
        (5, {}, 5, None),
        (5, {}, 6, "requests"),
        (1, {"total_tokens": 99}, 1, None),
        (1, {"prompt_tokens": 60, "completion_tokens": 40}, 1, "tokens"),
    ],
)
def test_budget_rule(requests: int, usage: dict[str, int], next_requests: int, stops: str | None) -> None:
    refusal = Budget(requests=10, tokens=100).refusal(requests, usage, next_requests)
    assert (refusal is None) == (stops is None)
    assert stops is None or f"LLM {stops}" in (refusal or "")


def test_the_defaults_are_set() -> None:
    assert Config().curation_max_requests == 60 and Config().curation_max_tokens == 600_000
