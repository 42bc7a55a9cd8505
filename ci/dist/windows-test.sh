#!/usr/bin/env bash
# The Windows artifacts of dist/ (ci/dist/dist.sh windows node), unpacked as a user would and run
# under Wine 8 (x86_64), from Linux:
#   c       the C zip's README lines as written (its app.c, built against idforge.dll and
#           libidforge.a through the zip's pkg-config files, with mingw-w64 for MSYS2's cc), then
#           bindings/c/tests/test_idforge.c both ways (the shared vectors, 4 threads x 500,000
#           snowflakes distinct, state files, file:// segments; no fork on Windows)
#   cli     idforge.exe gen and decode, whose output must be the Linux server tarball's
#   server  idforge.exe serve with --data-dir as C:\... and as a relative folder, answering
#           redis-cli from Linux, killed (kill -9) and started again on its guard: the next id is
#           past every earlier one; then server/tests/harness/crash_harness.py: 8 Linux clients, KILL_CYCLES
#           (10) kills and restarts, at least 100,000 acknowledged INCR/INCRBY, no id twice
#   node    the npm package's addon (idforge.win32-x64-msvc.node) under the official node.exe: the
#           package's test suite, installed from dist/'s tarball with its peers and drizzle-orm;
#           against the services of ci/services.sh when they run (IDFORGE_TEST_*), servers of its
#           own from idforge.exe (IDFORGE_BIN); the skipped tests are listed with their reasons
#   go      a Go program (ci/windows/goids) cross-built for windows/amd64 against the C zip, shared
#           and static (its pkg-config files), and by `go get` of the module the registry step
#           publishes (ci/release/go-module.sh: its own windows_amd64 library): 100,000 snowflakes
#           from 4 goroutines, ObjectIds and UUIDv7s, all distinct
# The Wine helpers (ci/windows/processprng.c, the import library of node.exe, the Wine prefix
# under ~/.cache/idforge/wine) are test scaffolding, never shipped.
#
#   ci/dist/windows-test.sh [c cli server node go]     (default: all)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo="$PWD"
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
dist="$repo/dist"
bash ci/install/install-deps.sh windows

selected=("$@")
[ "$#" -gt 0 ] || selected=(c cli server node go)
version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"

