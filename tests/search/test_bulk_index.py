"""Indexing in spawned worker processes gives the same index as indexing in this one; refreshed
searchers see every commit's additions, deletions and merges."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from wolfmem import Config, Memory
from wolfmem.search import parallel
from wolfmem.search.index import FactIndex
from wolfmem.search.schema import FactDoc


def write_vault(root: Path) -> None:
    (root / "knowledge").mkdir(parents=True, exist_ok=True)
    (root / "episodes").mkdir(exist_ok=True)
    (root / "knowledge" / "people.md").write_text(
        "# People\n\n## Sarah\n- Sarah leads the billing team.\n- Sarah prefers tea.\n", "utf-8"
    )
    for n in range(12):
        lines = [f"# 2026-01-{n + 1:02d}", "", "## 09:00 — standup"]
        lines += [f"- item{n}x{k} was discussed with topic{k % 5}" for k in range(20)]
        (root / "episodes" / f"2026-01-{n + 1:02d}.md").write_text("\n".join(lines) + "\n", "utf-8")
    (root / "episodes" / "2026-02-01.md").write_bytes(b"\x00binary")


def snapshot(memory: Memory) -> tuple[set[tuple[str, int, str, str, str]], dict[str, str]]:
    facts = {(hit.path, hit.line, hit.section, hit.text, hit.date) for hit in memory.index.iter_facts()}
    return facts, memory.syncer.skipped()


@pytest.mark.slow
def test_workers_build_the_same_index_as_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_vault(tmp_path / "vault")
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "serial"))) as memory:
        serial_report = memory.reindex()
        serial = snapshot(memory)
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "SHARE_BYTES", 2_000)  # several shares per worker
    spawned: list[int] = []
    real_run = parallel.run
    monkeypatch.setattr(parallel, "run", lambda shares, *args: spawned.append(len(shares)) or real_run(shares, *args))
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "spawned"))) as memory:
        report = memory.reindex()
        assert spawned and spawned[0] > 1
        assert snapshot(memory) == serial
        assert (report.indexed, report.facts, report.skipped) == (
            serial_report.indexed, serial_report.facts, serial_report.skipped,
        )
        # Knowledge lines got their first-seen day recorded, as a serial sync does.
        assert len(memory.state.first_seen("knowledge/people.md")) == 2
        # The index keeps working as usual afterwards: a save, a search, an edit.
        memory.save("Sarah moved to the payments team.", type="people")
        assert "Sarah moved to the payments team." in [hit.text for hit in memory.search("payments")]
        (tmp_path / "vault" / "episodes" / "2026-01-01.md").write_text("# 2026-01-01\n\n- only this now\n")
        assert memory.search("item0x3 topic3") == [] or all(
            hit.path != "episodes/2026-01-01.md" for hit in memory.search("item0x3 topic3")
        )


def test_when_workers_cannot_start_the_sync_indexes_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    write_vault(tmp_path / "vault")
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(parallel.sys, "executable", str(tmp_path / "no-such-python"))
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state"))) as memory:
        report = memory.reindex()
        assert "indexing in worker processes failed" in caplog.text
        assert report.facts == memory.index.count() == 2 + 12 * 20
        assert "Sarah prefers tea." in {hit.text for hit in memory.search("tea")}


def test_a_changed_file_is_indexed_in_this_process_however_big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28: a daemon sent two appended-to files of 250 kB to workers on every change, holding the
    index lock for seconds; only files new to the index make a big job."""
    write_vault(tmp_path / "vault")
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)
    spawned: list[int] = []
    real_run = parallel.run
    monkeypatch.setattr(parallel, "run", lambda shares, *args: spawned.append(len(shares)) or real_run(shares, *args))
    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state"))) as memory:
        memory.sync()
        assert spawned  # the first sync: every file is new
        spawned.clear()
        with (tmp_path / "vault" / "knowledge" / "people.md").open("a") as handle:
            handle.write("- Omar Vance repairs the foghorn.\n")
        memory.sync()
        assert spawned == []
        assert memory.search("foghorn")[0].text == "Omar Vance repairs the foghorn."


def doc(path: str, n: int, text: str) -> FactDoc:
    return FactDoc(f"{path}#{n}", path, "knowledge", "", n, text, "")


def test_refreshed_searchers_see_additions_deletions_and_merges(tmp_path: Path) -> None:
    """A long-lived reader keeps readers of unchanged segments; it must still see every change."""
    writer, reader = FactIndex(tmp_path / "index"), FactIndex(tmp_path / "index")
    rng = random.Random(4)
    model: dict[str, list[str]] = {}
    for step in range(40):  # enough commits for Whoosh to merge small segments several times
        path = f"knowledge/f{rng.randrange(6)}.md"
        if model.get(path) and rng.random() < 0.25:
            del model[path]
            writer.replace_files({}, [path])
        else:
            texts = [f"word{step}x{k} shared" for k in range(rng.randint(1, 4))]
            model[path] = texts
            writer.replace_files({path: [doc(path, k, text) for k, text in enumerate(texts)]}, [])
        want = sorted(text for texts in model.values() for text in texts)
        for index in (writer, reader):
            assert sorted(hit.text for hit in index.iter_facts()) == want, step
            assert index.count() == len(want)
            assert {hit.text for hit in index.search({"share": 1.0}, limit=50)} == set(want)


def shares_of(root: Path, index_dir: Path, count: int) -> list[parallel.Share]:
    rels = sorted(str(path.relative_to(root)) for path in (root / "episodes").glob("2026-01-*.md"))
    return [parallel.Share(str(index_dir), str(root), tuple(rels[n::count]), {}, 10**6, {}, "2026-01-01")
            for n in range(count)]


@pytest.mark.slow
def test_each_worker_interpreter_indexes_several_shares_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_vault(tmp_path / "vault")
    FactIndex(tmp_path / "index").open()
    shares = shares_of(tmp_path / "vault", tmp_path / "index", 6)
    started: list[object] = []
    real_popen = parallel.subprocess.Popen
    monkeypatch.setattr(parallel.subprocess, "Popen",
                        lambda *args, **kw: started.append(args) or real_popen(*args, **kw))
    seen: list[tuple[int, int]] = []
    results = parallel.run(shares, 2, lambda done, total: seen.append((done, total)))
    assert len(started) == 2  # two interpreters for six shares
    assert [sorted(result.rows) for result in results] == [sorted(share.rels) for share in shares]
    assert [done for done, _ in seen] == sorted(done for done, _ in seen) and seen[-1] == (12, 12)


def test_a_worker_that_fails_names_its_error(tmp_path: Path) -> None:
    write_vault(tmp_path / "vault")
    FactIndex(tmp_path / "index").open()
    good, bad = shares_of(tmp_path / "vault", tmp_path / "index", 2)
    bad = dataclasses.replace(bad, index_dir=str(tmp_path / "no-index"))
    with pytest.raises(parallel.WorkerFailed, match="EmptyIndexError"):
        parallel.run([good, bad], 2)
