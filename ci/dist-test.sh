#!/usr/bin/env bash
# Tests the artifacts of ci/dist.sh as their users get them: each is unpacked or installed in a
# fresh temporary directory and run with PATH reduced to the system directories (no cargo, rustc,
# maturin, zig), from there, not from the source tree:
#   dist/SHA256SUMS matches;
#   server  idforge gen; idforge serve --config (the shipped idforge.toml) answers redis-cli INCR,
#           stops cleanly on SIGTERM (exit 0), and a restart continues the sequence without a gap;
#   c       examples/c/order_ids.c built with pkg-config against the unpacked tarball, linked
#           shared and static, and run;
#   python  the wheel installed (pip, no build) into a new venv; the Python test suite against it;
#   node    the npm tarball installed (npm install, no build) into a new project, with the peers the
#           interop tests compare with; the Node test suite and the type test (tsc) against it;
#   jvm     bindings/uniffi/tests/JavaCaller.java compiled against the jar and run with the class
#           path a user has: the jar, JNA and the Kotlin stdlib (no jna.library.path);
#   pgext   the tarball's install.sh into the local PostgreSQL 15 (as root or with sudo), then the
#           extension's test suite against a cluster that preloads it (ci/pg-extension.sh
#           --installed: nothing is built).
# Artifacts absent from dist/ are reported as such, and fail the run (build them with ci/dist.sh).
#
#   ci/dist-test.sh [ARTIFACT...]     (default: server c python node jvm pgext)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$PWD"
SYSTEM_PATH=/usr/local/bin:/usr/bin:/bin
selected=("$@")
[ "$#" -gt 0 ] || selected=(server c python node jvm pgext)
version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -z "$server_pid" ] || kill -KILL "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# user CMD...: CMD in $work with nothing of the build environment: system PATH, a scratch HOME.
user() { (cd "$work" && env -i PATH="$SYSTEM_PATH" HOME="$work/home" LANG=C.UTF-8 "$@"); }
mkdir -p "$work/home"

(cd dist && sha256sum --quiet -c SHA256SUMS)
echo "==> dist/SHA256SUMS ok"

# The server of the tarball is also the one the Python and Node tests start (and stop) themselves.
server_tarball="dist/idforge-$version-x86_64-linux.tar.gz"
server_dir="$work/idforge-$version-x86_64-linux"
if [ -f "$server_tarball" ]; then
  tar -xzf "$server_tarball" -C "$work"
  export IDFORGE_BIN="$server_dir/idforge"
fi

test_server() {
  local dir="$server_dir" port i
  [ -f "$server_tarball" ] || { echo "error: no $server_tarball (ci/dist.sh server)" >&2; return 1; }
  user "$dir/idforge" gen snowflake --count 3 | tee "$work/ids"
  [ "$(wc -l <"$work/ids")" -eq 3 ]

  # start_server: serve with the shipped config; the data dir and port overridden by flags.
  start_server() {
    rm -f "$work/port"
    (cd "$work" && exec env -i PATH="$SYSTEM_PATH" HOME="$work/home" "$dir/idforge" serve \
      --config "$dir/idforge.toml" --data-dir "$work/data" --port 0 --port-file "$work/port" \
      >>"$work/server.log" 2>&1) &
    server_pid=$!
    for i in $(seq 300); do
      [ -s "$work/port" ] && break
      kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; return 1; }
      sleep 0.1
    done
    port="$(cat "$work/port")"
  }
  # stop_server: SIGTERM, then it must exit 0 within 30 s.
  stop_server() {
    local rc=0
    kill -TERM "$server_pid"
    for i in $(seq 300); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$server_pid" 2>/dev/null && { echo "error: idforge serve ignored SIGTERM for 30 s" >&2; return 1; }
    wait "$server_pid" || rc=$?
    server_pid=""
    [ "$rc" -eq 0 ] || { echo "error: idforge serve exited $rc on SIGTERM" >&2; cat "$work/server.log" >&2; return 1; }
  }
  start_server
  [ "$(user redis-cli -p "$port" INCR orders)" = 1 ]
  [ "$(user redis-cli -p "$port" INCR orders)" = 2 ]
  stop_server
  start_server
  [ "$(user redis-cli -p "$port" INCR orders)" = 3 ] # a clean stop gave its cache back: no gap
  stop_server
  echo "server: gen, serve --config idforge.toml, redis-cli INCR 1 2 | SIGTERM | restart, INCR 3"
}

