#!/usr/bin/env bash
# The one test command of idforge: `ci/test.sh` runs every step; `ci/test.sh clippy test` runs only
# the named steps (in the fixed order below). Run from anywhere inside the repository.
#
# Steps: fmt generated clippy test server ctest python node loom nostd fuzz doc. Every selected step runs even when an earlier one failed; a
# summary follows, and the exit status is non-zero if any step failed. A step whose input does not
# exist yet (loom without core/tests/loom.rs) is reported as skipped.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-auto}"

STEPS=(fmt generated clippy test server ctest python node loom nostd fuzz doc)

usage() {
  cat <<EOF
usage: ci/test.sh [STEP...]

Runs the named steps, or all of them: ${STEPS[*]}
  fmt     cargo fmt --all -- --check (and rustfmt --check on ci/nostd-check)
  generated  ci/check-generated.sh: committed generated files (include/idforge.h) match
  clippy  cargo clippy --workspace --all-targets --locked -- -D warnings
  test    cargo test --workspace --locked (the server's store tests and the segment sources
          against the real servers of ci/services.sh)
  server  the segment server: its process tests, ci/server-clients.sh (redis-cli, redis-py,
          ioredis), ci/crash-harness.sh (kill -9 and SIGTERM, 50 cycles each)
  The steps test, server, ctest, python and node first start idforge serve, Redis, PostgreSQL
  and MariaDB on 127.0.0.1 (ci/services.sh, once; stopped by PID at exit): their tests of the
  segment sources must then run.
  ctest   C tests (bindings/c/tests/run.sh: .so, .a, C++, valgrind, ASan) and examples/c
  python  pip install ./python into a venv (maturin builds the pyo3 module), then pytest
          (with pymongo, for the bson.ObjectId interop tests), mypy.stubtest on the stubs and
          mypy --strict on python/typing_check.py; then the maturin sdist in a second venv
  node    cd node && npm ci && npm run build (napi CLI: the addon, native.js, native.d.ts;
          errors.js/.d.ts from errors.json), committed generated files unchanged, npm test
          (node --test, tsc on test/types), then ci/node-pack.sh: the npm pack tarball in an
          empty project, with require() and import
  loom    loom models: RUSTFLAGS="--cfg loom" cargo test -p idforge-core --release --test loom
  nostd   build ci/nostd-check: idforge-core linked into a no_std, no-alloc staticlib
  fuzz    ci/fuzz.sh: the libFuzzer targets in fuzz/ (RESP parser), FUZZ_SECONDS (60) each
  doc     RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
Target dir: \$CARGO_TARGET_DIR (default \$HOME/.cache/idforge/target; now $CARGO_TARGET_DIR).
EOF
}

# ---- tools -----------------------------------------------------------------------------------

ensure_cargo() {
  if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
    # shellcheck source=/dev/null
    . "$HOME/.cargo/env"
  fi
  command -v cargo >/dev/null 2>&1 || {
    echo "error: cargo not found; install Rust with rustup (https://rustup.rs)" >&2
    return 1
  }
}

# ensure_rust_component NAME...: `rustup component add` for the components not yet installed
# (without rustup, the toolchain is assumed to ship them).
ensure_rust_component() {
  command -v rustup >/dev/null 2>&1 || return 0
  local installed missing=() c
  installed=$(rustup component list --installed)
  for c in "$@"; do
    grep -q "^$c" <<<"$installed" || missing+=("$c")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "    installing rust components: ${missing[*]}"
    rustup component add --quiet "${missing[@]}"
  fi
}

# ---- steps (each runs under `set -e` in a subshell) ------------------------------------------

step_fmt() {
  ensure_rust_component rustfmt
  cargo fmt --all -- --check
  # ci/nostd-check is a workspace of its own, so `cargo fmt --all` does not see it.
  rustfmt --edition 2024 --check ci/nostd-check/src/lib.rs
}

step_clippy() {
  ensure_rust_component clippy
  cargo clippy --workspace --all-targets --locked -- -D warnings
}

step_test() {
  cargo test --workspace --locked
}

step_server() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || bash ci/install-deps.sh node
  cargo build -p idforge-server --locked
  cargo test -p idforge-server --locked --test serve
  bash ci/server-clients.sh "$CARGO_TARGET_DIR/debug/idforge"
  bash ci/crash-harness.sh "$CARGO_TARGET_DIR/debug/idforge"
}

# The steps that test against real servers (the segment server, Redis, PostgreSQL, MariaDB):
# ci/services.sh starts them once, on 127.0.0.1, before the first such step; they are stopped by
# PID when this script exits. IDFORGE_REQUIRE_SERVICES makes a test fail, not skip, without them.
SERVICE_STEPS=(test server ctest python node)

start_services() {
  bash ci/install-deps.sh services
  cargo build -p idforge-server --bin idforge --locked
  services_dir="$(mktemp -d)"
  trap 'bash ci/services.sh stop "$services_dir"; rm -rf "$services_dir"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  IDFORGE_BIN="$CARGO_TARGET_DIR/debug/idforge" bash ci/services.sh start "$services_dir" \
    >"$services_dir/env"
  # shellcheck source=/dev/null
  . "$services_dir/env"
  export IDFORGE_REQUIRE_SERVICES=1
}

