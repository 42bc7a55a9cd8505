#!/usr/bin/env bash
# Runs the Go benchmarks (go test -bench, one run: floors, ours, the Debian-packaged peers) and
# writes the Go section of BENCHMARKS.md through bench/report (ratios, targets, the previous run's
# verdicts beside this run's; the pass/fail rule is bench/report/record.py's). Run it twice in
# a row: a target counts as met only when both runs pass. Builds libidforge (release) into the
# cache's prefix, as the go step does.
#
#   bench/go/run.sh [BENCHTIME]      (default 2s per benchmark)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/target}"
bash ci/install/install-go.sh --peers >/dev/null
# shellcheck source=../../ci/install/go-env.sh
. ci/install/go-env.sh
prefix="$CACHE/go/c-prefix"
bash ci/install/install-c.sh "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
out="$CARGO_TARGET_DIR/idforge-bench/go.txt"
mkdir -p "$(dirname "$out")"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
(cd bench/go && go test -run '^$' -bench . -benchtime "${1:-2s}" -count 1 . | tee "$out")
python3 bench/report go "$out" --markdown BENCHMARKS.md --command "bench/go/run.sh" \
  --load "$load_before, after $(cut -d' ' -f1-3 /proc/loadavg)"
