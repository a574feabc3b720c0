"""One curation request is bounded whatever the day held: counted in the characters of the prompt, at two sizes.

Every prompt listed every fact saved in the window; an agent saving 8,000 facts in a day put ~1 MB
into each file's request. The file itself is sent whole, and is at most `index.max_file_bytes`
(a larger one is skipped, tests/memory/test_large_files.py).
"""

from __future__ import annotations

import pytest

from wolfmem.curation.contract import CurationRequest, Episode, FileInput, SavedFact
from wolfmem.curation.prompting import EPISODE_BUDGET_CHARS, SAVES_BUDGET_CHARS, build_prompt

PEOPLE, PROJECTS = "knowledge/people.md", "knowledge/projects.md"
FILE = "# People\n\n## Sarah\n- Sarah is my manager.\n"


def _request(saves: int, episode_lines: int) -> CurationRequest:
    saved = tuple(SavedFact(PROJECTS if n % 2 else PEOPLE, f"Fact number {n} about the Atlas launch plan.",
                            f"2026-11-{1 + n % 28:02d}") for n in range(saves))
    day = Episode("episodes/2026-11-28.md", "2026-11-28",
                  "# 2026-11-28\n\n## 09:00 — chat\n" + "".join(f"- Message {n}.\n" for n in range(episode_lines)))
    return CurationRequest("2026-11-28", "2026-11-01", {PEOPLE: FileInput(PEOPLE, FILE)}, (day,), saved,
                           {PEOPLE: ["Sarah"]})


@pytest.mark.parametrize(("saves", "episode_lines"), [(200, 2_000), (20_000, 200_000)])
def test_a_request_holds_the_file_and_bounded_context(saves: int, episode_lines: int) -> None:
    _system, user = build_prompt(_request(saves, episode_lines), PEOPLE)
    assert FILE.strip() in user
    assert len(user) < len(FILE) + EPISODE_BUDGET_CHARS + SAVES_BUDGET_CHARS + 3_000


def test_the_files_own_newest_saves_are_listed_first() -> None:
    _system, user = build_prompt(_request(20_000, 10), PEOPLE)
    listed = [line for line in user.splitlines() if line.startswith("- Fact number")]
    assert all(f"[{PEOPLE}," in line for line in listed)  # 10,000 of its own fill the budget
    assert "saved 2026-11-27]" in listed[0]  # its newest day (its saves fall on odd days)