step_fuzz() {
  bash ci/fuzz.sh
}

step_python() {
  local venv="${IDFORGE_VENV:-$HOME/.cache/idforge/venv}"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps ./python
  # pymongo: the interop tests check our ObjectIds against the real bson.ObjectId.
  "$venv/bin/python" -m pip install --quiet "pytest>=7" "pymongo>=4" "mypy>=1.18"
  # From python/, with the pytest script (not -m): the installed package is tested, not the
  # source folder.
  (cd python && "$venv/bin/pytest" -q)
  # The committed stubs match the native module, and a typed user's view of the API type-checks.
  # Run outside python/ so the installed package is what is checked.
  (cd "$venv" && bin/python -m mypy.stubtest idforge._idforge &&
    bin/python -m mypy --strict "$OLDPWD/python/typing_check.py")
  # The sdist maturin builds installs into a second fresh venv and passes the same tests.
  local sdist_dir sdist_venv
  sdist_dir="$(mktemp -d)"
  sdist_venv="$sdist_dir/venv"
  "$venv/bin/python" -m pip install --quiet "maturin>=1.5,<2"
  (cd python && "$venv/bin/maturin" sdist --out "$sdist_dir" >/dev/null)
  python3 -m venv "$sdist_venv"
  "$sdist_venv/bin/python" -m pip install --quiet "$sdist_dir"/idforge-*.tar.gz "pytest>=7" "pymongo>=4"
  (cd python && "$sdist_venv/bin/pytest" -q)
  rm -rf "$sdist_dir"
}

step_node() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || bash ci/install-deps.sh node
  (cd node && npm ci --no-audit --no-fund && npm run build)
  # The napi CLI regenerates the loader and its declarations, gen-errors.mjs the error codes.
  git diff --exit-code -- node/native.js node/native.d.ts node/errors.js node/errors.d.ts || {
    echo "error: node/ generated files differ from the committed ones (commit the rebuilt files)" >&2
    return 1
  }
  (cd node && npm test)
  bash ci/node-pack.sh
}

step_generated() {
  bash ci/check-generated.sh
}

step_ctest() {
  bash ci/install-deps.sh c
  bash bindings/c/tests/run.sh
  bash examples/c/check.sh
}

# skip_reason STEP: prints why STEP cannot run in this tree (nothing when it can).
skip_reason() {
  case "$1" in
    loom) [ -f core/tests/loom.rs ] || echo "core/tests/loom.rs does not exist: no loom models to run" ;;
  esac
}

step_loom() {
  # Own target dir: the --cfg loom flag would otherwise rebuild everything in the shared one.
  # Fat LTO (the release profile) only slows the build here; the models need the optimizer, not LTO.
  RUSTFLAGS="--cfg loom" \
    LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}" \
    CARGO_PROFILE_RELEASE_LTO=false \
    CARGO_TARGET_DIR="$CARGO_TARGET_DIR/loom" \
    cargo test -p idforge-core --release --locked --test loom
}

step_nostd() {
  CARGO_TARGET_DIR="$CARGO_TARGET_DIR/nostd" \
    cargo build --manifest-path ci/nostd-check/Cargo.toml --release
}

step_doc() {
  RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
}

# ---- main ------------------------------------------------------------------------------------

selected=()
for arg in "$@"; do
  case "$arg" in
    -h | --help)
      usage
      exit 0
      ;;
    *)
      if [[ " ${STEPS[*]} " != *" $arg "* ]]; then
        echo "error: unknown step '$arg'" >&2
        usage >&2
        exit 2
      fi
      selected+=("$arg")
      ;;
  esac
done
[ "$#" -gt 0 ] || selected=("${STEPS[@]}")

ensure_cargo

for step in "${SERVICE_STEPS[@]}"; do
  if [[ " ${selected[*]} " == *" $step "* ]]; then
    echo "==> services (ci/services.sh: idforge serve, Redis, PostgreSQL, MariaDB on 127.0.0.1)"
    start_services
    break
  fi
done

results=()
failed=0
for step in "${STEPS[@]}"; do
  [[ " ${selected[*]} " == *" $step "* ]] || continue
  echo
  echo "==> $step"
  reason=$(skip_reason "$step")
  if [ -n "$reason" ]; then
    echo "    skipped: $reason"
    results+=("skipped $step ($reason)")
    continue
  fi
  start=$SECONDS
  set +e
  (
    set -e
    "step_$step"
  )
  rc=$?
  set -e
  took="$((SECONDS - start))s"
  if [ "$rc" -eq 0 ]; then
    results+=("ok      $step ($took)")
  else
    results+=("FAILED  $step ($took, exit $rc)")
    failed=1
  fi
done

echo
echo "==> summary (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
printf '    %s\n' "${results[@]}"
if [ "$failed" -ne 0 ]; then
  echo "==> FAILED"
  exit 1
fi
echo "==> all selected steps passed"
