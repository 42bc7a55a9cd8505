#!/usr/bin/env bash
# Installs the TypeScript compilers users have, once each, under $IDFORGE_CACHE/typescript, and
# prints the path of each tsc, one a line: the last 5.x, the last 6.x and the current release (7).
# Raise the pins with new releases. ci/dist/node-pack.sh and ci/docs.sh check with every one of them.
set -euo pipefail
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
for ts in 5.9.3 6.0.3 7.0.2; do
  tsc="$CACHE/typescript/$ts/node_modules/.bin/tsc"
  [ -x "$tsc" ] ||
    npm install --prefix "$CACHE/typescript/$ts" --no-audit --no-fund --silent "typescript@$ts" >&2
  echo "$tsc"
done
