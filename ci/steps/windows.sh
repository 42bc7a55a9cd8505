#!/usr/bin/env bash
# Windows (x86_64-pc-windows-gnu): the C library and the idforge command line and server, built
# here with Debian's Rust (std from source) and mingw-w64, and run under Wine 8:
#   - the C tests (bindings/c/tests/test_idforge.c: the shared vectors, 2 threads x 1,000,000
#     snowflakes distinct, state files, file:// segments; no fork on Windows) linked against
#     idforge.dll, then against libidforge.a;
#   - `idforge.exe gen` and `decode`, whose output must be the Linux binary's;
#   - `idforge.exe serve` with --data-dir as C:\… and as a relative path, answering redis-cli
#     from Linux, killed and started again on its guard: the next id is past every earlier one;
#   - ci/harness/crash_harness.py against it: 8 Linux clients, KILL_CYCLES (10) kills and
#     restarts, no id twice.
# The Wine helpers (ci/windows/processprng.c, the Wine prefix) are test scaffolding, never shipped.
#
#   ci/steps/windows.sh        (Wine prefix and builds cached under ~/.cache/idforge)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo="$PWD"
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/target}"
bash ci/install/install-deps.sh windows

triple=x86_64-pc-windows-gnu
tdir="$CARGO_TARGET_DIR/windows"
out="$tdir/$triple/debug"
# Debian's Rust with its std source (rustup cannot add targets here), as ci/dist/dist.sh's cross
# lane uses it; its own target dir, since its host builds differ from rustup's.
xbin="$tdir/bin"
mkdir -p "$xbin"
for t in cargo rustc rustdoc; do ln -sfn "/usr/bin/$t" "$xbin/$t"; done
echo "--- cargo build --target $triple -p idforge-c -p idforge-server (debug, Debian's Rust $(/usr/bin/rustc --version | cut -d' ' -f2))"
env PATH="$xbin:$PATH" RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_abort \
  CARGO_TARGET_DIR="$tdir" CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
  cargo build --locked --target "$triple" -p idforge-c -p idforge-server

work="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -z "$server_pid" ] || kill -KILL "$server_pid" 2>/dev/null || true
  WINEPREFIX="$WINEPREFIX" /usr/lib/wine/wineserver -k 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# ---- Wine -----------------------------------------------------------------------------------------
export WINEPREFIX="$CACHE/wine" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wine=/usr/lib/wine/wine64
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "--- wineboot --init ($WINEPREFIX)"
  "$wine" wineboot --init >/dev/null 2>&1
  /usr/lib/wine/wineserver -w
fi
x86_64-w64-mingw32-gcc -O2 -shared -o "$work/bcryptprimitives.dll" ci/windows/processprng.c -ladvapi32
cp "$out/idforge.dll" "$out/idforge.exe" "$work/"
# win CMD...: runs a Windows program from $work under Wine, its output through a file (some
# Windows programs under Wine cannot write to a pipe).
win() {
  local log
  log="$(mktemp -p "$work")"
  local rc=0
  (cd "$work" && "$wine" "$@" >"$log" 2>&1) || rc=$?
  tr -d '\r' <"$log"
  return "$rc"
}

# ---- C ----------------------------------------------------------------------------------------------
echo "--- C tests (mingw), against idforge.dll and libidforge.a"
python3 bindings/c/tests/gen_vectors.py "$work/vectors.h"
cflags=(-std=c99 -Wall -Wextra -Werror -O1 -Iinclude -I"$work" -Ibindings/c/tests)
# Windows' libraries for the static library (rustc --print native-static-libs).
syslibs=(-lws2_32 -lbcrypt -lntdll -luserenv -lcrypt32 -lsecur32 -lole32 -lshell32 -ladvapi32
  -lsynchronization)
