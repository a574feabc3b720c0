#!/usr/bin/env bash
# Set up (idempotent) and run the wolfmem daemon in the foreground on the default vault.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
"$here/scripts/bootstrap.sh"
exec "$here/.venv/bin/wolfmem" daemon "$@"
