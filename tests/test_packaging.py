"""Packaging: every runtime import is a declared dependency, the metadata is clean, and set-up says what it does."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import metadata, packages_distributions
from pathlib import Path

import pytest
from conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def imported_distributions() -> dict[str, set[str]]:
    """The distributions whose modules wolfmem's own code imports, each with the modules that import it."""
    owners = packages_distributions()
    found: dict[str, set[str]] = {}
    for path in (REPO / "wolfmem").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "wolfmem":
                    continue
                for dist in owners.get(top, [top]):
                    found.setdefault(dist.lower().replace("_", "-"), set()).add(path.name)
    return found


def test_every_runtime_import_is_a_declared_dependency() -> None:
    declared = {_name(req) for req in PYPROJECT["project"]["dependencies"]}
    missing = {dist: users for dist, users in imported_distributions().items() if dist not in declared}
    assert not missing, f"imported at run time but not in [project] dependencies: {missing}"


def test_every_subpackage_is_packaged() -> None:
    folders = {
        "wolfmem." + init.parent.relative_to(REPO / "wolfmem").as_posix().replace("/", ".")
        for init in (REPO / "wolfmem").rglob("__init__.py")
        if init.parent != REPO / "wolfmem"
    }
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert folders <= listed, f"a non-editable install would miss {sorted(folders - listed)}"


def test_test_extras_hold_no_runtime_dependency() -> None:
    declared = {_name(req) for req in PYPROJECT["project"]["dependencies"]}
    extras = {_name(req) for req in PYPROJECT["project"]["optional-dependencies"]["test"]}
    assert not declared & extras


def test_license_is_an_spdx_expression_with_its_file() -> None:
    assert PYPROJECT["project"]["license"] == "MIT"
    assert all((REPO / name).is_file() for name in PYPROJECT["project"]["license-files"])
    assert metadata("wolfmem")["License-Expression"] == "MIT"


@pytest.mark.slow
def test_first_set_up_says_what_it_does_and_prints_no_warnings(tmp_path: Path) -> None:
    """A fresh clone's first `bootstrap.sh` (what run.sh and test.sh call), for real: venv, pip, install."""
    clone = tmp_path / "clone"
    # The files a clone of this working tree would have, committed or not yet.
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=REPO,
                            capture_output=True, text=True, check=True, timeout=60).stdout
    for rel in filter(None, listed.split("\0")):
        if (REPO / rel).is_file():
            (clone / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, clone / rel)
    env = {name: value for name, value in os.environ.items() if name not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    first = subprocess.run(["bash", "scripts/bootstrap.sh"], cwd=clone, capture_output=True, text=True,
                           env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    progress = first.stderr.splitlines()
    assert progress[0].startswith("wolfmem setup: creating the environment in")
    assert progress[1].startswith("wolfmem setup: installing wolfmem and its dependencies")
    assert progress[-1].startswith("wolfmem setup: done; the wolfmem command is")
    assert len(progress) == 3, "\n".join(progress)
    assert first.stdout == ""
    version = subprocess.run([str(clone / ".venv/bin/wolfmem"), "--version"], capture_output=True, text=True,
                             timeout=60)
    assert version.stdout.startswith("wolfmem ")
    again = subprocess.run(["bash", "scripts/bootstrap.sh"], cwd=clone, capture_output=True, text=True,
                           env=env, timeout=120)
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
