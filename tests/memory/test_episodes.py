"""log_episode: daily files, one title under concurrency, capped one-line fields, indexed at once."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from wolfmem import Config, Memory
from wolfmem.core.markdown import parse
from wolfmem.errors import InvalidFact, UsageError
from wolfmem.memory.episodes import MAX_BULLET_CHARS, MAX_HEADLINE_CHARS

MORNING = datetime(2026, 3, 14, 9, 5)


@pytest.fixture
def fixed(vault: Path, config) -> Memory:
    """A Memory whose clock reads 2026-03-14 09:05."""
    with Memory(vault, config, clock=lambda: MORNING) as mem:
        yield mem


def test_first_entry_creates_the_day_file(fixed: Memory, vault: Path) -> None:
    hit = fixed.log_episode("Deployed v2 to staging", headline="Release")
    path = vault / "episodes" / "2026-03-14.md"
    assert path.read_text() == "# 2026-03-14\n\n## 09:05 — Release\n- Deployed v2 to staging\n"
    assert hit.path == "episodes/2026-03-14.md" and hit.line == 4
    assert hit.ref == "file:episodes/2026-03-14.md#L4"
    assert (hit.date, hit.section) == ("2026-03-14", "09:05 — Release")
    assert [(line.ref, line.text) for line in hit.bullets] == [(hit.ref, "Deployed v2 to staging")]


def test_entries_append_and_never_rewrite_earlier_content(fixed: Memory, vault: Path) -> None:
    path = vault / "episodes" / "2026-03-14.md"
    path.write_bytes(b"# 2026-03-14\n\nA hand-written note  \n## 08:00 \xe2\x80\x94 Coffee\n- Had coffee")
    earlier = path.read_bytes()
    hit = fixed.log_episode(["Reviewed PR 12", "- Merged PR 13"], headline="Reviews")
    data = path.read_bytes()
    assert data.startswith(earlier)
    assert data[len(earlier):].decode() == "\n\n## 09:05 — Reviews\n- Reviewed PR 12\n- Merged PR 13\n"
    assert data.decode().count("# 2026-03-14") == 1
    assert data.decode().splitlines()[hit.line - 1] == "- Reviewed PR 12"
    second = fixed.log_episode("Lunch")
    assert path.read_bytes().startswith(data)
    assert path.read_text().splitlines()[second.line - 1] == "- Lunch"


def test_crlf_day_file_keeps_its_endings(fixed: Memory, vault: Path) -> None:
    path = vault / "episodes" / "2026-03-14.md"
    path.write_bytes(b"# 2026-03-14\r\n\r\n## 08:00 - Start\r\n- Started\r\n")
    fixed.log_episode("Kept going", headline="More")
    assert path.read_bytes() == (
        b"# 2026-03-14\r\n\r\n## 08:00 - Start\r\n- Started\r\n\r\n## 09:05 \xe2\x80\x94 More\r\n- Kept going\r\n"
    )


def test_headline_defaults_to_the_first_bullet(fixed: Memory, vault: Path) -> None:
    fixed.log_episode("Paired with Sarah on the sync planner")
    assert "## 09:05 — Paired with Sarah on the sync planner\n" in (vault / "episodes" / "2026-03-14.md").read_text()


@pytest.mark.parametrize(
    ("text", "headline", "bullet", "title"),
    [
        ("line one\nline two\r\n  line three", "multi\nline  headline",
         "line one line two line three", "multi line headline"),
        ("a" * (MAX_BULLET_CHARS + 50), "h", "a" * (MAX_BULLET_CHARS - 1) + "…", "h"),
        ("short", "b" * (MAX_HEADLINE_CHARS + 1), "short", "b" * (MAX_HEADLINE_CHARS - 1) + "…"),
        ("  - marker stripped  ", None, "marker stripped", "marker stripped"),
        ("tabs\tand   spaces", "  x  ", "tabs and spaces", "x"),
    ],
)
def test_fields_are_one_capped_line(
    fixed: Memory, vault: Path, text: str, headline: str | None, bullet: str, title: str
) -> None:
    hit = fixed.log_episode(text, headline=headline)
    lines = (vault / "episodes" / "2026-03-14.md").read_text().splitlines()
    assert lines[hit.line - 2] == f"## 09:05 — {title}"
    assert lines[hit.line - 1] == f"- {bullet}"
    assert len(bullet) <= MAX_BULLET_CHARS and len(title) <= MAX_HEADLINE_CHARS


def test_default_headline_is_capped_shorter(fixed: Memory, vault: Path) -> None:
    fixed.log_episode("word " * 40)
    lines = (vault / "episodes" / "2026-03-14.md").read_text().splitlines()
    heading = next(line for line in lines if line.startswith("## "))
    assert heading.endswith("…") and len(heading) <= len("## 09:05 — ") + 60


@pytest.mark.parametrize("text", ["", "   ", ["", " - "], []])
def test_empty_episode_is_refused(fixed: Memory, vault: Path, text) -> None:
    with pytest.raises(UsageError, match="empty"):
        fixed.log_episode(text)
    assert not (vault / "episodes" / "2026-03-14.md").exists()


def test_secret_in_episode_is_refused(fixed: Memory, vault: Path) -> None:
    with pytest.raises(InvalidFact, match="secret"):
        fixed.log_episode("Rotated the key to ghp_" + "A1b2C3d4" * 4 + "E5f6")
    assert not (vault / "episodes" / "2026-03-14.md").exists()


def test_logged_episode_is_searchable_at_once(fixed: Memory) -> None:
    hit = fixed.log_episode("Migrated the billing queue to Redis streams", headline="Billing")
    found = fixed.search("billing queue redis", sources="episodes")
    assert found and found[0].ref == hit.ref and found[0].date == "2026-03-14"
    assert fixed.search("redis streams", after="2026-03-14", before="2026-03-14")[0].ref == hit.ref


def test_when_puts_the_entry_on_that_days_file(fixed: Memory, vault: Path) -> None:
    hit = fixed.log_episode("Retro happened", headline="Retro", when=datetime(2025, 12, 31, 23, 59))
    assert hit.path == "episodes/2025-12-31.md" and hit.date == "2025-12-31"
    assert (vault / "episodes" / "2025-12-31.md").read_text() == "# 2025-12-31\n\n## 23:59 — Retro\n- Retro happened\n"
    assert not (vault / "episodes" / "2026-03-14.md").exists()
    assert fixed.search("retro", before="2025-12-31")[0].ref == hit.ref



def test_when_may_be_at_most_tomorrow(fixed: Memory, vault: Path) -> None:
    # The clock reads 2026-03-14: tomorrow is allowed (clock skew, a timezone ahead), the day after is not.
    assert fixed.log_episode("Late call with Tokyo", when=datetime(2026, 3, 15, 23, 59)).date == "2026-03-15"
    for when in (datetime(2026, 3, 16, 0, 0), datetime(2027, 3, 14, 9, 5), datetime(2999, 1, 1)):
        with pytest.raises(UsageError, match=r"in the future.*2026-03-15 at the latest"):
            fixed.log_episode("From the future", when=when)
    assert sorted(path.name for path in (vault / "episodes").glob("*.md")) == ["2026-03-15.md"]

_WORKER = """
import sys
from datetime import datetime
from wolfmem import Config, Memory
with Memory(sys.argv[1]) as memory:
    for n in range(int(sys.argv[3])):
        memory.log_episode(f"worker {sys.argv[2]} entry {n}", headline=f"w{sys.argv[2]}",
                           when=datetime(2026, 3, 15, 10, n % 60))
