"""Incremental sync: the pure plan, decoding, fact documents, and Syncer against real files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from wolfmem import Config, Memory
from wolfmem.errors import OutsideVault
from wolfmem.search.documents import RACY_WINDOW_NS, decode_note, facts_of
from wolfmem.search.syncplan import plan
from wolfmem.storage.catalog import ManifestEntry
from wolfmem.storage.vault import DiskFile

OLD = 1_000_000_000_000_000_000  # an mtime long before any check
CHECKED = OLD + 10 * RACY_WINDOW_NS


def disk(rel: str, mtime_ns: int = OLD, size: int = 10) -> dict[str, DiskFile]:
    return {rel: DiskFile(rel, mtime_ns, size)}


def entry(mtime_ns: int = OLD, size: int = 10, checked_ns: int = CHECKED) -> ManifestEntry:
    return ManifestEntry(mtime_ns, size, "rev", checked_ns)


# -- plan (pure) --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("on_disk", "manifest", "check", "remove"),
    [
        (disk("knowledge/a.md"), {}, ("knowledge/a.md",), ()),
        (disk("knowledge/a.md"), {"knowledge/a.md": entry()}, (), ()),
        (disk("knowledge/a.md", mtime_ns=OLD + 1), {"knowledge/a.md": entry()}, ("knowledge/a.md",), ()),
        (disk("knowledge/a.md", size=11), {"knowledge/a.md": entry()}, ("knowledge/a.md",), ()),
        # racily clean: hashed within the mtime window, so the same stat proves nothing
        (disk("knowledge/a.md"), {"knowledge/a.md": entry(checked_ns=OLD + 1)}, ("knowledge/a.md",), ()),
        ({}, {"knowledge/a.md": entry()}, (), ("knowledge/a.md",)),
        (disk("knowledge/b.md"), {"knowledge/a.md": entry()}, ("knowledge/b.md",), ("knowledge/a.md",)),
    ],
    ids=["new", "unchanged", "mtime", "size", "racy", "deleted", "renamed"],
)
def test_plan(on_disk, manifest, check, remove) -> None:
    result = plan(on_disk, manifest)
    assert (result.check, result.remove) == (check, remove)
    assert bool(result) is bool(check or remove)


# -- decoding and fact documents -------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "max_bytes", "text", "note"),
    [
        (b"- hello\n", 100, "- hello\n", ""),
        (b"\xef\xbb\xbf- bom\n", 100, "- bom\n", ""),
        (b"- a\x00b\n", 100, "\n", "line 1 holds a NUL byte"),
        # Lines end at a lone CR too (an old Mac file): only the line holding the byte is emptied.
        (b"- a\r- b\x00\r- c\r", 100, "- a\r\r- c\r", "line 2 holds a NUL byte"),
        (b"\x00".join(b"- a" for _ in range(100)), 10_000, None, "binary content"),
        (b"- caf\xe9\n", 100, None, "not UTF-8"),
        (b"- one\n- two\n- three\n", 12, "- one\n- two\n", "only the first 12 bytes"),
        # A CR-only file is cut at a line's end too, never inside a line (nor a character: "not UTF-8").
        (b"- a\r- \xc3\xa9b\r- c\r", 7, "- a\r", "only the first 4 bytes"),
    ],
    ids=["plain", "bom", "nul-line", "nul-line-cr", "binary", "latin1", "capped", "capped-cr"],
)
def test_decode_note(data: bytes, max_bytes: int, text: str | None, note: str) -> None:
    got_text, got_note = decode_note(data, max_bytes)
    assert got_text == text
    assert note in got_note
    if not note:
        assert got_note == ""


def test_facts_of_gives_stable_ids() -> None:
    text = "# People\n\n## Sarah (Manager)\n\n- Sarah is my manager.\n- She likes tea.\n- She likes tea.\n"
    docs = facts_of("knowledge/people.md", text)
    assert [d.line for d in docs] == [5, 6, 7]
    assert {d.section for d in docs} == {"Sarah (Manager)"}
    assert len({d.doc_id for d in docs}) == 3
    # The id depends on path and line content, not on where the line sits.
    moved = facts_of("knowledge/people.md", "# People\n\n## Sarah (Manager)\n\n\n- Sarah is my manager.\n")
    assert moved[0].doc_id == docs[0].doc_id and moved[0].line == 6


def test_facts_of_dates_episode_facts() -> None:
    text = "# 2026-03-04\n\n## 09:15 — standup\n\n- Decided to ship Orion beta.\n"
    (doc,) = facts_of("episodes/2026-03-04.md", text)
    assert (doc.source, doc.date, doc.section) == ("episodes", "2026-03-04", "09:15 — standup")


# -- Syncer on real files ----------------------------------------------------------------------
def write(memory: Memory, rel: str, text: str | bytes) -> Path:
    path = memory.vault.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def paths_found(memory: Memory, query: str) -> set[str]:
    return {hit.path for hit in memory.search(query, limit=50)}


def age(path: Path, seconds: float = 60) -> None:
    """Move a file's mtime into the past, out of the racily-clean window."""
    when = time.time() - seconds
    os.utime(path, (when, when))


