"""The instruction detector on instructions however worded and on facts that only look like them (issue 23)."""

from __future__ import annotations

import pytest
from instruction_cases import FACTS, INSTRUCTIONS

from wolfmem.core.instructions import looks_like_instruction


def test_the_sets_are_big_enough_to_mean_something() -> None:
    assert len(INSTRUCTIONS) >= 60 and len(FACTS) >= 60
    assert not set(INSTRUCTIONS) & set(FACTS)


@pytest.mark.parametrize("text", INSTRUCTIONS)
def test_an_instruction_is_flagged(text: str) -> None:
    assert looks_like_instruction(text)


@pytest.mark.parametrize("text", FACTS)
def test_a_fact_is_not_flagged(text: str) -> None:
    assert not looks_like_instruction(text)


@pytest.mark.parametrize("text", INSTRUCTIONS[:12])
def test_an_instruction_is_flagged_in_the_middle_of_other_text(text: str) -> None:
    assert looks_like_instruction(f"The line was stale. {text} Nothing else changed.")
    assert looks_like_instruction(f"- {text}")
