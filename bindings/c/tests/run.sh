#!/usr/bin/env bash
# Builds libidforge and runs the C tests against it:
#   1. test_idforge and test_time_ordered (UUIDv7, ULID, random-start snowflakes) linked with
#      libidforge.so (gcc -std=c99 -Wall -Wextra -Werror -pedantic)
#   2. both linked with libidforge.a
#   3. the header compiled and run as C++ (g++ -std=c++11 ... -pedantic)
#   4. both (static) under valgrind: no errors, no leaks
#   5. both built with -fsanitize=address (static)
#   6. test_sources (the segment sources against the servers of ci/services.sh), shared and
#      static; not under valgrind or ASan: its forked children leak the parent's connection on
#      purpose (closing it could end the parent's session), which both report as lost memory
# Each run prints "N passed, N failed"; the script fails when any does.
#
#   bindings/c/tests/run.sh [--no-valgrind] [--no-asan]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$root"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
profile="${IDFORGE_C_PROFILE:-debug}"
valgrind=1
asan=1
for arg in "$@"; do
  case "$arg" in
    --no-valgrind) valgrind=0 ;;
    --no-asan) asan=0 ;;
    *) echo "usage: $0 [--no-valgrind] [--no-asan]" >&2; exit 2 ;;
  esac
done

if [ "$profile" = release ]; then
  cargo build -p idforge-c --release --locked
else
  cargo build -p idforge-c --locked
fi
lib="$CARGO_TARGET_DIR/$profile"
out="$CARGO_TARGET_DIR/idforge-ctest"
mkdir -p "$out"

python3 "$here/gen_vectors.py" "$out/vectors.h"

CFLAGS=(-std=c99 -Wall -Wextra -Werror -pedantic -g -O1 -I"$root/include" -I"$out" -I"$here")
# What Rust's std needs from the system when linked statically (rustc --print native-static-libs):
# the system libraries of idforge-static.pc, the list users link with.
read -r -a STATIC_LIBS <<<"$(sed -n 's/^Libs: ${libdir}\/libidforge\.a //p' "$root/packaging/c/idforge-static.pc.in")"
[ "${#STATIC_LIBS[@]}" -gt 0 ] || { echo "error: no system libraries in packaging/c/idforge-static.pc.in" >&2; exit 1; }

failed=0
run() { # run NAME CMD...: runs one test binary, keeps going on failure
  local name="$1"
  shift
  echo "--- $name"
  if ! "$@"; then
    echo "--- $name: FAILED"
    failed=1
  fi
}

# The .so's soname is libidforge.so.MAJOR (bindings/c/build.rs): lay it out as an install would.
major="$(sed -n 's/^#define IDFORGE_VERSION_MAJOR \([0-9]*\)$/\1/p' "$root/include/idforge.h")"
mkdir -p "$out/lib"
cp "$lib/libidforge.so" "$out/lib/libidforge.so.$major"
ln -sf "libidforge.so.$major" "$out/lib/libidforge.so"

SUITES=(test_idforge test_errors test_time_ordered)
for suite in "${SUITES[@]}"; do
  gcc "${CFLAGS[@]}" "$here/$suite.c" -o "$out/${suite}_shared" -L"$out/lib" -lidforge \
    -Wl,-rpath,"$out/lib" -lpthread
  gcc "${CFLAGS[@]}" "$here/$suite.c" -o "$out/${suite}_static" "$lib/libidforge.a" "${STATIC_LIBS[@]}"
done
g++ -std=c++11 -Wall -Wextra -Werror -pedantic -g -I"$root/include" "$here/test_cpp.cpp" \
  -o "$out/test_cpp" "$lib/libidforge.a" "${STATIC_LIBS[@]}"

for suite in "${SUITES[@]}"; do
  run "C $suite, shared library" "$out/${suite}_shared"
  run "C $suite, static library" "$out/${suite}_static"
done
run "C++" "$out/test_cpp"

gcc "${CFLAGS[@]}" "$here/test_sources.c" -o "$out/sources_shared" -L"$out/lib" -lidforge \
  -Wl,-rpath,"$out/lib" -lpthread
gcc "${CFLAGS[@]}" "$here/test_sources.c" -o "$out/sources_static" "$lib/libidforge.a" \
  "${STATIC_LIBS[@]}"
run "C sources, shared library" "$out/sources_shared"
run "C sources, static library" "$out/sources_static"

if [ "$valgrind" -eq 1 ]; then
  command -v valgrind >/dev/null || { echo "error: valgrind not found (ci/install/install-deps.sh)" >&2; exit 1; }
  # Errors and definite/indirect leaks fail; std's per-thread and process-wide caches that live
  # until exit are "still reachable" and allowed.
  for suite in "${SUITES[@]}"; do
    run "valgrind $suite (static)" valgrind --quiet --error-exitcode=99 --leak-check=full \
      --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
      --child-silent-after-fork=yes "$out/${suite}_static"
  done
fi

if [ "$asan" -eq 1 ]; then
  for suite in "${SUITES[@]}"; do
    gcc "${CFLAGS[@]}" -fsanitize=address,undefined -fno-omit-frame-pointer "$here/$suite.c" \
      -o "$out/${suite}_asan" "$lib/libidforge.a" "${STATIC_LIBS[@]}"
    run "AddressSanitizer $suite (static)" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
      "$out/${suite}_asan"
  done
fi

if [ "$failed" -ne 0 ]; then
  echo "C tests: FAILED"
  exit 1
fi
echo "C tests: all runs passed"
