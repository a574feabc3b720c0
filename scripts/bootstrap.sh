#!/usr/bin/env bash
# Create .venv (once) and install wolfmem with its test extras into it. Safe to run again.
# Progress goes to stderr, so a caller's stdout stays its own.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
say() { echo "wolfmem setup: $*" >&2; }
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || { echo "wolfmem needs Python 3.11 or newer" >&2; exit 1; }
    say "creating the environment in $(pwd)/.venv (first run only)"
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.wolfmem-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    say "installing wolfmem and its dependencies into .venv (about a minute the first time)"
    # -qq: errors still print, but not setuptools' notes on editable installs, which are for packagers.
    .venv/bin/python -m pip install -qq --upgrade pip
    .venv/bin/python -m pip install -qq -e '.[test]'
    touch "$stamp"
    say "done; the wolfmem command is $(pwd)/.venv/bin/wolfmem"
fi
