"""One vault on two machines through real Syncthing: a file deleted by hand on one while the other saves into it.

A person on machine A deletes knowledge/people.md while A's folder is cut off from B, and an agent on B
saves a fact into it. Once the folders sync again the save B acknowledged is in people.md on both machines,
with no conflict copy left (Syncthing lets a change win over a concurrent delete; wolfmem must not lose it
when its daemon on A meets a missing file, nor recreate a template that hides B's version).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from synckit import Machine, acknowledged, conflict_copies, converged, have_engines, lines_of, syncthing_pair

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not have_engines(), reason="needs syncthing, unison and git")]

PEOPLE = "knowledge/people.md"


def test_a_file_deleted_on_one_machine_while_the_other_saves_into_it_keeps_the_save(tmp_path: Path) -> None:
    a = Machine(tmp_path / "a" / "vault", tmp_path / "a" / "state")
    b = Machine(tmp_path / "b" / "vault", tmp_path / "b" / "state")
    assert a.cli("init").returncode == 0
    with syncthing_pair(tmp_path, a.root, b.root) as pair:
        converged(pair, a.root, b.root)
        for machine in (a, b):
            machine.start()
        try:
            saved = acknowledged(a.save_many([("Ann rows on the lake.", "Ann")], 0))
            converged(pair, a.root, b.root)
            pair[0].pause()
            (a.root / PEOPLE).unlink()  # the person on A deletes the file
            saved += acknowledged(b.save_many([("Bea sings in a choir.", "Bea"), ("Cy fixes bikes.", "Cy")], 0.1))
            saved += acknowledged(a.save_many([("Dee paints at night.", "Dee")], 0))  # A saves into it afresh
            pair[0].pause(False)
            converged(pair, a.root, b.root, quiet=5)
        finally:
            for machine in (a, b):
                machine.stop()
        converged(pair, a.root, b.root)
    b_saves = ["Bea sings in a choir.", "Cy fixes bikes.", "Dee paints at night."]
    for root in (a.root, b.root):
        assert [fact for fact in b_saves if fact not in lines_of(root)] == [], root
        assert conflict_copies(root) == [], root
        text = (root / PEOPLE).read_text("utf-8")
        assert text.count("# People") == 1 and all(text.count(f"- {fact}\n") == 1 for fact in b_saves)
    assert len(saved) == 4
