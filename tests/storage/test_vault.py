"""The vault on disk: layout, confinement, scanning, atomic writes and the cross-process lock."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from wolfmem import Config, Memory
from wolfmem.errors import NotAVault, OutsideVault, UsageError, VaultBusy
from wolfmem.storage.exchange import atomic_write
from wolfmem.storage.vault import (
    CURATED_PATHS,
    Vault,
    episode_date,
    is_conflict_copy,
    is_indexable,
    source_of,
)


def make_vault(tmp_path: Path, name: str = "vault") -> Vault:
    """A Vault object over tmp_path/name with a private state root (no layout yet)."""
    return Vault(tmp_path / name, tmp_path / "wolfmem-state")


# -- layout -------------------------------------------------------------------------
def test_init_creates_the_layout_from_templates(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    created = vault.init()
    assert "knowledge/" in created and "episodes/" in created
    for rel in CURATED_PATHS:
        assert rel in created
        text = (vault.root / rel).read_text("utf-8")
        assert text.startswith("# ")
        assert "<!--" in text and "-->" in text
    assert vault.exists()


def test_init_never_overwrites_and_reports_nothing_new(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    vault.init()
    people = vault.root / "knowledge/people.md"
    people.write_text("# People\n\n## Sarah\n\n- Sarah is my manager.\n")
    (vault.root / "knowledge/projects.md").unlink()
    created = vault.init()
    assert created == ["knowledge/projects.md"]
    assert "Sarah is my manager" in people.read_text()


def test_require_refuses_a_folder_that_is_not_a_vault(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, "typo")
    with pytest.raises(NotAVault, match="wolfmem init"):
        vault.require()
    assert not vault.root.exists()


def test_memory_without_create_refuses_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(NotAVault):
        Memory(tmp_path / "nowhere", Config(state_dir=str(tmp_path / "s")), create=False)
    assert not (tmp_path / "nowhere").exists()


def test_state_lives_outside_the_vault(vault: Path, config: Config) -> None:
    with Memory(vault, config) as memory:
        memory.search("anything at all")
        state = memory.vault.state_dir.resolve()
    assert vault.resolve() not in state.parents
    assert {p.name for p in vault.iterdir()} == {"knowledge", "episodes"}


def test_two_vaults_get_two_state_folders(tmp_path: Path) -> None:
    a = Vault(tmp_path / "a" / "vault", tmp_path / "s")
    b = Vault(tmp_path / "b" / "vault", tmp_path / "s")
    assert a.state_dir != b.state_dir


# -- names --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rel", "indexable"),
    [
        ("knowledge/people.md", True),
        ("knowledge/recipes.md", True),
        ("knowledge/work/clients.md", True),
        ("episodes/2026-03-04.md", True),
        ("consolidated/2026-03.md", True),
        ("knowledge/people.txt", False),
        ("knowledge/people.md~", False),
        ("knowledge/people.md.bak", False),
        ("knowledge/.people.md.swp", False),
        ("knowledge/.#people.md", False),
        ("knowledge/#people.md#", False),
        ("knowledge/.people.md.1234.tmp", False),
        ("knowledge/.obsidian/notes.md", False),
        ("knowledge/people.sync-conflict-20260101-abc.md", False),  # merged into their file, never notes
        ("knowledge/people (conflicted copy 2026-01-01).md", False),
        ("notes/people.md", False),
        ("README.md", False),
        ("knowledge", False),
    ],
)
def test_is_indexable(rel: str, indexable: bool) -> None:
    assert is_indexable(rel) is indexable


@pytest.mark.parametrize(
    ("rel", "day"),
    [
        ("episodes/2026-03-04.md", "2026-03-04"),
        ("episodes/notes.md", None),
        ("knowledge/2026-03-04.md", None),
        ("episodes/sub/2026-03-04.md", "2026-03-04"),
    ],
)
def test_episode_date(rel: str, day: str | None) -> None:
    assert episode_date(rel) == day


def test_source_and_conflict_names() -> None:
    assert source_of("knowledge/x/y.md") == "knowledge"
    assert source_of("episodes/2026-01-01.md") == "episodes"
    assert is_conflict_copy("knowledge/people.sync-conflict-20260101-120000-ABC.md")
    assert not is_conflict_copy("knowledge/people.md")


# -- confinement ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "rel",
    ["..", "../x.md", "knowledge/../../x.md", "knowledge/..\\..\\x.md", "/etc/passwd", "\\etc\\passwd",
     "C:\\x.md", "knowledge/\x00people.md", ""],
)
def test_resolve_refuses_paths_that_leave_the_vault(tmp_path: Path, rel: str) -> None:
    vault = make_vault(tmp_path)
    vault.init()
    with pytest.raises(OutsideVault):
        vault.resolve(rel)


def test_resolve_refuses_symlink_escape(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    vault.init()
    secret = tmp_path / "secret.md"
    secret.write_text("- the password is hunter2\n")
    (vault.root / "knowledge/leak.md").symlink_to(secret)
    (vault.root / "knowledge/outside").symlink_to(tmp_path)
    with pytest.raises(OutsideVault):
        vault.resolve("knowledge/leak.md")
    with pytest.raises(OutsideVault):
        vault.resolve("knowledge/outside/secret.md")


def test_resolve_accepts_paths_inside(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    vault.init()
    (vault.root / "knowledge/alias.md").symlink_to(vault.root / "knowledge/people.md")
    assert vault.resolve("knowledge/people.md") == vault.root / "knowledge/people.md"
    assert vault.resolve("knowledge/alias.md") == vault.root / "knowledge/alias.md"
    assert vault.resolve("knowledge/not-yet.md") == vault.root / "knowledge/not-yet.md"


# -- scanning -------------------------------------------------------------------------
def test_scan_finds_notes_and_skips_what_is_not_one(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    vault.init()
    root = vault.root
    (root / "knowledge/work").mkdir()
    (root / "knowledge/work/clients.md").write_text("- Acme is a client.\n")
    (root / "episodes/2026-03-04.md").write_text("# 2026-03-04\n")
    (root / "knowledge/people.md~").write_text("backup\n")
    (root / "knowledge/.hidden").mkdir()
    (root / "knowledge/.hidden/x.md").write_text("hidden\n")
    (root / "README.md").write_text("not a note\n")
    outside = tmp_path / "outside.md"
    outside.write_text("- outside\n")
    (root / "knowledge/escape.md").symlink_to(outside)
    (root / "knowledge/outdir").symlink_to(tmp_path)
    found = set(vault.scan())
    assert found == set(CURATED_PATHS) | {"knowledge/work/clients.md", "episodes/2026-03-04.md"}


def test_scan_survives_a_symlink_loop_without_duplicates(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    vault.init()
    (vault.root / "knowledge/loop").symlink_to(vault.root / "knowledge")
    assert set(vault.scan()) == set(CURATED_PATHS)


def test_conflict_copies_are_listed(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    vault.init()
    (vault.root / "knowledge/people.sync-conflict-20260101-120000-ABC.md").write_text("x\n")
    assert vault.conflict_copies() == ["knowledge/people.sync-conflict-20260101-120000-ABC.md"]


# -- writing --------------------------------------------------------------------------
def test_atomic_write_leaves_no_temp_files_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "notes" / "a.md"
    atomic_write(target, b"one\n")
    os.chmod(target, 0o600)
    atomic_write(target, b"two\n")
    assert target.read_bytes() == b"two\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["a.md"]


def test_lock_is_reentrant_in_one_thread(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    with vault.lock(), vault.lock(timeout=0.1):
        pass


_HOLDER = """
import sys
from pathlib import Path
from wolfmem.storage.vault import Vault
vault = Vault(Path(sys.argv[1]), Path(sys.argv[2]))
with vault.lock():
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_lock_excludes_other_processes_and_is_freed_when_the_holder_dies(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(vault.root), str(tmp_path / "wolfmem-state")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(VaultBusy, match="try again"), vault.lock(timeout=0.2):
            pass
        holder.kill()
        holder.wait(timeout=10)
        with vault.lock(timeout=5):
            pass
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_a_file_where_the_vault_should_be_is_a_usage_error(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("not a folder")
    with pytest.raises(UsageError, match="is a file, not a folder"):
        Memory(target, Config(state_dir=str(tmp_path / "state")))
    assert target.read_text() == "not a folder"


@pytest.fixture(params=["exchange", "no-exchange"])
def swap_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with Linux's atomic exchange, and as on filesystems and systems without it."""
    if request.param == "no-exchange":
        monkeypatch.setattr("wolfmem.storage.exchange._exchange", lambda a, b: False)
    return request.param


def test_replace_if_unchanged_writes_only_over_what_was_read(tmp_path: Path, swap_mode: str) -> None:
    from wolfmem.storage.exchange import replace_if_unchanged

    path = tmp_path / "people.md"
    path.write_bytes(b"old\n")
    assert replace_if_unchanged(path, b"old\n", b"new\n") is None
    assert path.read_bytes() == b"new\n"
    # Someone else wrote since we read: nothing is written, and we are told what is there now.
    assert replace_if_unchanged(path, b"old\n", b"mine\n") == (b"new\n", b"new\n")
    assert path.read_bytes() == b"new\n"
    # Creating: only if the file is still absent.
    fresh = tmp_path / "fresh.md"
    assert replace_if_unchanged(fresh, b"", b"first\n") is None
    assert replace_if_unchanged(fresh, b"", b"second\n") == (b"first\n", b"first\n")
    assert fresh.read_bytes() == b"first\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.md", "people.md"], "no temp files left"


def test_saves_racing_a_careful_editor_lose_nothing(tmp_path: Path) -> None:
    # With the atomic exchange only: without it, a rename that lands between the last check and
    # our own rename cannot be seen by anyone (README, design notes).
    import threading

    from wolfmem.storage.exchange import replace_if_unchanged

    with Memory(tmp_path / "vault", Config(state_dir=str(tmp_path / "state"))) as memory:
        path = memory.vault.root / "knowledge" / "technical.md"
        stop = threading.Event()
        notes: list[str] = []

        def editor() -> None:
            for n in range(30):
                line = f"- editor note {n}\n".encode()
                expected = base = path.read_bytes()
                while (found := replace_if_unchanged(path, expected, base + line)) is not None:
                    expected, base = found
                notes.append(line.decode().strip())
                if stop.wait(0.005):
                    return

        thread = threading.Thread(target=editor)
        thread.start()
        facts = [f"Service {n} listens on port {7000 + n}" for n in range(30)]
        for fact in facts:
            memory.save(fact)
        stop.set()
        thread.join()
        lines = path.read_text("utf-8").splitlines()
    assert [note for note in notes if note not in lines] == []
    assert all(lines.count(f"- {fact}") == 1 for fact in facts)
