#!/usr/bin/env bash
# Builds the addon, runs node/bench/bench.mjs (mitata, one run, then a plain loop for the
# comparisons with a peer) against the peers in devDependencies, then node/bench/report.py
# (Python: the pass/fail rule of every bench report): ratios and targets (with the previous run's
# verdicts), and the Node section of BENCHMARKS.md.
#
#   node/bench/run.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
npm ci --no-audit --no-fund --silent
npm run build --silent
out="$CARGO_TARGET_DIR/idforge-bench/node.json"
mkdir -p "$(dirname "$out")"
node bench/bench.mjs --json "$out"
python3 bench/report.py "$out" --markdown ../BENCHMARKS.md --command "node/bench/run.sh"
