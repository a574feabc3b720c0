#!/usr/bin/env bash
# Set up (idempotent) and run the test suite.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
"$here/scripts/bootstrap.sh"
cd "$here"
exec .venv/bin/python -m pytest "$@"
