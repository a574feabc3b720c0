"""A few LoCoMo questions through scripts/eval_locomo.py: the harness maps lines and scores in range."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from wolfmem.core import markdown

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "locomo-dev" / "26.json"

pytestmark = pytest.mark.skipif(not DATA.exists(), reason="LoCoMo dev data is not next to the project")


@pytest.fixture(scope="module")
def harness():
    spec = importlib.util.spec_from_file_location("eval_locomo", REPO / "scripts" / "eval_locomo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_locomo"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def small(harness):
    """The first three sessions of conversation 26 and the questions they answer."""
    conversation = harness.load(DATA)
    turns = [turn for turn in conversation.turns if turn.session <= 3]
    ids = {turn.dia_id for turn in turns}
    questions = [q for q in conversation.questions if set(q.evidence) <= ids][:8]
    return turns, questions


def test_session_dates_parse(harness) -> None:
    assert harness.session_time("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00"
    assert harness.session_time("12:48 am on 1 February, 2023").hour == 0


def test_every_turn_lands_on_its_own_line(harness, small) -> None:
    turns, _ = small
    files, where = harness.episode_files(turns)
    by_id = {turn.dia_id: turn for turn in turns}
    assert sorted(where.values()) == sorted(by_id)
    for rel, text in files.items():
        facts = {fact.line: fact.text for fact in markdown.parse(text).facts}
        for (path, line), dia_id in where.items():
            if path == rel:
                assert facts[line] == by_id[dia_id].text
                assert rel == f"episodes/{by_id[dia_id].when:%Y-%m-%d}.md"


def test_systems_score_in_range(harness, small, tmp_path: Path) -> None:
    turns, questions = small
    assert len(questions) >= 3
    memory, where = harness.build_vault(turns, tmp_path)
    try:
        rankers = {
            "wolfmem": harness.wolfmem_ranker(memory, where, turns[-1].when.date()),
            "fts5": harness.fts5_ranker(turns),
            "bm25okapi": harness.bm25_ranker(turns),
        }
        for name, rank in rankers.items():
            tallies = harness.ask(rank, questions)
            total = harness.Tally()
            for tally in tallies.values():
                total.extend(tally)
            r5, r10, hit10 = total.means()
            assert 0 <= r5 <= r10 <= hit10 <= 1, name
            assert r10 > 0, f"{name} found none of the evidence"
            assert len(total.r10) == len(questions)
    finally:
        memory.close()


def test_recall_counts_evidence_in_the_first_k(harness) -> None:
    assert harness.recall(["D1:1", "D1:2", "D1:3"], ["D1:3", "D2:1"], 2) == 0
    assert harness.recall(["D1:1", "D1:2", "D1:3"], ["D1:3", "D2:1"], 3) == 0.5


def test_questions_are_asked_the_day_after_the_last_session(harness) -> None:
    conversation = harness.load(DATA)
    assert conversation.today > max(turn.when.date() for turn in conversation.turns)
    dated = conversation.dated()
    assert dated and all(q in conversation.questions for q in dated)
    assert "What painting did Melanie show to Caroline on October 13, 2023?" in {q.text for q in dated}


def _tally(harness, recalls: list[float]):
    tally = harness.Tally()
    for value in recalls:
        tally.add(["hit"] if value else [], ["hit"], 0.0)
    return tally
