"""Curation writes no instruction, however worded, and leaves a person's own line alone (issue 23)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from wolfmem.curation.evidence import Safeguards
from wolfmem.curation.validate import validate

sys.path.insert(0, str(Path(__file__).parents[1] / "core"))
from instruction_cases import FACTS, INSTRUCTIONS

OLD = "# People\n\n## Sarah\n- Sarah is my manager.\n"


@pytest.mark.parametrize("text", INSTRUCTIONS[:4] + INSTRUCTIONS[-20:])
def test_a_curated_instruction_is_refused(text: str) -> None:
    # Backed by an episode line saying the same: evidence does not make an instruction a fact.
    verdict = validate(OLD, OLD + f"- {text}\n", [], hand_lines=set(), title="People",
                       guards=Safeguards(evidence=(text,)))
    assert not verdict.ok and verdict.text == OLD
    assert any("instruction to the agent" in reason for reason in verdict.reasons), verdict.reasons
    assert not any(text[:25] in reason for reason in verdict.reasons)  # the reasons never quote it


@pytest.mark.parametrize("text", FACTS[:8])
def test_a_fact_that_looks_like_a_command_is_not_refused_as_an_instruction(text: str) -> None:
    verdict = validate(OLD, OLD + f"- {text}\n", [], hand_lines=set(), title="People",
                       guards=Safeguards(evidence=(text,)))
    assert not any("instruction" in reason for reason in verdict.reasons), verdict.reasons


def test_an_instruction_a_person_wrote_is_left_alone() -> None:
    old = OLD + f"- {INSTRUCTIONS[0]}\n"
    verdict = validate(old, old, [], hand_lines={f"- {INSTRUCTIONS[0]}"}, title="People", guards=Safeguards())
    assert verdict.ok and verdict.text == old
