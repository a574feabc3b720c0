#!/usr/bin/env bash
# Create .venv (once) and install wolfmem with its test extras into it. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || { echo "wolfmem needs Python 3.11 or newer" >&2; exit 1; }
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.wolfmem-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e '.[test]'
    touch "$stamp"
fi
