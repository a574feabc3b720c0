"""Curation coverage: every episode entry reaches the curator once, whatever day it is filed under."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta

import pytest
from conftest import UNCHANGED, run_cli
from fakellm import FakeLLM

from wolfmem import Config, Memory
from wolfmem.curation import offline
from wolfmem.curation.coverage import (
    COVERAGE_REL,
    Coverage,
    CoverageFile,
    Entry,
    EpisodeLog,
    as_episodes,
    batches,
    digest,
    split_entries,
    union,
)
from wolfmem.curation.offline import OfflineCurator
from wolfmem.curation.prompting import EPISODE_BUDGET_CHARS
from wolfmem.curation.run import run
from wolfmem.storage.vault import content_hash

DAY = date(2026, 11, 29)
NOW = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
FILES = 5  # the curated files: with episodes to curate, the LLM curator asks once per file
# Three bullets near the 500-character cap: an entry of about 1,400 characters.
LONG_BULLETS = [" ".join(["the migration plan was discussed at length"] * 11)] * 3


def log_file(text: str, day: str = "2026-11-29") -> EpisodeLog:
    return EpisodeLog.of(f"episodes/{day}.md", day, text.encode("utf-8"))


# --- the pure parts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "entries"),
    [
        ("# 2026-11-29\n", []),
        ("# 2026-11-29\n\n## 09:00 — standup\n- Tom is on call.\n",
         ["## 09:00 — standup\n- Tom is on call."]),
        ("# 2026-11-29\n\n## 09:00 — a\n- one\n\n## 18:00 — b\n- two\n- three\n",
         ["## 09:00 — a\n- one", "## 18:00 — b\n- two\n- three"]),
        # A person's note above the first entry is an entry too; the day's title alone is not.
        ("# 2026-11-29\nSarah called about the offsite.\n\n## 09:00 — a\n- one\n",
         ["# 2026-11-29\nSarah called about the offsite.", "## 09:00 — a\n- one"]),
        # A heading inside a code block is text, not a new entry.
        ("# d\n\n## 09:00 — a\n```\n## not a heading\n```\n", ["## 09:00 — a\n```\n## not a heading\n```"]),
        ("# d\r\n\r\n## 09:00 — a\r\n- one\r\n", ["## 09:00 — a\r\n- one"]),
    ],
    ids=["title only", "one", "two", "note above", "code fence", "CRLF"],
)
def test_split_entries(text, entries):
    assert [entry.text for entry in split_entries(log_file(text))] == entries


def test_digest_ignores_trailing_spaces_and_blank_edges_but_not_words():
    assert digest("## 09:00 — a\n- one") == digest("\n## 09:00 — a   \n- one\n\n")
    assert digest("## 09:00 — a\n- one") != digest("## 09:00 — a\n- One")


def entry(n: int, size: int, day: str = "2026-11-01") -> Entry:
    text = f"## 09:{n:02d} — e{n}\n" + "\n".join(f"- word {n} {i}" for i in range(size // 12))
    return Entry(f"episodes/{day}.md", day, digest(text), text)


def test_batches_fit_the_budget_keep_the_order_and_cut_only_a_giant_entry():
    days = [f"2026-10-{d:02d}" for d in range(1, 31)]
    entries = [entry(n, 1_500, day) for n, day in enumerate(days)] + [entry(99, 3 * 1_000, "2026-10-31")]
    plan = batches(entries, 4_000)
    assert all(sum(len(e.text) for e in as_episodes(batch)) <= 4_000 for batch in plan)
    assert [piece.text for batch in plan for piece in batch if piece.digest != entries[-1].digest] == [
        e.text for e in entries[:-1]]
    giant = [piece for batch in plan for piece in batch if piece.digest == entries[-1].digest]
    assert len(giant) == 1 and giant[0].last_piece  # 3,000 characters still fit one batch whole
    cut = [piece for batch in batches([entry(7, 10_000)], 4_000) for piece in batch]
    assert len(cut) == 3 and [p.last_piece for p in cut] == [False, False, True]
    assert "".join(p.text for p in cut) == entry(7, 10_000).text


def test_pending_skips_what_was_consumed_and_sees_an_edit_as_new():
    first = log_file("# d\n\n## 09:00 — a\n- one\n\n## 10:00 — b\n- two\n")
    later = log_file("# d\n\n## 09:00 — a\n- one\n", "2026-11-30")
    logs = [first, later]
    coverage = Coverage().consume(split_entries(first)[:1], "2026-11-29", logs, [first.rel, later.rel])
    assert [e.text for e in coverage.pending(logs, "2026-11-29")] == ["## 10:00 — b\n- two"]
    edited = log_file("# d\n\n## 09:00 — a\n- one, fixed\n\n## 10:00 — b\n- two\n")
    assert len(coverage.pending([edited], "2026-11-29")) == 2
    # A log whose every entry is consumed is marked read at its revision, and parsed again only when it changes.
    whole = coverage.consume(split_entries(first), "2026-11-29", logs, [first.rel, later.rel])
    assert whole.read == {first.rel: first.revision} and whole.pending(logs, "2026-11-29") == []
    grown = log_file(first.text + "\n## 11:00 — c\n- three\n")
    assert [e.text for e in whole.pending([grown], "2026-11-29")] == ["## 11:00 — c\n- three"]
    # A log deleted from the vault is forgotten, so the record does not grow forever.
    gone = whole.consume([], "2026-11-29", [], [later.rel])
    assert gone.episodes == {} and gone.read == {}


# --- runs ------------------------------------------------------------------------------------------


@pytest.fixture
def memory(tmp_path):
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state")), clock=lambda: NOW) as mem:
        mem.save("Tom lives in Berlin.", "people", "Tom")
        yield mem


def log_on(memory: Memory, day: date, text: str | list[str], hhmm: str = "09:00") -> None:
    hour, minute = map(int, hhmm.split(":"))
    memory.log_episode(text, when=datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC))


def episode_texts(fake: FakeLLM, since: int = 0) -> list[str]:
    """The user messages sent from request number `since` on."""
    return [request["messages"][1]["content"] for request in fake.requests[since:]]


def times_sent(fake: FakeLLM, text: str, since: int = 0) -> int:
    return sum(text in user for user in episode_texts(fake, since))


def test_an_entry_back_dated_to_a_curated_day_is_curated(memory, fake, curator):
    log_on(memory, DAY, "Standup: Tom is on call.")
    assert run(memory.services, curator(), DAY).status == "noop"
    asked = len(fake.requests)

    log_on(memory, date(2026, 11, 20), "Back-dated: Tom adopted a cat.", "14:05")
    result = run(memory.services, curator(), DAY + timedelta(days=1))

    assert result.entries == 1 and result.left == 0
    assert times_sent(fake, "Tom adopted a cat.", asked) == FILES
    assert times_sent(fake, "Tom is on call.", asked) == 0  # consumed: never sent twice


def test_a_later_entry_on_an_earlier_curated_day_is_curated_once(memory, fake, curator):
    log_on(memory, date(2026, 11, 28), "Morning: planning.")
    run(memory.services, curator(), DAY)
    asked = len(fake.requests)
    log_on(memory, date(2026, 11, 28), "Evening: Sarah moved to the platform team.", "21:00")
    run(memory.services, curator(), DAY)
    run(memory.services, curator(), DAY)
    assert times_sent(fake, "Sarah moved to the platform team.", asked) == FILES
    assert times_sent(fake, "Morning: planning.", asked) == 0


def test_the_first_curation_covers_the_whole_history_in_batches(memory, fake, curator):
    for n in range(60):
        log_on(memory, date(2026, 9, 1) + timedelta(days=n), [f"Marker {n:03d}.", *LONG_BULLETS])

    result = run(memory.services, curator(), DAY)

    total = sum(len(path.read_text()) for path in memory.vault.episodes_dir.glob("*.md"))
    assert total > 3 * EPISODE_BUDGET_CHARS and result.batches >= 4
    assert result.entries == 60 and result.left == 0 and result.status == "noop"
    for n in range(60):
        assert times_sent(fake, f"Marker {n:03d}.") == FILES, n
    assert not any("earlier characters omitted" in user for user in episode_texts(fake))
    # Oldest first: the first round holds the first day, and the days arrive in order.
    first_round = episode_texts(fake)[0]
    assert "Marker 000." in first_round and "Marker 059." not in first_round
    order = [int(m) for user in episode_texts(fake)[::FILES] for m in re.findall(r"Marker (\d{3})\.", user)]
    assert order == sorted(order)
    asked = len(fake.requests)
    assert run(memory.services, curator(), DAY).status == "noop" and len(fake.requests) == asked


def test_the_offline_curator_tidies_each_file_once_however_long_the_history(memory, monkeypatch):
    # It reads only the files, so batches of episodes would each get the same answer: one round takes them all.
    for n in range(60):
        log_on(memory, date(2026, 9, 1) + timedelta(days=n), [f"Marker {n:03d}.", *LONG_BULLETS])
    memory.save("Tom drinks tea.", "preferences", "Tom")
    tidied: list[str] = []
    real = offline.tidy
    monkeypatch.setattr(offline, "tidy", lambda item: tidied.append(item.rel) or real(item))

    result = run(memory.services, OfflineCurator(), DAY)

    total = sum(len(path.read_text()) for path in memory.vault.episodes_dir.glob("*.md"))
    assert total > 3 * EPISODE_BUDGET_CHARS
    assert result.entries == 60 and result.left == 0 and result.batches == 1
    assert sorted(tidied) == sorted(set(tidied)) and "knowledge/people.md" in tidied
    tidied.clear()
    again = run(memory.services, OfflineCurator(), DAY)
    assert again.entries == 0 and again.left == 0 and tidied == []


def test_a_failed_round_keeps_what_landed_and_the_next_run_resumes(memory, fake, curator):
    for n in range(40):
        log_on(memory, date(2026, 10, 1) + timedelta(days=n), [f"Marker {n:03d}.", *LONG_BULLETS])
    # Round one answers "unchanged" for every file; round two gets an unusable reply for every file.
    fake.push(*[UNCHANGED] * FILES, *[FakeLLM.text("{broken")] * FILES)

    failed = run(memory.services, curator(), DAY)

    assert failed.status == "failed" and failed.batches == 2 and 0 < failed.left < 40
    assert memory.state.run_record("curate")["left"] == failed.left
    asked = len(fake.requests)
    resumed = run(memory.services, curator(), DAY)
    assert resumed.status == "noop" and resumed.entries == failed.left and resumed.left == 0
    before = [times_sent(fake, f"Marker {n:03d}.") - times_sent(fake, f"Marker {n:03d}.", asked) for n in range(40)]
    after = [times_sent(fake, f"Marker {n:03d}.", asked) for n in range(40)]
    # Round one's entries landed and are never sent again; every other entry is sent by the next run.
    assert set(before) <= {0, FILES} and set(after) <= {0, FILES}
    assert [n for n in range(40) if after[n] == 0] == [n for n in range(40) if before[n] == FILES][: 40 - failed.left]
    assert after.count(FILES) == failed.left


def test_the_coverage_travels_with_the_vault_to_a_machine_that_takes_over(memory, fake, curator, tmp_path):
    log_on(memory, date(2026, 11, 27), "Sarah joined the platform team.")
    run(memory.services, curator(), DAY)
    asked = len(fake.requests)
    with Memory(memory.vault.root, Config(state_dir=str(tmp_path / "other-machine")), clock=lambda: NOW) as other:
        log_on(other, date(2026, 11, 28), "Tom moved to Oslo.")
        result = run(other, curator(), DAY)
    assert result.entries == 1
    assert times_sent(fake, "Tom moved to Oslo.", asked) == FILES
    assert times_sent(fake, "Sarah joined the platform team.", asked) == 0


def test_a_vault_curated_by_date_before_starts_from_its_date_mark(memory, fake, curator):
    """Upgrading: no coverage file yet, but the old run record says curation got through the 28th."""
    for day in (26, 27, 28):
        log_on(memory, date(2026, 11, day), f"Old day {day}.")
    log_on(memory, DAY, "New day.")
    old = memory.vault.root / "episodes/2026-11-28.md"
    memory.state.put_run_record("curate", {"status": "landed", "last_success_day": "2026-11-28",
                                           "episodes": {"episodes/2026-11-28.md": content_hash(old.read_bytes())}})
    result = run(memory.services, curator(), DAY)
    assert result.entries == 1
    assert times_sent(fake, "New day.") == FILES and times_sent(fake, "Old day") == 0
    saved = json.loads((memory.vault.root / CoverageFile(memory.writer).own_rel).read_text())
    assert saved["through"] == "2026-11-29" and len(saved["episodes"]) == 4


def test_a_dry_run_consumes_nothing(memory, fake, curator):
    log_on(memory, date(2026, 11, 27), "Sarah joined the platform team.")
    dry = run(memory.services, curator(), DAY, dry_run=True)
    assert dry.status == "dry-run" and dry.entries == 1
    assert CoverageFile(memory.writer).read() is None
    assert run(memory.services, curator(), DAY).entries == 1


def test_an_unreadable_coverage_file_is_rebuilt_from_the_date_mark(memory, fake, curator):
    log_on(memory, date(2026, 11, 27), "Sarah joined the platform team.")
    run(memory.services, curator(), DAY)
    (memory.vault.root / COVERAGE_REL).write_text("{not json")
    asked = len(fake.requests)
    log_on(memory, DAY + timedelta(days=1), "Tom moved to Oslo.")
    run(memory.services, curator(), DAY + timedelta(days=1))
    assert times_sent(fake, "Tom moved to Oslo.", asked) == FILES
    assert times_sent(fake, "Sarah joined", asked) == 0


def test_cli_a_back_dated_log_entry_reaches_the_curator(tmp_path, monkeypatch, fake):
    vault = tmp_path / "vault"
    assert run_cli("init", "--vault", str(vault)).returncode == 0
    monkeypatch.setenv("WOLFMEM_LLM_BASE_URL", fake.base_url)
    monkeypatch.setenv("WOLFMEM_LLM_MODEL", "fake-model")
    monkeypatch.setenv("WOLFMEM_LLM_MAX_RETRIES", "0")
    assert run_cli("log", "Standup: Tom is on call.", "--vault", str(vault)).returncode == 0
    assert run_cli("curate", "--vault", str(vault)).returncode == 0
    asked = len(fake.requests)
    assert times_sent(fake, "Tom is on call.") == FILES

    earlier = (datetime.now() - timedelta(days=5)).replace(hour=14, minute=5)
    logged = run_cli("log", "Tom adopted a cat.", "--when", earlier.isoformat(timespec="minutes"),
                     "--vault", str(vault))
    assert logged.returncode == 0, logged.stderr
    result = run_cli("curate", "--json", "--vault", str(vault))

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["entries"] == 1
    assert times_sent(fake, "Tom adopted a cat.", asked) == FILES
    assert times_sent(fake, "Tom is on call.", asked) == 0


def test_two_machines_coverage_files_read_as_their_union(memory):
    from wolfmem.curation.coverage import Coverage

    a, b = CoverageFile(memory.writer, "laptop-1"), CoverageFile(memory.writer, "desktop-2")
    a.write(Coverage(through="2026-11-27", episodes={"episodes/2026-11-27.md": ["aa"]}))
    b.write(Coverage(through="2026-11-28", episodes={"episodes/2026-11-27.md": ["bb"],
                                                      "episodes/2026-11-28.md": ["cc"]}))
    (memory.vault.root / COVERAGE_REL).write_text(json.dumps({"through": "2026-11-20", "episodes": {
        "episodes/2026-11-20.md": ["old"]}}))  # the shared file of before: still read
    merged = CoverageFile(memory.writer, "third-3").read()
    assert merged is not None and merged.through == "2026-11-28"
    assert merged.episodes == {"episodes/2026-11-27.md": ["aa", "bb"], "episodes/2026-11-28.md": ["cc"],
                               "episodes/2026-11-20.md": ["old"]}
    assert sorted(p.name for p in (memory.vault.root / ".wolfmem" / "curation").iterdir()) == [
        "desktop-2.json", "laptop-1.json"]


def test_the_union_keeps_the_growth_ledger_and_the_settled_days():
    # Each machine's file already holds what it read of the others': a day's count is the largest noted, not a sum.
    mine = Coverage(through="2026-11-30", added={"knowledge/people.md": {"2026-11-30": 3}},
                    settled={"knowledge/people.md": "2026-11-30"})
    theirs = Coverage(through="2026-11-29", added={"knowledge/people.md": {"2026-11-30": 3, "2026-11-29": 2}},
                      settled={"knowledge/people.md": "2026-11-29", "knowledge/technical.md": "2026-11-29"})
    both = union([mine, theirs])
    assert both.added == {"knowledge/people.md": {"2026-11-30": 3, "2026-11-29": 2}}
    assert both.settled == {"knowledge/people.md": "2026-11-30", "knowledge/technical.md": "2026-11-29"}