test_c() {
  local tarball="dist/idforge-c-$version-x86_64-linux-gnu.tar.gz" dir
  tar -xzf "$tarball" -C "$work"
  dir="$work/idforge-c-$version-x86_64-linux-gnu"
  cp examples/c/order_ids.c "$work/"
  # The .pc file is relocatable: its prefix is wherever the tarball was unpacked.
  [ "$(user env PKG_CONFIG_PATH="$dir/lib/pkgconfig" pkg-config --variable=includedir idforge)" -ef "$dir/include" ]
  user env PKG_CONFIG_PATH="$dir/lib/pkgconfig" sh -ec '
    cc -std=c99 -Wall -Wextra -Werror -pedantic order_ids.c -o order_ids_shared \
      $(pkg-config --cflags --libs idforge) -Wl,-rpath,"$(pkg-config --variable=libdir idforge)"
    cc -std=c99 -Wall -Wextra -Werror -pedantic order_ids.c -o order_ids_static \
      $(pkg-config --cflags idforge) "$(pkg-config --variable=libdir idforge)/libidforge.a" \
      $(pkg-config --static --libs-only-l idforge | sed "s/-lidforge//")
  '
  # The shared build loads the tarball's library (soname libidforge.so.MAJOR), the static none.
  ldd "$work/order_ids_shared" | grep -q "$dir/lib/libidforge.so.${version%%.*}"
  ! ldd "$work/order_ids_static" | grep -q libidforge
  user ./order_ids_shared >/dev/null
  user ./order_ids_static | tail -n 1
  echo "c: examples/c built with pkg-config against the tarball, shared and static, and run"
}

test_python() {
  local wheel
  wheel="$(ls dist/idforge-"$version"-*.whl)"
  user /usr/bin/python3 -m venv "$work/venv"
  user "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary :all: \
    "$repo/$wheel" "pytest>=7" "pymongo>=4"
  # The tests, and the shared vectors they read (../../core/testdata), outside the source tree.
  mkdir -p "$work/py/python" "$work/py/core"
  cp -r python/tests "$work/py/python/"
  cp -r core/testdata "$work/py/core/"
  # The services' URLs (IDFORGE_TEST_*_URL, IDFORGE_REQUIRE_SERVICES) pass through, if set.
  local pass=() var
  for var in $(compgen -e | grep '^IDFORGE_' || true); do pass+=("$var=${!var}"); done
  (cd "$work/py/python" && env -i PATH="$SYSTEM_PATH" HOME="$work/home" "${pass[@]}" \
    "$work/venv/bin/pytest" -q -p no:cacheprovider tests)
}

test_node() {
  local tarball app peers
  tarball="$repo/dist/idforge-$version.tgz"
  [ -f "$tarball" ] || { echo "error: no $tarball (ci/dist.sh node)" >&2; return 1; }
  # The tests, and the shared vectors they read (../../core/testdata), outside the source tree, in
  # a project whose version is the package's (esm.test.mjs compares them).
  app="$work/js/node"
  mkdir -p "$app" "$work/js/core"
  cp -r node/test "$app/"
  cp -r core/testdata "$work/js/core/"
  printf '{ "name": "app", "version": "%s", "private": true }\n' "$version" >"$app/package.json"
  # The peers at the versions node/package.json pins for development.
  peers="$(cd node && node -e '
    const d = require("./package.json").devDependencies
    console.log(["bson", "@sapphire/snowflake", "typescript", "@types/node"].map((n) => `${n}@${d[n]}`).join(" "))')"
  local pass=() var
  for var in $(compgen -e | grep '^IDFORGE_' || true); do pass+=("$var=${!var}"); done
  # shellcheck disable=SC2086
  (cd "$app" && env -i PATH="$SYSTEM_PATH" HOME="$work/home" npm_config_cache="$HOME/.npm" "${pass[@]}" \
    sh -ec "npm install --no-audit --no-fund --silent '$tarball' $peers
      node --test test/
      node_modules/.bin/tsc -p test/types")
}

test_jvm() {
  local jar="$repo/dist/idforge-jvm-$version.jar"
  local stdlib="${IDFORGE_CACHE:-$HOME/.cache/idforge}/kotlin/node_modules/kotlin-compiler/lib/kotlin-stdlib.jar"
  [ -f "$jar" ] || { echo "error: no $jar (ci/dist.sh jvm)" >&2; return 1; }
  mkdir -p "$work/jvm"
  cp "$stdlib" /usr/share/java/jna.jar "$work/jvm/"
  cp bindings/uniffi/tests/JavaCaller.java "$work/jvm/"
  user sh -ec "cd jvm
    javac -cp '$jar:kotlin-stdlib.jar' JavaCaller.java
    java -cp '$jar:jna.jar:kotlin-stdlib.jar:.' JavaCaller"
}

test_pgext() {
  local name="idforge-postgres-$version-pg15-x86_64-linux-gnu"
  [ -f "dist/$name.tar.gz" ] || { echo "error: no dist/$name.tar.gz (ci/dist.sh pgext)" >&2; return 1; }
  # The suite compares decoding with the idforge CLI: the server tarball's.
  [ -n "${IDFORGE_BIN:-}" ] || { echo "error: no server tarball in dist/ (its idforge CLI is needed)" >&2; return 1; }
  tar -xzf "dist/$name.tar.gz" -C "$work"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # install.sh as a user runs it: system PATH, where Debian's pg_config is.
  $sudo env -i PATH="$SYSTEM_PATH" PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config \
    sh "$work/$name/install.sh"
  bash ci/pg-extension.sh --installed
}

failed=()
for artifact in "${selected[@]}"; do
  echo "==> $artifact"
  ("test_$artifact") || failed+=("$artifact")
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "error: artifacts failed their tests: ${failed[*]}" >&2
  exit 1
fi
echo "==> the artifacts work as their users get them: ${selected[*]}"