# -static: winpthreads and libgcc inside the .exe, as a user's program would ship them.
x86_64-w64-mingw32-gcc "${cflags[@]}" bindings/c/tests/test_idforge.c -o "$work/test_shared.exe" \
  "$out/libidforge.dll.a" -static -lpthread
x86_64-w64-mingw32-gcc "${cflags[@]}" bindings/c/tests/test_idforge.c -o "$work/test_static.exe" \
  "$out/libidforge.a" "${syslibs[@]}" -static -lpthread
for t in test_shared test_static; do
  echo "    $t.exe"
  win "$t.exe" | tail -3
done
if x86_64-w64-mingw32-objdump -p "$work/test_static.exe" | grep -i "DLL Name: idforge"; then
  echo "error: test_static.exe loads idforge.dll" >&2
  exit 1
fi

# ---- the command line ---------------------------------------------------------------------------
echo "--- idforge.exe gen and decode"
ids="$(win idforge.exe gen snowflake --count 3)"
[ "$(echo "$ids" | wc -l)" -eq 3 ] || { echo "error: gen gave: $ids" >&2; exit 1; }
linux_bin="$CARGO_TARGET_DIR/debug/idforge"
[ -x "$linux_bin" ] || cargo build --locked -q -p idforge-server --bin idforge
for id in $ids 6b1b2f0c9d3e4a5f60718293; do
  got="$(win idforge.exe decode "$id")"
  want="$("$linux_bin" decode "$id")"
  [ "$got" = "$want" ] || { printf 'error: decode %s\nwindows:\n%s\nlinux:\n%s\n' "$id" "$got" "$want" >&2; exit 1; }
done
echo "    3 snowflakes and an ObjectId decode as on Linux"

# ---- the server -------------------------------------------------------------------------------------
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
# serve DATA_DIR: starts idforge.exe serve on $port and waits until it answers.
serve() {
  (cd "$work" && exec "$wine" idforge.exe serve --bind 127.0.0.1 --port "$port" --data-dir "$1" \
    --log warn >>"$work/serve.log" 2>&1) &
  server_pid=$!
  for _ in $(seq 150); do
    redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.2
  done
  echo "error: idforge.exe serve --data-dir $1 did not answer" >&2
  tail -20 "$work/serve.log" >&2
  return 1
}
# kill_server: kill -9 of the Wine process (TerminateProcess: no clean exit, no persist).
kill_server() {
  kill -KILL "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
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
    { echo "error: --data-dir '$dir': $first..$last, then $next after the restart" >&2; exit 1; }
  echo "    --data-dir '$dir': ids $first..$last, after kill -9 and a restart $next"
done
[ -f "$WINEPREFIX/drive_c/idforge-ci-data/idforge.db" ] || { echo "error: no store in C:\\idforge-ci-data" >&2; exit 1; }
[ -f "$work/data dir/idforge.db" ] || { echo "error: no store in the relative 'data dir'" >&2; exit 1; }
rm -rf "$WINEPREFIX/drive_c/idforge-ci-data"

echo "--- ci/harness/crash_harness.py: 8 Linux clients, ${KILL_CYCLES:-10} kills of idforge.exe"
venv="${IDFORGE_VENV:-$CACHE/venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import redis' 2>/dev/null || "$venv/bin/python" -m pip install --quiet "redis==8.1.0"
# The harness runs a binary with serve's arguments: this one runs idforge.exe under Wine (exec:
# the harness's SIGKILL reaches the Wine process itself).
printf '#!/bin/sh\ncd "%s" && exec %s idforge.exe "$@"\n' "$work" "$wine" >"$work/idforge-wine"
chmod +x "$work/idforge-wine"
"$venv/bin/python" ci/harness/crash_harness.py "$work/idforge-wine" "$work/crash" \
  --cycles "${KILL_CYCLES:-10}" --signal KILL
echo "windows: C tests (DLL and static), gen/decode, serve on C:\\ and relative data dirs, kill -9 harness: passed under $("$wine" --version)"
cd "$repo"
