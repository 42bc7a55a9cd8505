#!/usr/bin/env bash
# Runs the libFuzzer targets in fuzz/ for a bounded time each (FUZZ_SECONDS, default 60), on the
# stable toolchain: the coverage instrumentation cargo-fuzz would add (sanitizer-coverage
# passes) is given as plain -C flags, without a sanitizer, so no nightly is needed. The seed
# corpus is in fuzz/seeds/TARGET; new inputs go to a temporary directory. A crash or failed
# assertion fails the script and leaves the input in fuzz/artifacts/.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../../fuzz"
seconds=${FUZZ_SECONDS:-60}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}/fuzz"
export RUSTFLAGS="--cfg fuzzing -Cdebug-assertions -Coverflow-checks -Cpasses=sancov-module \
-Cllvm-args=-sanitizer-coverage-level=4 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares"

# An explicit --target keeps the flags off build scripts and proc macros (as cargo-fuzz does).
host=$(rustc -vV | sed -n 's/^host: //p')
cargo build --release --quiet --bins --target "$host"
mkdir -p artifacts
for target in resp; do
  scratch=$(mktemp -d)
  cp seeds/"$target"/* "$scratch"/
  echo "    $target: ${seconds}s"
  status=0
  "$CARGO_TARGET_DIR/$host/release/$target" -max_total_time="$seconds" -max_len=4096 \
    -artifact_prefix=artifacts/ -print_final_stats=1 "$scratch" >"$scratch.log" 2>&1 || status=$?
  grep -E '^(stat::number_of_executed_units|stat::new_units_added)|panicked|ERROR|SUMMARY' "$scratch.log" || true
  [ "$status" -eq 0 ] || tail -40 "$scratch.log" >&2
  rm -f "$scratch.log"
  rm -rf "$scratch"
  [ "$status" -eq 0 ] || { echo "error: fuzz target $target failed (input in fuzz/artifacts/)" >&2; exit 1; }
done
