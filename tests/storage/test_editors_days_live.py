"""Real vim (through tmux) keeps people.md open for days: its write gets back every save made after it loaded the file.

The agent's saves before and after vim loaded the file run three days in the past (libfaketime moves the
wall clock of those `wolfmem save` processes); then, today, the daemon runs, one more save lands, and the
person writes the buffer. History kept one version of that day, which holds the saves vim never showed:
they must be put back, none archived as removed by hand.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, run_cli, wait_until
from synckit import LIBFAKETIME, clock_shim, have_faketime
from test_editors_live import PERSON_LINE, Person, cli_save, daemon, file_text, open_editor  # noqa: F401 - fixtures

LATER = ("Xavier likes strong tea.", "Yara plays jazz piano.")


def _save_days_ago(vault: Path, shim: Path, fact: str, topic: str) -> None:
    env = {**os.environ, "LD_PRELOAD": f"{shim}:{LIBFAKETIME}", "FAKETIME": f"{-3 * 86400:+d}",
           "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
    done = subprocess.run([sys.executable, "-m", "wolfmem", "save", fact, "--type", "people", "--topic", topic,
                           "--vault", str(vault)], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
@pytest.mark.skipif(not have_faketime(), reason="needs libfaketime and a C compiler")
def test_vim_open_over_a_long_weekend_loses_no_save(
    vault: Path, tmp_path: Path, open_editor: Callable[..., Person],  # noqa: F811
    request: pytest.FixtureRequest,
) -> None:
    shim = clock_shim(tmp_path)
    for n in range(4):
        _save_days_ago(vault, shim, f"Early person {n} plays chess on Sundays.", f"Early{n}")
    person = open_editor("vim")
    person.add_line(PERSON_LINE)
    for fact in LATER:
        _save_days_ago(vault, shim, fact, fact.split()[0])
    request.getfixturevalue("daemon")  # today: the daemon runs, one more save lands
    cli_save(vault, "Zed walks in the rain.", "Zed")
    person.write()
    wait_until(lambda: all(text in file_text(vault) for text in (*LATER, "Zed walks in the rain.", PERSON_LINE)),
               timeout=15)
    assert all(file_text(vault).count(f"- {text}\n") == 1 for text in LATER)
    status = run_cli("status", "--vault", str(vault)).stdout
    assert "put back" in status and "removed by hand" not in status, status
