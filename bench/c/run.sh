#!/usr/bin/env bash
# Builds bench/c/bench.c against the release libidforge.a and libbson (pkg-config), runs it and
# writes its JSON to the path given (default: stdout only). Called by bench/bench.sh.
#
#   bench/c/run.sh [OUT.json]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
bash "$root/ci/install/install-deps.sh" bench-c
cargo build -p idforge-c --release --locked --manifest-path "$root/Cargo.toml"
out="$CARGO_TARGET_DIR/idforge-bench"
mkdir -p "$out"
# -O2 and no -march: what a service's build would use.
# shellcheck disable=SC2046
gcc -std=c99 -O2 -Wall -Wextra -I"$root/include" $(pkg-config --cflags libbson-1.0) "$here/bench.c" \
  -o "$out/c_bench" "$CARGO_TARGET_DIR/release/libidforge.a" $(pkg-config --libs libbson-1.0) \
  -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
if [ "$#" -ge 1 ]; then
  "$out/c_bench" | tee "$1"
else
  "$out/c_bench"
fi
