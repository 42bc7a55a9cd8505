#!/usr/bin/env bash
# The server's crash harness (bounded: CYCLES restarts each, loopback only): server/tests/harness/crash_harness.py
# with SIGKILL, then with SIGTERM, on a throwaway data dir each. Exit status non-zero on any
# duplicate, out-of-order reply, or (SIGTERM) lost acknowledged id.
#
#   server/tests/harness/crash-harness.sh [path/to/idforge]   (CYCLES=50 by default)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
target=${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}
bin=${1:-$target/debug/idforge}
venv=${IDFORGE_VENV:-$HOME/.cache/idforge/venv}
cycles=${CYCLES:-50}

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import redis' 2>/dev/null || "$venv/bin/python" -m pip install --quiet "redis==8.1.0"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for sig in KILL TERM; do
  "$venv/bin/python" server/tests/harness/crash_harness.py "$bin" "$work/$sig" --cycles "$cycles" --signal "$sig" || status=1
done
exit $status
