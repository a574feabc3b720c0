#!/usr/bin/env bash
# Set up (idempotent), run the static gates (ruff, mypy, the import contract), then the test suite.
# pytest's arguments pass through. The default run leaves out tests marked slow (real editors, sync
# engines, daemons); `--all` as the first argument runs them too, as CI does. Every gate runs even if one
# before it failed; the script fails naming each one that did.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
"$here/scripts/bootstrap.sh" || exit 1
cd "$here"
selection=(-m "not slow")
if [ "${1:-}" = "--all" ]; then
    selection=()
    shift
fi
failed=()
gate() {
    local name="$1"
    shift
    "$@" || failed+=("$name")
}
quiet() {  # the command's output only if it fails (lint-imports prints a banner and a report either way)
    local out
    out="$("$@" 2>&1)" || { printf '%s\n' "$out"; return 1; }
}
gate "ruff (ruff check wolfmem tests scripts)" .venv/bin/ruff check --quiet wolfmem tests scripts
gate "mypy (mypy, configured in pyproject.toml)" .venv/bin/mypy
gate "import contract (lint-imports, configured in pyproject.toml)" quiet .venv/bin/lint-imports
gate "pytest" .venv/bin/python -m pytest "${selection[@]}" "$@"
if [ ${#failed[@]} -gt 0 ]; then
    printf 'wolfmem test: FAILED: %s\n' "${failed[@]}" >&2
    exit 1
fi