"""


@pytest.mark.slow
def test_title_is_written_once_with_concurrent_writers(vault: Path) -> None:
    workers, entries = 4, 15
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, str(vault), str(w), str(entries)], env=dict(os.environ))
        for w in range(workers)
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    text = (vault / "episodes" / "2026-03-15.md").read_text()
    lines = text.splitlines()
    assert lines[0] == "# 2026-03-15"
    assert lines.count("# 2026-03-15") == 1
    bullets = sorted(line for line in lines if line.startswith("- "))
    assert bullets == sorted(f"- worker {w} entry {n}" for w in range(workers) for n in range(entries))
    parsed = parse(text)
    assert parsed.title == "2026-03-15"
    assert len(parsed.sections) == workers * entries
    with Memory(vault) as memory:
        assert len(memory.search("worker entry", sources="episodes", limit=50)) == 50


def test_an_entry_past_what_the_index_reads_says_search_will_not_find_it(vault: Path, tmp_path: Path) -> None:
    # A pasted chat export made the day 1.8 MB; entries logged after it were "searchable now" and never found.
    config = Config(state_dir=str(tmp_path / "capped"), index_max_file_bytes=20_000)
    day = vault / "episodes/2026-03-14.md"
    day.write_text("# 2026-03-14\n\n## 08:00 — export\n" + "".join(f"- Line {n} of the chat.\n" for n in range(700)),
                   "utf-8")
    with Memory(vault, config, clock=lambda: MORNING) as memory:
        early = memory.log_episode("Quokka sighting near the lab")
        assert early.message.endswith("searchable now.") and memory.search("quokka")
        day.write_text(day.read_text("utf-8") + "".join(f"- More {n} of it.\n" for n in range(700)), "utf-8")
        late = memory.log_episode("Wombat sighting near the lab")
        assert "search will not find it" in late.message and "index.max_file_bytes" in late.message
        assert not memory.search("wombat")
