#!/usr/bin/env bash
# The HTTP API of `idforge serve` (--http-port): Leaf's and tinyid's formats with Python requests
# and curl (http_api.py), the status page in headless Chromium (http_status.py), HTTP ids mixed
# with RESP INCR across kill -9 and an HA failover (http_ids.py; the failover part needs the etcd
# of ci/services.sh) and hostile HTTP clients (hostile_http.py).
#
#   server/tests/harness/http-harness.sh [path/to/idforge]   (default: $CARGO_TARGET_DIR/debug/idforge)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
target=${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}
bin=${1:-$target/debug/idforge}
venv=${IDFORGE_VENV:-$HOME/.cache/idforge/venv}

bash ci/install/install-deps.sh http
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "requests==2.32.3"

echo "    Leaf and tinyid formats, tokens, bounds (requests, curl)"
"$venv/bin/python" server/tests/harness/http_api.py "$bin"

echo "    the status page in headless Chromium"
python3 server/tests/harness/http_status.py "$bin"

echo "    8 HTTP clients x 10,000 answers mixed with RESP INCR, across kill -9 and a failover"
if command -v etcd >/dev/null 2>&1; then
  python3 server/tests/harness/http_ids.py "$bin"
else
  [ -z "${IDFORGE_REQUIRE_SERVICES:-}" ] || { echo "etcd is not installed" >&2; exit 1; }
  echo "    failover skipped: no etcd (ci/install/install-deps.sh etcd)"
  python3 server/tests/harness/http_ids.py "$bin" --only crash
fi

echo "    hostile HTTP clients"
python3 server/tests/harness/hostile_http.py "$bin"