work="$(mktemp -d)"
server_pid=""
export WINEPREFIX="$CACHE/wine" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wine=/usr/lib/wine/wine64
cleanup() {
  [ -z "$server_pid" ] || kill -KILL "$server_pid" 2>/dev/null || true
  /usr/lib/wine/wineserver -k 2>/dev/null || true
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

(cd "$dist" && sha256sum --quiet -c SHA256SUMS)
for zip in "idforge-$version-x86_64-windows" "idforge-c-$version-x86_64-windows-gnu"; do
  [ -f "$dist/$zip.zip" ] || { echo "error: no $dist/$zip.zip (ci/dist/dist.sh windows)" >&2; exit 1; }
  python3 -m zipfile -e "$dist/$zip.zip" "$work/"
done
exe_dir="$work/idforge-$version-x86_64-windows"
c_dir="$work/idforge-c-$version-x86_64-windows-gnu"

# ---- Wine ---------------------------------------------------------------------------------------
if [ ! -f "$WINEPREFIX/.idforge-win10" ]; then
  echo "--- wineboot --init, Windows 10 ($WINEPREFIX)"
  rm -rf "$WINEPREFIX"
  "$wine" wineboot --init >/dev/null 2>&1
  # node.exe 22 refuses Wine's default (Windows 7).
  "$wine" winecfg /v win10 >/dev/null 2>&1
  /usr/lib/wine/wineserver -w
  touch "$WINEPREFIX/.idforge-win10"
fi
# Rust's std imports ProcessPrng (Windows 10+), which Wine 8 lacks: a DLL giving it over
# RtlGenRandom, beside each program under test.
x86_64-w64-mingw32-gcc -O2 -shared -o "$work/bcryptprimitives.dll" ci/windows/processprng.c -ladvapi32
# win DIR CMD...: a Windows program run from DIR under Wine, its output through a file (node.exe
# under Wine cannot write to a pipe), then shown without the CRs.
win() {
  local dir="$1" log rc=0
  shift
  cp -n "$work/bcryptprimitives.dll" "$dir/" 2>/dev/null || true
  log="$(mktemp -p "$work")"
  (cd "$dir" && "$wine" "$@" >"$log" 2>&1) || rc=$?
  tr -d '\r' <"$log"
  return "$rc"
}
wants() { [[ " ${selected[*]} " == *" $1 "* ]]; }
# loads EXE DLL: EXE imports DLL (the name in lower case).
loads() { [[ " $(x86_64-w64-mingw32-objdump -p "$1" | awk '/DLL Name:/ { print tolower($3) }' | tr '\n' ' ') " == *" $2 "* ]]; }

# ---- C --------------------------------------------------------------------------------------------
test_c() {
  local dir="$work/c"
  mkdir -p "$dir"
  cp -r "$c_dir" "$dir/"
  # The zip's README as written: its app.c and its MSYS2 lines, with mingw-w64's gcc for cc and
  # Wine running the programs.
  python3 ci/docs/doc_block.py "$c_dir/README.md" 'A first program' c "$version" >"$dir/app.c"
  python3 ci/docs/doc_block.py "$c_dir/README.md" 'Built and run' sh "$version" |
    sed -e 's/^cc /x86_64-w64-mingw32-gcc /' -e 's#^\./\([a-z-]*\.exe\)$#wine_run \1#' >"$dir/build.sh"
  grep -q '^wine_run app-static.exe' "$dir/build.sh" || { echo "error: the C zip's README lines changed shape" >&2; return 1; }
  (
    cd "$dir"
    wine_run() { win . "$1"; }
    # shellcheck disable=SC1091
    . ./build.sh
  ) | tee "$dir/out"
  [ "$(grep -c '^order [0-9]' "$dir/out")" -eq 2 ] || { echo "error: app.exe and app-static.exe did not both print an order id" >&2; return 1; }
  loads "$dir/app.exe" idforge.dll || { echo "error: app.exe does not load idforge.dll" >&2; return 1; }
  ! loads "$dir/app-static.exe" idforge.dll || { echo "error: app-static.exe loads idforge.dll" >&2; return 1; }

  echo "--- bindings/c/tests/test_idforge.c against idforge.dll and libidforge.a (the zip's pkg-config files)"
  python3 bindings/c/tests/gen_vectors.py "$dir/vectors.h"
  local cflags=(-std=c99 -Wall -Wextra -Werror -O1 -I"$dir" -Ibindings/c/tests) t
  export PKG_CONFIG_PATH="$c_dir/lib/pkgconfig"
  # shellcheck disable=SC2046
  x86_64-w64-mingw32-gcc "${cflags[@]}" bindings/c/tests/test_idforge.c -o "$dir/test_shared.exe" \
    $(pkg-config --cflags --libs idforge) -static-libgcc -Wl,-Bstatic -lpthread
  # shellcheck disable=SC2046
  x86_64-w64-mingw32-gcc "${cflags[@]}" bindings/c/tests/test_idforge.c -o "$dir/test_static.exe" \
    $(pkg-config --cflags --libs idforge-static) -static -lpthread
  unset PKG_CONFIG_PATH
  cp "$c_dir/bin/idforge.dll" "$dir/"
  loads "$dir/test_shared.exe" idforge.dll || { echo "error: test_shared.exe does not load idforge.dll" >&2; return 1; }
  ! loads "$dir/test_static.exe" idforge.dll || { echo "error: test_static.exe loads idforge.dll" >&2; return 1; }
  for t in test_shared test_static; do
    echo "    $t.exe"
    win "$dir" "$t.exe" | tail -n 3
  done
}

# ---- the command line ---------------------------------------------------------------------------
test_cli() {
  local linux ids id got want
  tar -xzf "$dist/idforge-$version-x86_64-linux.tar.gz" -C "$work"
  linux="$work/idforge-$version-x86_64-linux/idforge"
  ids="$(win "$exe_dir" idforge.exe gen snowflake --count 3)"
  [ "$(echo "$ids" | wc -l)" -eq 3 ] || { echo "error: gen gave: $ids" >&2; return 1; }
  for id in $ids 6b1b2f0c9d3e4a5f60718293 "$(win "$exe_dir" idforge.exe gen objectid)"; do
    got="$(win "$exe_dir" idforge.exe decode "$id")"
    want="$("$linux" decode "$id")"
    [ "$got" = "$want" ] || { printf 'error: decode %s\nwindows:\n%s\nlinux:\n%s\n' "$id" "$got" "$want" >&2; return 1; }
  done
  win "$exe_dir" idforge.exe --version
  echo "    idforge.exe: 3 snowflakes and 2 ObjectIds decode as by the Linux binary"
}

# ---- the server -----------------------------------------------------------------------------------
port=""
# serve DATA_DIR: idforge.exe serve on $port, until it answers PING.
serve() {
  (cd "$exe_dir" && exec "$wine" idforge.exe serve --bind 127.0.0.1 --port "$port" --data-dir "$1" \
    --log warn >>"$work/serve.log" 2>&1) &
  server_pid=$!
  for _ in $(seq 150); do
    redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.2
  done
  echo "error: idforge.exe serve --data-dir $1 did not answer" >&2
  tail -n 20 "$work/serve.log" >&2
  return 1
}
# kill_server: kill -9 of the Wine process (as TerminateProcess: no clean exit, nothing persisted).
kill_server() {
  kill -KILL "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
test_server() {
  local dir first last next venv
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  cp "$work/bcryptprimitives.dll" "$exe_dir/"
  rm -rf "$WINEPREFIX/drive_c/idforge-ci-data"
  for dir in 'C:\idforge-ci-data' 'data dir'; do
    serve "$dir"
    first="$(redis-cli -p "$port" INCR t)"
    for _ in $(seq 200); do redis-cli -p "$port" INCR t >/dev/null; done
    last="$(redis-cli -p "$port" INCR t)"
    kill_server
    serve "$dir"
    next="$(redis-cli -p "$port" INCR t)"
    kill_server
    [ "$next" -gt "$last" ] && [ "$last" -gt "$first" ] ||
      { echo "error: --data-dir '$dir': $first..$last, then $next after the restart" >&2; return 1; }
    echo "    --data-dir '$dir': ids $first..$last, after kill -9 and a restart $next"
  done
  # The store and its guard where --data-dir said.
  for f in "$WINEPREFIX/drive_c/idforge-ci-data/idforge.db" "$exe_dir/data dir/idforge.db"; do
    [ -f "$f" ] || { echo "error: no $f" >&2; return 1; }
  done
  rm -rf "$WINEPREFIX/drive_c/idforge-ci-data"

  echo "--- server/tests/harness/crash_harness.py: 8 Linux clients, ${KILL_CYCLES:-10} kills of idforge.exe"
  venv="${IDFORGE_VENV:-$CACHE/venv}"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -c 'import redis' 2>/dev/null || "$venv/bin/python" -m pip install --quiet "redis==8.1.0"
  # The harness runs a binary with serve's arguments: this one is idforge.exe under Wine (exec:
  # the harness's SIGKILL reaches the Wine process itself).
  printf '#!/bin/sh\ncd "%s" && exec %s idforge.exe "$@"\n' "$exe_dir" "$wine" >"$work/idforge-wine"
  chmod +x "$work/idforge-wine"
  "$venv/bin/python" server/tests/harness/crash_harness.py "$work/idforge-wine" "$work/crash" \
    --cycles "${KILL_CYCLES:-10}" --signal KILL --final-signal KILL --min-replies 100000
}

# ---- Node ----------------------------------------------------------------------------------------
test_node() {
  local node_exe app peers tarball="$dist/idforge-$version.tgz" f rc=0
  node_exe="$(bash ci/windows/node-exe.sh)"
  [ -f "$tarball" ] || { echo "error: no $tarball (ci/dist/dist.sh node)" >&2; return 1; }
  [[ $'\n'"$(tar -tzf "$tarball")"$'\n' == *$'\n'package/idforge.win32-x64-msvc.node$'\n'* ]] ||
    { echo "error: $tarball lacks package/idforge.win32-x64-msvc.node" >&2; return 1; }
  # Installed from the tarball on Linux (npm and the peers are JavaScript only), the suite and the
  # shared vectors beside it as in ci/dist/dist-test.sh, run by node.exe.
  app="$work/js/node"
  peers="$(bash ci/dist/node-test-app.sh "$work" "$version" bson @sapphire/snowflake uuid ulid drizzle-orm pg)"
  # shellcheck disable=SC2086
  (cd "$app" && npm install --no-audit --no-fund --silent "$tarball" $peers)
  cp "$node_exe" "$work/bcryptprimitives.dll" "$app/"
  # The tests that start servers of their own start idforge.exe (by its Windows path); the
  # services' URLs (IDFORGE_TEST_*, ci/services.sh) reach node.exe through Wine's environment.
  cp "$work/bcryptprimitives.dll" "$exe_dir/"
  local bin
  # Wine's drive Z: is /.
  bin="Z:${exe_dir//\//\\}\\idforge.exe"
  local files=()
  for f in "$app"/test/*.test.js "$app"/test/*.test.mjs; do files+=("test/$(basename "$f")"); done
  IDFORGE_BIN="$bin" win "$app" node.exe --test --test-reporter=tap --test-reporter-destination=tap.txt "${files[@]}" >/dev/null || rc=$?
  tr -d '\r' <"$app/tap.txt" >"$work/node.tap"
  grep -E '^# (tests|pass|fail|skipped|todo|cancelled)' "$work/node.tap" | tr '\n' ' '
  echo
  grep -E '^ *# SKIP|# SKIP' "$work/node.tap" | sed 's/^ */    skipped: /' | sort | uniq -c | head -n 40 || true
  if [ "$rc" -ne 0 ]; then
    grep -B2 -A20 '^ *not ok' "$work/node.tap" | head -n 120 >&2
    echo "error: the Node suite failed under node.exe (exit $rc)" >&2
    return 1
  fi
}

# ---- Go -------------------------------------------------------------------------------------------
test_go() {
  local go_dir app="$work/goids" t out
  go_dir="$(bash ci/install/install-go.sh)"
  # A cache of this run's: cgo's package keeps the -L of pkg-config's answer, which names this
  # run's temporary folder.
  local env=(PATH="$go_dir:$PATH" GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc
    GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPATH="$work/gopath" GOCACHE="$work/gocache")
  # The checkout's package through the C zip's pkg-config files: idforge.dll, then libidforge.a.
  mkdir -p "$app/pc"
  cp ci/windows/goids/main.go "$app/pc/"
  printf 'module goids\n\ngo 1.24\n\nrequire idforge.dev/idforge v0.0.0\n\nreplace idforge.dev/idforge => %s\n' \
    "$repo/bindings/go" >"$app/pc/go.mod"
  (cd "$app/pc" && env "${env[@]}" PKG_CONFIG_PATH="$c_dir/lib/pkgconfig" go build -o ../goids-shared.exe . &&
    env "${env[@]}" PKG_CONFIG_PATH="$c_dir/lib/pkgconfig" go build -tags idforge_static -o ../goids-static.exe .)
  # The module as the registry step publishes it (ci/release/go-module.sh), by `go get` from a
  # proxy folder: its own libidforge.a for windows/amd64, no pkg-config.
  bash ci/release/go-module.sh "$dist" "$work/goproxy" >/dev/null
  mkdir -p "$app/mod"
  cp ci/windows/goids/main.go "$app/mod/"
  (cd "$app/mod" && env "${env[@]}" go mod init goids >/dev/null 2>&1 &&
    env "${env[@]}" GOPROXY="file://$work/goproxy" GOSUMDB=off go get "idforge.dev/idforge@v$version" >/dev/null 2>&1 &&
    env "${env[@]}" GOPROXY=off go build -o ../goids-module.exe .)
  cp "$c_dir/bin/idforge.dll" "$app/"
  for t in goids-shared goids-static goids-module; do
    out="$(win "$app" "$t.exe")"
    echo "    $t.exe: $out"
  done
  loads "$app/goids-shared.exe" idforge.dll || { echo "error: goids-shared.exe does not load idforge.dll" >&2; return 1; }
  for t in goids-static goids-module; do
    ! loads "$app/$t.exe" idforge.dll || { echo "error: $t.exe loads idforge.dll" >&2; return 1; }
  done
}

for part in c cli server node go; do
  wants "$part" || continue
  echo "--- windows: $part"
  "test_$part"
done
echo "windows: ${selected[*]} passed under $("$wine" --version) ($version, dist/)"
