#!/usr/bin/env bash
# Benchmarks of idforge against its peers and the floors, in one run, as ratios. Run by hand:
# timings on shared CI machines are noise, so this is not part of ci/test.sh.
#
#   bash bench/bench.sh            # ~8 minutes; rewrites the generated sections of BENCHMARKS.md
#
# Steps: the criterion bench `ids` (single-thread cost per id), the bench `saturation` (ids per
# second a tight loop gets from a snowflake generator), bench/c (the C API next to libbson and the
# clock reads), then bench/report rust: ratios, targets
# (PASS/MISS, beside the previous run's) and BENCHMARKS.md between <!-- bench:begin --> and <!-- bench:end -->; then the
# Python (bench/python/run.sh) and Node (bench/node/run.sh) benches, each with its own section.
# Keep the machine otherwise idle while it runs.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-auto}"

if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  # shellcheck source=/dev/null
  . "$HOME/.cargo/env"
fi
command -v cargo >/dev/null 2>&1 || { echo "error: cargo not found" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "error: python3 not found" >&2; exit 1; }

out_dir="$CARGO_TARGET_DIR/idforge-bench"
mkdir -p "$out_dir"
saturation_json="$out_dir/saturation.json"

# The code measured is the code built here: note its commit before building.
commit="$(python3 bench/report git-state)"
# Build first, so compile time does not overlap the measurements.
cargo bench -p idforge-bench --no-run
bash ci/install/install-deps.sh bench-c
cargo build -p idforge-c --release --locked

load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
since="$(date +%s)"

echo "== criterion: single-thread cost per id"
cargo bench -p idforge-bench --bench ids -- --noplot

echo "== saturation: ids per second from a tight loop"
IDFORGE_SATURATION_JSON="$saturation_json" cargo bench -p idforge-bench --bench saturation

echo "== C API: bench/c (ours, libbson, clock reads)"
c_json="$out_dir/c_bench.json"
bash bench/c/run.sh "$c_json"

echo "== report"
python3 bench/report rust \
  --criterion "$CARGO_TARGET_DIR/criterion" \
  --saturation "$saturation_json" \
  --since "$since" \
  --markdown BENCHMARKS.md \
  --load-before "$load_before" \
  --command "bash bench/bench.sh" \
  --commit "$commit" \
  --steps "cargo bench -p idforge-bench --bench ids -- --noplot" \
  --steps "cargo bench -p idforge-bench --bench saturation" \
  --steps "bench/c/run.sh" \
  --c-bench "$c_json"

# The bindings' benches write their own sections of BENCHMARKS.md (between pybench, pyuuid7bench,
# nodebench and nodeuuid7bench markers). IDFORGE_BENCH_BINDINGS=0 skips them.
if [ "${IDFORGE_BENCH_BINDINGS:-1}" != 0 ]; then
  echo "== Python: bench/python/run.sh (pyperf)"
  bash bench/python/run.sh
  echo "== Python UUIDv7: bench/python/run.sh uuid7 (pyperf, then a plain loop)"
  bash bench/python/run.sh uuid7
  echo "== Node: bench/node/run.sh (mitata, then a plain loop)"
  bash bench/node/run.sh
  echo "== Node UUIDv7: bench/node/run.sh uuid7 (mitata, then a plain loop)"
  bash bench/node/run.sh uuid7
fi