def test_second_sync_with_no_change_does_nothing(memory: Memory) -> None:
    for rel in memory.vault.scan():
        age(memory.vault.root / rel)
    write(memory, "knowledge/people.md", "# People\n\n- Sarah is my manager.\n")
    age(memory.vault.root / "knowledge/people.md")
    memory.sync()
    report = memory.sync()
    assert (report.indexed, report.removed, report.skipped) == ([], [], {})
    assert not memory.syncer.pending()


def test_touch_without_content_change_reindexes_nothing(memory: Memory) -> None:
    path = write(memory, "knowledge/people.md", "# People\n\n- Sarah is my manager.\n")
    age(path, 120)
    memory.sync()
    age(path, 60)
    report = memory.sync()
    assert report.indexed == []
    assert paths_found(memory, "Sarah") == {"knowledge/people.md"}


def test_edit_delete_and_rename_are_picked_up(memory: Memory) -> None:
    write(memory, "knowledge/recipes.md", "# Recipes\n\n- Pancakes need buttermilk.\n")
    assert paths_found(memory, "pancakes") == {"knowledge/recipes.md"}
    os.rename(memory.vault.root / "knowledge/recipes.md", memory.vault.root / "knowledge/cooking.md")
    assert paths_found(memory, "pancakes") == {"knowledge/cooking.md"}
    (memory.vault.root / "knowledge/cooking.md").unlink()
    assert paths_found(memory, "pancakes") == set()
    assert "knowledge/cooking.md" not in memory.syncer.manifest()


