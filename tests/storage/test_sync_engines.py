"""One vault on two machines through real sync engines: Syncthing (two instances on 127.0.0.1), git, unison.

Each "machine" is a vault folder with its own wolfmem state folder (its own machine id); Syncthing's
machines also run their own `wolfmem daemon`. After the engine converges, every acknowledged save and
every hand-written line is in people.md on both machines and no conflict copy is left in the vault.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from synckit import Machine, acknowledged, conflict_copies, converged, have_engines, lines_of, syncthing_pair

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not have_engines(), reason="needs syncthing, unison and git")]

PEOPLE = "knowledge/people.md"


def _facts(machine: str, count: int) -> list[tuple[str, str]]:
    return [(f"{name} from {machine} likes dish number {n}.", name)
            for n in range(count) for name in (f"Ann{machine}{n % 3}",)]


def test_syncthing_two_machines_saving_into_one_file_lose_nothing(tmp_path: Path) -> None:
    a_root, b_root = tmp_path / "a" / "vault", tmp_path / "b" / "vault"
    a, b = Machine(a_root, tmp_path / "a" / "state"), Machine(b_root, tmp_path / "b" / "state")
    assert a.cli("init").returncode == 0
    with syncthing_pair(tmp_path, a_root, b_root) as pair:
        converged(pair, a_root, b_root)
        for machine in (a, b):
            machine.start()
        try:
            savers = [a.save_many(_facts("A", 12), 0.2), b.save_many(_facts("B", 12), 0.2)]
            time.sleep(1.5)
            with open(a_root / PEOPLE, "a", encoding="utf-8") as handle:  # a person's line, by hand, on A
                handle.write("- Written by hand on A: Ann loves the sea.\n")
            saved = [fact for process in savers for fact in acknowledged(process)]
            converged(pair, a_root, b_root, quiet=5)
        finally:
            for machine in (a, b):
                machine.stop()
        converged(pair, a_root, b_root)
    assert len(saved) == 24
    for root in (a_root, b_root):
        have = lines_of(root)
        assert [fact for fact in saved if fact not in have] == []
        assert "Written by hand on A: Ann loves the sea." in have
        assert conflict_copies(root) == []
    text = (a_root / PEOPLE).read_text()
    assert all(text.count(f"- {fact}\n") == 1 for fact in saved), "no line twice"
    assert "<<<<<<<" not in text


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          capture_output=True, text=True, check=check)


@pytest.mark.parametrize("union", [False, True], ids=["plain merge", "merge=union"])
def test_git_auto_commit_loops_with_conflicts_lose_nothing(tmp_path: Path, union: bool) -> None:
    a, b = _git_pair(tmp_path, union)
    a_root, b_root = a.root, b.root
    saved: list[str] = []
    for round_ in range(3):
        for name, machine in (("A", a), ("B", b)):
            for n in range(3):
                receipt = machine.cli("save", f"{name}{round_} person {n} plays the oboe.", "--type", "people")
                assert receipt.returncode == 0, receipt.stderr
                saved.append(f"{name}{round_} person {n} plays the oboe.")
        for machine in (a, b):  # each machine's auto-commit loop: commit, pull (maybe conflicted), push
            root = machine.root
            _git(root, "add", "-A")
            _git(root, "commit", "-qm", "auto", check=False)
            _git(root, "pull", "-q", "--no-rebase", "origin", "main", check=False)
            machine.cli("search", "oboe")  # the next wolfmem call resolves what git left
            _git(root, "add", "-A")
            _git(root, "commit", "-qm", "auto", check=False)
            _git(root, "push", "-q", "origin", "main", check=False)
    for machine in (a, b, a):
        _git(machine.root, "pull", "-q", "--no-rebase", "origin", "main", check=False)
        machine.cli("search", "oboe")
        _git(machine.root, "add", "-A")
        _git(machine.root, "commit", "-qm", "auto", check=False)
        _git(machine.root, "push", "-q", "origin", "main", check=False)
    for root in (a_root, b_root):
        have = lines_of(root)
        assert [fact for fact in saved if fact not in have] == []
        assert "<<<<<<<" not in (root / PEOPLE).read_text()
        search = Machine(root, root.parent / "state").cli("search", "HEAD")
        assert "<<<<<<<" not in search.stdout


def test_unison_copies_on_conflict_are_merged_back(tmp_path: Path) -> None:
    a_root, b_root = tmp_path / "a" / "vault", tmp_path / "b" / "vault"
    a, b = Machine(a_root, tmp_path / "a" / "state"), Machine(b_root, tmp_path / "b" / "state")
    assert a.cli("init").returncode == 0
    b_root.mkdir(parents=True)
    env = {"HOME": str(tmp_path / "unison-home")}
    (tmp_path / "unison-home").mkdir()

    def unison() -> None:
        subprocess.run(["unison", str(a_root), str(b_root), "-batch", "-auto", "-copyonconflict", "-prefer", "newer",
                        "-ignore", "Name .*.wolfmem-displaced-*", "-ignore", "Name *.bak"],
                       capture_output=True, env={**env, "PATH": "/usr/bin:/bin"}, check=True)

    unison()
    saved = []
    for n in range(3):
        for name, machine in (("A", a), ("B", b)):
            fact = f"{name} friend {n} rows on the lake."
            assert machine.cli("save", fact, "--type", "people").returncode == 0
            saved.append(fact)
        unison()
        for machine in (a, b):
            machine.cli("search", "oboe")
        unison()
    for machine in (a, b):
        machine.cli("search", "oboe")
    unison()
    for root in (a_root, b_root):
        assert [fact for fact in saved if fact not in lines_of(root)] == []
        assert conflict_copies(root) == []


def test_git_two_machines_saving_into_the_same_new_sections_merge_by_section(tmp_path: Path) -> None:
    a, b = _git_pair(tmp_path)
    a_root, b_root = a.root, b.root
    for name, machine in (("A", a), ("B", b)):  # each machine's agent saves into the same two new sections
        for fact, topic in ((f"Dana {name} keeps bees.", "Dana"), (f"Tom {name} sails.", "Tom")):
            assert machine.cli("save", fact, "--type", "people", "--topic", topic).returncode == 0
    for machine in (a, b, a):
        _git(machine.root, "add", "-A")
        _git(machine.root, "commit", "-qm", "auto", check=False)
        _git(machine.root, "pull", "-q", "--no-rebase", "origin", "main", check=False)
        machine.cli("search", "bees")  # the next wolfmem call resolves what git left
        _git(machine.root, "add", "-A")
        _git(machine.root, "commit", "-qm", "auto", check=False)
        _git(machine.root, "push", "-q", "origin", "main", check=False)
    for root in (a_root, b_root):
        text = (root / PEOPLE).read_text()
        lines = [line for line in text.splitlines() if line.strip()]
        assert len(lines) == len(set(lines)) and "<<<<<<<" not in text, text
        dana, tom = text.split("## Dana")[1].split("## Tom")
        assert "- Dana A keeps bees." in dana and "- Dana B keeps bees." in dana, text
        assert "- Tom A sails." in tom and "- Tom B sails." in tom, text
    assert "needs you" not in a.cli("status").stdout


def _git_pair(tmp_path: Path, union: bool = False) -> tuple[Machine, Machine]:
    """Two machines' vaults, A's first commit pushed to a bare origin and cloned by B."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    a_root, b_root = tmp_path / "a" / "vault", tmp_path / "b" / "vault"
    a, b = Machine(a_root, tmp_path / "a" / "state"), Machine(b_root, tmp_path / "b" / "state")
    assert a.cli("init").returncode == 0
    (a_root / ".gitignore").write_text("*.bak\n*~\n.*.swp\n.*.tmp\n.*.wolfmem-displaced-*\n")
    if union:
        (a_root / ".gitattributes").write_text("knowledge/*.md merge=union\nepisodes/*.md merge=union\n"
                                               ".wolfmem/**/*.jsonl merge=union\n")
    _git(a_root, "init", "-q", "-b", "main")
    _git(a_root, "add", "-A")
    _git(a_root, "commit", "-qm", "vault")
    _git(a_root, "remote", "add", "origin", str(origin))
    _git(a_root, "push", "-q", "origin", "main")
    subprocess.run(["git", "clone", "-q", "-b", "main", str(origin), str(b_root)], check=True)
    return a, b
