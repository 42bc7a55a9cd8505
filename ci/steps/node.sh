#!/usr/bin/env bash
# The node step: cd node && npm ci && npm run build:debug (napi CLI: the addon, native.js,
# native.d.ts; error_codes.js/.d.ts from errors.json), committed generated files unchanged, npm test
# (node --test, tsc on test/types), the SQLite Drizzle test on Node 22, then ci/dist/node-pack.sh:
# the npm pack tarball in an empty project, with require() and import, and tsc --strict on
# test/types/usage.ts (TypeScript 5.9, 6.0 and 7.0). Last, the bench pipeline kept working: the
# report writer's self-test, and the Node benches' short loops (no timing asserted) through it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

binding_debug
ensure_node
(cd node && npm ci --no-audit --no-fund && npm run build:debug)
# The napi CLI regenerates the loader and its declarations, gen-errors.mjs the error codes.
git diff --exit-code -- node/native.js node/native.d.ts node/error_codes.js node/error_codes.d.ts || {
  echo "error: node/ generated files differ from the committed ones (commit the rebuilt files)" >&2
  exit 1
}
# IDFORGE_REQUIRE_FRAMEWORKS: the Drizzle test must run here (drizzle-orm and pg are dev
# dependencies), against the services' PostgreSQL.
(cd node && IDFORGE_REQUIRE_FRAMEWORKS=1 npm test)
# Drizzle on SQLite through node:sqlite, which Node 20 lacks: that file again on Node 22.
node22="$(bash ci/install/install-node22.sh)"
(cd node && IDFORGE_REQUIRE_FRAMEWORKS=1 IDFORGE_REQUIRE_NODE_SQLITE=1 \
  "$node22" --no-warnings --test test/drizzle_sqlite.test.js)
bash ci/dist/node-pack.sh
python3 bench/report self-test
bench_out="$(mktemp -d)"
for suite in ids uuid7; do
  script=bench.mjs
  [ "$suite" = ids ] || script=bench_uuid7.mjs
  IDFORGE_BENCH_LOOP_N=2000 node "bench/node/$script" --loops-only --json "$bench_out/$suite.json" >/dev/null
  # To a file, not a pipe into grep -q: grep leaves at its first match, and the writer then
  # meets a closed pipe.
  python3 bench/report node "$bench_out/$suite.json" --suite "$suite" >"$bench_out/$suite.md"
  grep -q "speed-up, plain loop" "$bench_out/$suite.md" ||
    { echo "error: bench/report node wrote no plain-loop targets for $suite" >&2; exit 1; }
done
rm -rf "$bench_out"