def test_same_size_edit_in_the_same_tick_is_found(memory: Memory) -> None:
    """The racily-clean case: an edit that keeps size and mtime is still seen."""
    path = write(memory, "knowledge/people.md", "# People\n\n## Manager\n\n- Sarah runs the platform team.\n")
    assert paths_found(memory, "Sarah") == {"knowledge/people.md"}
    before = path.stat()
    path.write_text(path.read_text().replace("Sarah", "Susan"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert paths_found(memory, "Susan") == {"knowledge/people.md"}
    assert paths_found(memory, "Sarah") == set()


def test_a_file_growing_past_the_cap_is_warned_about_once(
    vault: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = Config(state_dir=str(tmp_path / "wolfmem-state"), index_max_file_bytes=2_000)
    with Memory(vault, config) as memory:
        path = write(memory, "knowledge/big.md", "# Big\n\n" + "".join(f"- filler line {n} about zebras.\n"
                                                                        for n in range(200)))
        for n in range(3):
            with path.open("a") as handle:
                handle.write(f"- appended line {n}\n")
            memory.sync()
        warned = [r for r in caplog.records if r.levelname == "WARNING" and "bytes are indexed" in r.getMessage()]
        assert len(warned) == 1
        assert "first" in memory.status()["index"]["skipped_files"]["knowledge/big.md"]


def test_bad_files_are_skipped_and_named_while_the_rest_is_indexed(vault: Path, tmp_path: Path) -> None:
    config = Config(state_dir=str(tmp_path / "wolfmem-state"), index_max_file_bytes=2_000)
    with Memory(vault, config) as memory:
        write(memory, "knowledge/people.md", "# People\n\n- Sarah is my manager.\n")
        write(memory, "knowledge/latin1.md", "# Notes\n\n- café au lait\n".encode("latin-1"))
        write(memory, "knowledge/blob.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
        big = "# Big\n\n" + "".join(f"- filler line number {n} about zebras.\n" for n in range(200))
        write(memory, "knowledge/big.md", big + "- The hidden tail mentions narwhals.\n")
        write(memory, "knowledge/broken.md",
              "# Broken\n\n## Fence\n\n- before the fence mentions walruses.\n\n```python\n## not a heading\n"
              "- inside the fence\n")
        write(memory, "knowledge/nested.md",
              "# Nested\n\n> - > 1. - > deep quote about otters\n>>>>> ## Quoted heading\n"
              "- [ ] task about beavers\n    - indented\n\t\t- tabbed about badgers\n<div>\n- html block\n")
        report = memory.sync()
        assert set(report.skipped) == {"knowledge/latin1.md", "knowledge/blob.md", "knowledge/big.md"}
        assert "UTF-8" in report.skipped["knowledge/latin1.md"]
        assert "binary" in report.skipped["knowledge/blob.md"]
        assert "first" in report.skipped["knowledge/big.md"]
        skipped = memory.status()["index"]["skipped_files"]
        assert set(skipped) == {"knowledge/latin1.md", "knowledge/blob.md", "knowledge/big.md"}
        assert paths_found(memory, "Sarah") == {"knowledge/people.md"}
        assert paths_found(memory, "zebras") == {"knowledge/big.md"}
        assert paths_found(memory, "narwhals") == set()
        assert paths_found(memory, "walruses") == {"knowledge/broken.md"}
        # The unclosed fence's lines are code, found in the section above it, never a section of their own.
        found = {(h.text, h.section) for h in memory.search("heading") if h.path == "knowledge/broken.md"}
        assert ("## not a heading", "Fence") in found
        assert all(section == "Fence" for _, section in found)
        assert paths_found(memory, "otters beavers badgers") == {"knowledge/nested.md"}
        # A skipped file that is fixed is indexed on the next sync.
        write(memory, "knowledge/latin1.md", "# Notes\n\n- café au lait\n")
        assert paths_found(memory, "café") == {"knowledge/latin1.md"}
        assert "knowledge/latin1.md" not in memory.status()["index"]["skipped_files"]


def test_symlink_leaving_the_vault_is_not_followed(memory: Memory, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\n- The launch code is kept in the blue binder.\n")
    (memory.vault.root / "knowledge/outside.md").symlink_to(outside)
    assert paths_found(memory, "launch binder") == set()
    with pytest.raises(OutsideVault):
        memory.get("knowledge/outside.md")


def test_symlink_to_a_note_inside_the_vault_is_indexed(memory: Memory) -> None:
    write(memory, "knowledge/recipes.md", "# Recipes\n\n- Pancakes need buttermilk.\n")
    (memory.vault.root / "knowledge/alias.md").symlink_to(memory.vault.root / "knowledge/recipes.md")
    assert paths_found(memory, "buttermilk") == {"knowledge/recipes.md", "knowledge/alias.md"}


def test_manifest_lives_in_the_index_folder(memory: Memory) -> None:
    memory.sync()
    assert memory.syncer.manifest_path.parent == memory.vault.index_dir
    assert set(memory.syncer.manifest()) == set(memory.vault.scan())


def test_reindex_rebuilds_everything(memory: Memory) -> None:
    write(memory, "knowledge/people.md", "# People\n\n- Sarah is my manager.\n")
    write(memory, "episodes/2026-03-04.md", "# 2026-03-04\n\n## 09:00 — call\n\n- Called the bank.\n")
    memory.sync()
    report = memory.reindex()
    assert set(report.indexed) == set(memory.vault.scan())
    assert report.facts == memory.index.count() == 2


def test_progress_is_reported(memory: Memory) -> None:
    calls: list[tuple[int, int]] = []
    memory.reindex(lambda done, total: calls.append((done, total)))
    total = len(memory.vault.scan())
    assert calls[-1] == (total, total)


def test_a_file_swapped_for_a_link_out_since_the_scan_is_not_unchanged(memory: Memory, tmp_path: Path) -> None:
    """The fallback when the state folder refuses the index's writes asks whether each planned file still holds
    what the index has; one that became a link out of the vault does not (the index must drop it)."""
    path = write(memory, "knowledge/recipes.md", "# Recipes\n\n- Pancakes need buttermilk.\n")
    memory.sync()
    recorded = memory.syncer.manifest()["knowledge/recipes.md"]
    outside = tmp_path / "outside.md"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)
    assert memory.syncer._unchanged("knowledge/recipes.md", recorded) is False



def test_a_file_shrinking_below_64_facts_keeps_its_lines(memory: Memory) -> None:
    """The catalog remembered a 64-fact file's rows past a commit of 63: the next commit shifted facts by them."""
    rel = "knowledge/notes.md"
    facts = [f"- Note number {n} about item{n}." for n in range(63)]
    with_copy = [*facts[:16], facts[5], *facts[16:]]  # 64 facts, one of them twice
    write(memory, rel, "# Notes\n\n" + "\n".join(with_copy) + "\n")
    memory.sync()
    # The copy deleted by hand: a line whose text stays on another line, so the file is committed whole.
    write(memory, rel, "# Notes\n\n" + "\n".join(facts) + "\n")
    memory.sync()
    write(memory, rel, "# Notes\n\n- A line added at the top.\n" + "\n".join(facts) + "\n")
    memory.sync()
    lines = (memory.vault.root / rel).read_text().splitlines()
    for n in (5, 20, 62):
        hit = next(hit for hit in memory.search(f"item{n}") if hit.path == rel)
        assert lines[hit.line - 1] == f"- {hit.text}", n


def test_a_line_written_back_after_a_file_shrank_below_64_facts_is_found(memory: Memory) -> None:
    """The remembered 64 rows still held the deleted line: written back (an editor's undo), it was not indexed."""
    rel = "knowledge/notes.md"
    facts = [f"- Note number {n} about item{n}." for n in range(63)]
    before = "# Notes\n\n" + "\n".join([*facts[:16], facts[5], *facts[16:]]) + "\n"  # 64 facts, one twice
    write(memory, rel, before)
    memory.sync()
    # One copy and a line of its own deleted: the copy's text stays on a line, so the file is committed whole.
    write(memory, rel, "# Notes\n\n" + "\n".join(facts[:30] + facts[31:]) + "\n")
    memory.sync()
    assert not any(hit.path == rel for hit in memory.search("item30"))
    write(memory, rel, before)  # undone
    memory.sync()
    assert any(hit.path == rel and hit.text == "Note number 30 about item30." for hit in memory.search("item30"))
