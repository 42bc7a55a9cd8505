#!/usr/bin/env bash
# Builds the addon, runs a Node bench (mitata, one run, then a plain loop for the comparisons
# with a peer) against the peers in devDependencies, then bench/report (the
# one report writer): ratios and targets (with the previous run's verdicts),
# and the bench's section of BENCHMARKS.md.
#
#   bench/node/run.sh           bench.mjs: ids against their peers ("Node")
#   bench/node/run.sh uuid7     bench_uuid7.mjs: uuid7() against the uuid package ("Node UUIDv7")
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../node"
suite="${1:-ids}"
case "$suite" in
  ids) script=bench.mjs out=node.json ;;
  uuid7) script=bench_uuid7.mjs out=node-uuid7.json ;;
  *) echo "usage: bench/node/run.sh [uuid7]" >&2; exit 2 ;;
esac
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
npm ci --no-audit --no-fund --silent
npm run build --silent
out="$CARGO_TARGET_DIR/idforge-bench/$out"
mkdir -p "$(dirname "$out")"
node "../bench/node/$script" --json "$out"
python3 ../bench/report node "$out" --suite "$suite" --markdown ../BENCHMARKS.md \
  --command "bench/node/run.sh${1:+ $1}"
