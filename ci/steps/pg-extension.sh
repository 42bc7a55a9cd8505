#!/usr/bin/env bash
# The PostgreSQL extension (extensions/postgres): checks and builds it, installs it into the
# local PostgreSQL 15 (as root, or with sudo), starts a throwaway cluster of that server on
# 127.0.0.1 with `shared_preload_libraries = 'idforge'`, runs extensions/postgres/tests with
# pytest (in a venv), and stops the cluster by its PID.
#
#   ci/steps/pg-extension.sh [--bench|--installed]
#     --bench      the release build, then bench/pg-extension.sh on the cluster, not the tests
#     --installed  no build or install: test the extension already installed (ci/dist/dist-test.sh,
#                  after the release tarball's install.sh)
#
# Port $IDFORGE_PGEXT_PORT (25433). Needs the `pgext` group of ci/install/install-deps.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
bash ci/install/install-deps.sh pgext
bin=$(ls -d /usr/lib/postgresql/15/bin)
export PGRX_PG_CONFIG_PATH="${PGRX_PG_CONFIG_PATH:-$bin/pg_config}"
[ -x "$PGRX_PG_CONFIG_PATH" ] || PGRX_PG_CONFIG_PATH=$(command -v pg_config)
manifest=extensions/postgres/Cargo.toml
mode=${1:-test}
profile=debug
[ "$mode" = "--bench" ] && profile=release

if [ "$mode" != "--installed" ]; then
  echo "--- fmt, clippy and build ($profile)"
  cargo fmt --manifest-path "$manifest" -- --check
  cargo clippy --manifest-path "$manifest" --all-targets --locked -- -D warnings
  if [ "$profile" = release ]; then
    cargo build --manifest-path "$manifest" --locked --release
  else
    cargo build --manifest-path "$manifest" --locked
  fi

  echo "--- install into $("$PGRX_PG_CONFIG_PATH" --pkglibdir)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  libdir=$("$PGRX_PG_CONFIG_PATH" --pkglibdir)
  extdir=$("$PGRX_PG_CONFIG_PATH" --sharedir)/extension
  $sudo install -m 0755 "$CARGO_TARGET_DIR/$profile/libidforge_pg.so" "$libdir/idforge.so"
  $sudo install -m 0644 extensions/postgres/idforge.control extensions/postgres/sql/idforge--*.sql \
    "$extdir/"
fi

echo "--- a cluster with idforge preloaded"
dir=$(mktemp -d)
port=${IDFORGE_PGEXT_PORT:-25433}
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
[ "$(id -u)" -ne 0 ] || chown postgres "$dir"
stop_cluster() {
  if [ -f "$dir/data/postmaster.pid" ]; then
    local pid
    pid=$(head -1 "$dir/data/postmaster.pid")
    kill -INT "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap stop_cluster EXIT
as_pg "$bin/initdb" -D "$dir/data" --auth=trust -U postgres >"$dir/initdb.log" 2>&1
opts="-p $port -k $dir -c listen_addresses=127.0.0.1 -c shared_preload_libraries=idforge -c idforge.node_id=7 -c max_connections=40"
as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 -o "$opts" start >/dev/null
export IDFORGE_PGEXT_BIN="$bin" IDFORGE_PGEXT_DATA="$dir/data" IDFORGE_PGEXT_PORT="$port" \
  IDFORGE_PGEXT_SOCKET="$dir" IDFORGE_PGEXT_OPTS="$opts" IDFORGE_PGEXT_LOG="$dir/log" \
  IDFORGE_PGEXT_NODE=7

if [ "$profile" = release ]; then
  bash bench/pg-extension.sh
  exit 0
fi

echo "--- tests"
if [ -z "${IDFORGE_BIN:-}" ]; then
  # The decode test compares with the idforge CLI; --installed builds nothing.
  [ "$mode" != "--installed" ] || { echo "error: --installed needs IDFORGE_BIN (the idforge CLI)" >&2; exit 1; }
  cargo build -p idforge-server --bin idforge --locked
  export IDFORGE_BIN="$CARGO_TARGET_DIR/debug/idforge"
fi
venv="$CARGO_TARGET_DIR/pgext-venv"
[ -x "$venv/bin/pytest" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q pytest; }
# IDFORGE_PGEXT_TESTS: the test files (default: all; the aarch64 check under emulation runs one).
# shellcheck disable=SC2086
"$venv/bin/pytest" -q ${IDFORGE_PGEXT_TESTS:-extensions/postgres/tests} || { tail -50 "$dir/log" >&2; exit 1; }
