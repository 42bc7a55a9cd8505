#!/usr/bin/env bash
# Tests the artifacts of ci/dist/dist.sh as their users get them: each is unpacked or installed in a
# fresh temporary directory and run with PATH reduced to the system directories (no cargo, rustc,
# maturin, zig), from there, not from the source tree:
#   dist/SHA256SUMS matches;
#   every artifact carries a README, CHANGELOG.md, LICENSE-MIT and LICENSE-APACHE, and no file in
#           it names example.invalid;
#   server  idforge gen; idforge serve --config (the shipped idforge.toml) answers redis-cli INCR,
#           stops cleanly on SIGTERM (exit 0), and a restart continues the sequence without a gap;
#           docs/install.md's install lines, then its uninstall lines, into a scratch root: the unit's
#           Documentation= file is installed, and nothing is left behind;
#   c       docs/install.md's lines for C, as written, with the program of "Use from C and C++":
#           shared (it starts with no LD_LIBRARY_PATH) and static (ldd names no libidforge); the
#           same with the tarball's README; examples/c/order_ids.c with -Wall -Werror; a copy
#           under a prefix, used, then removed by the tarball README's uninstall line;
#   python  the wheel installed (pip, no build) into a new venv; the Python test suite against it;
#   node    the npm tarball installed (npm install, no build) into a new project, with the peers the
#           interop tests compare with; the Node test suite and the type test (tsc) against it;
#   jvm     bindings/uniffi/tests/JavaCaller.java compiled against the jar and run with the class
#           path a user has: the jar, JNA and the Kotlin stdlib (no jna.library.path);
#   go      docs/install.md's lines for Go, as written (with the segment source memory:), in an
#           empty folder with the program of "Use from Go", the C tarball and a copy of
#           bindings/go: PATH is the system's and Go's (ci/install/install-go.sh), a fresh Go
#           cache, no proxy; shared (the tarball's libidforge.so.0 through the rpath) and static
#           (-tags idforge_static: ldd names no libidforge);
#   pgext   the tarball's install.sh into the local PostgreSQL 15 (as root or with sudo), then the
#           extension's test suite against a cluster that preloads it (ci/steps/pg-extension.sh
#           --installed: nothing is built).
# Every native object tested (the server, the C libraries, the wheel's module, the Node addon, the
# jar's library, the extension) must be of the tested machine (readelf -h).
# Artifacts absent from dist/ are reported as such, and fail the run (build them with ci/dist/dist.sh).
#
# --arch aarch64: the same checks on the aarch64 artifacts, each run in an aarch64 Debian root under
# qemu-user emulation (ci/dist/arm64-root.sh makes and caches it; run as root), with docs/install.md's
# install lines for x86_64 read for aarch64. On the host: the archives' checks, the server's
# install lines (tar and install into a scratch root), npm install (the package has no install
# scripts; its loader picks the addon by the machine node runs on) and tsc, javac (bytecode). In
# the root: every program a user runs (idforge, redis-cli, cc and what it built, ldd, venv, pip,
# pytest, node --test on Node 20, java with the root's JNA, install.sh, and
# ci/steps/pg-extension.sh --installed with PostgreSQL 15: a copy whose install-deps.sh is a
# no-op, the root having the packages). go is skipped (no Go in the root). Under emulation the
# suites run what is particular to the machine, not their whole selves again (the x86_64 run has
# them all, on the same sources): python the shared vectors and the generators' tests (threads,
# fork, segments), node the same two files, pgext test_extension.py (vectors, parallel workers,
# restart, crash, standby); server, c and jvm run as on x86_64. IDFORGE_DIST_FULL=1 runs the
# suites in full (about 5 minutes with a warm root).
#
#   ci/dist/dist-test.sh [--arch x86_64|aarch64] [ARTIFACT...]
#       (default: x86_64; server c python node jvm go pgext; aarch64: the same but go)
#   IDFORGE_DIST_DIR=DIR   the artifacts and their SHA256SUMS (default: dist)
set -euo pipefail
dist="${IDFORGE_DIST_DIR:-}"
[ -z "$dist" ] || dist="$(cd "$dist" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo="$PWD"
# shellcheck source=ci/dist/served.sh
. ci/dist/served.sh
dist="${dist:-$repo/dist}"
SYSTEM_PATH=/usr/local/bin:/usr/bin:/bin
arch=x86_64
if [ "${1:-}" = --arch ]; then
  arch="${2:-}"
  shift 2 || true
fi
case "$arch" in
  x86_64) machine="Advanced Micro Devices X86-64" ;;
  aarch64) machine=AArch64 ;;
  *) echo "error: --arch x86_64 or aarch64, not '$arch'" >&2; exit 2 ;;
esac
selected=("$@")
if [ "$#" -eq 0 ]; then
  selected=(server c python node jvm go pgext)
  [ "$arch" = x86_64 ] || selected=(server c python node jvm pgext)
fi
version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
# Under emulation every program runs several times slower (qemu-user translates each
# instruction): the tests' few time bounds (IDFORGE_TEST_SLOWDOWN, passed into the root) follow.
if [ "$arch" != x86_64 ]; then
  IDFORGE_TEST_SLOWDOWN="$(python3 -c 'import sys; print(max(1.0, float(sys.argv[1])) * 10)' "${IDFORGE_TEST_SLOWDOWN:-1}")"
  export IDFORGE_TEST_SLOWDOWN
fi
# The suites' files: all, or under emulation those of the machine (the header says which).
py_tests=(tests)
node_tests=(test/)
pg_tests=""
if [ "$arch" != x86_64 ] && [ -z "${IDFORGE_DIST_FULL:-}" ]; then
  py_tests=(tests/test_vectors.py tests/test_generators.py)
  node_tests=(test/vectors.test.js test/generators.test.js)
  pg_tests=extensions/postgres/tests/test_extension.py
fi

scratch_and_server_cleanup # served.sh: $work, $server_pid

# native CMD...: CMD on the tested machine: here, or in the aarch64 root (with $work and the
# artifacts at their paths, in the current directory).
native=()
if [ "$arch" = aarch64 ]; then
  arm_root="$(bash ci/dist/arm64-root.sh path)"
  native=(bash "$repo/ci/dist/arm64-root.sh" run --bind "$work" --bind "$dist")
  # The services' certificates (ci/services.sh), which the TLS tests read.
  [ -z "${IDFORGE_TEST_TLS_DIR:-}" ] || native+=(--bind "$IDFORGE_TEST_TLS_DIR")
  native+=(--)
fi

# user CMD...: CMD in $work with nothing of the build environment: system PATH, a scratch HOME.
user() { (cd "$work" && exec "${native[@]}" env -i PATH="$SYSTEM_PATH" HOME="$work/home" LANG=C.UTF-8 "$@"); }
mkdir -p "$work/home"

# native_ldd FILE: the libraries FILE loads, as the tested machine's loader finds them.
native_ldd() { "${native[@]}" ldd "$@"; }

# of_machine FILE...: each FILE (an ELF object, or an archive of them) is for the tested machine.
of_machine() {
  local file got
  for file in "$@"; do
    got="$(readelf -h "$file" | sed -n 's/^ *Machine: *//p' | sort -u)"
    [ "$got" = "$machine" ] ||
      { echo "error: $file is for '${got:-not ELF}', not $machine" >&2; return 1; }
  done
  echo "$machine: $(for file in "$@"; do basename "$file"; done | tr '\n' ' ')"
}

# doc_block FILE START LANG: the first LANG block after the line of FILE starting with START, with
# VERSION replaced by this release's (ci/docs/doc_block.py): the documented text, run as written.
doc_block() { python3 ci/docs/doc_block.py "$@" "$version"; }
# for_arch: docs/install.md's install lines (which name the x86_64 artifacts) for the tested machine's.
for_arch() { sed "s/x86_64/$arch/g"; }

# carries WHAT DIR [NAME...]: DIR (an artifact, unpacked) holds files named NAME (default: README.md
# CHANGELOG.md LICENSE-MIT LICENSE-APACHE), and none of its files names example.invalid (a
# placeholder address where a real one was due: the project has no public web home).
carries() {
  local what="$1" dir="$2" name missing=() placeholders
  shift 2
  [ "$#" -gt 0 ] || set -- README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE
  for name in "$@"; do
    [ -n "$(find "$dir" -name "$name" -print -quit)" ] || missing+=("$name")
  done
  [ "${#missing[@]}" -eq 0 ] || { echo "error: $what lacks ${missing[*]}" >&2; return 1; }
  placeholders="$(grep -rl example.invalid "$dir" || true)"
  [ -z "$placeholders" ] || { echo "error: $what names example.invalid in: $placeholders" >&2; return 1; }
  echo "$what carries $*; no example.invalid"
}

(cd "$dist" && sha256sum --quiet -c SHA256SUMS)
echo "==> $dist/SHA256SUMS ok"

# The server of the tarball is also the one the Python and Node tests start (and stop) themselves.
server_tarball="$dist/idforge-$version-$arch-linux.tar.gz"
server_dir="$work/idforge-$version-$arch-linux"
if [ -f "$server_tarball" ]; then
  tar -xzf "$server_tarball" -C "$work"
  export IDFORGE_BIN="$server_dir/idforge"
fi

test_server() {
  local dir="$server_dir" port
  [ -f "$server_tarball" ] || { echo "error: no $server_tarball (ci/dist/dist.sh server)" >&2; return 1; }
  carries "$(basename "$server_tarball")" "$dir"
  of_machine "$dir/idforge"
  user "$dir/idforge" gen snowflake --count 3 | tee "$work/ids"
  [ "$(wc -l <"$work/ids")" -eq 3 ]

  # start_server: serve with the shipped config; the data dir and port overridden by flags.
  start_server() {
    rm -f "$work/port"
    (cd "$work" && exec "${native[@]}" env -i PATH="$SYSTEM_PATH" HOME="$work/home" "$dir/idforge" serve \
      --config "$dir/idforge.toml" --data-dir "$work/data" --port 0 --port-file "$work/port" \
      >>"$work/server.log" 2>&1) &
    server_pid=$!
    wait_port "$server_pid" "$work/port" "$work/server.log"
    port="$(cat "$work/port")"
  }
  # stop_server: SIGTERM, then it must exit 0 within 30 s.
  stop_server() {
    stop_served "$server_pid" "$work/server.log"
    server_pid=""
  }
  incr_across_restart start_server stop_server user redis-cli
  echo "server: gen, serve --config idforge.toml, redis-cli INCR 1 2 | SIGTERM | restart, INCR 3"

  # docs/install.md's install lines and uninstall lines for the server, run into a scratch root: sudo
  # dropped, systemctl and redis-cli skipped, /usr/local and /etc moved under the root.
  local root="$work/root" doc left
  install -d "$root/usr/local/bin" "$root/etc/systemd/system" "$work/srv"
  cp "$server_tarball" "$work/srv/"
  in_root() {
    sed -e 's/\bsudo //g' -e 's/systemctl [^&;|]*/true /g' -e '/^redis-cli/d' \
      -e "s#\(^\|[ \"']\)/usr/local/#\1$root/usr/local/#g" -e "s#\(^\|[ \"']\)/etc/#\1$root/etc/#g"
  }
  doc_block docs/install.md '**The server**' sh | for_arch | in_root >"$work/srv/install.sh"
  doc_block docs/install.md 'To remove the server' sh | in_root >"$work/srv/uninstall.sh"
  (cd "$work/srv" && env -i PATH="$SYSTEM_PATH" HOME="$work/home" sh -e install.sh)
  "${native[@]}" "$root/usr/local/bin/idforge" --version >/dev/null
  [ -f "$root/etc/systemd/system/idforge.service" ]
  doc="$(sed -n 's#^Documentation=file://##p' "$root/etc/systemd/system/idforge.service")"
  [ -n "$doc" ] || { echo "error: idforge.service has no Documentation=file:// line" >&2; return 1; }
  [ -f "$root$doc" ] || { echo "error: idforge.service's Documentation=$doc is not installed by docs/install.md's lines" >&2; return 1; }
  (cd "$work/srv" && env -i PATH="$SYSTEM_PATH" HOME="$work/home" sh -e uninstall.sh)
  left="$(find "$root" ! -type d)"
  [ -z "$left" ] || { echo "error: docs/install.md's uninstall lines leave: $left" >&2; return 1; }
  echo "server: docs/install.md's install lines put the unit's Documentation ($doc) in place; its uninstall lines remove all"
}

test_c() {
  local name="idforge-c-$version-$arch-linux-gnu" dir so prefix left
  [ -f "$dist/$name.tar.gz" ] || { echo "error: no $dist/$name.tar.gz (ci/dist/dist.sh c)" >&2; return 1; }
  mkdir -p "$work/c"
  cp "$dist/$name.tar.gz" examples/c/order_ids.c "$work/c/"
  dir="$work/c/$name"
  # docs/install.md's lines for C as written (they unpack the tarball, build app.c shared and
  # static, and run both), in the folder that holds the tarball; app.c is the README's program.
  doc_block README.md '## Use from C and C++' c >"$work/c/app.c"
  doc_block docs/install.md '**C and C++**' sh | for_arch >"$work/c/install.sh"
  user sh -ec 'cd c && sh -e install.sh'
  carries "$name.tar.gz" "$dir"
  of_machine "$dir/lib/libidforge.so.${version%%.*}" "$dir/lib/libidforge.a" "$work/c/a.out" "$work/c/app-static"
  # The shared build loads the tarball's library (through idforge.pc's rpath), the static none.
  so="$(native_ldd "$work/c/a.out" | awk '$1 ~ /^libidforge\.so/ { print $3 }')"
  [ -n "$so" ] && [ "$so" -ef "$dir/lib/libidforge.so.${version%%.*}" ] ||
    { echo "error: a.out loads '$so', not the tarball's libidforge.so.${version%%.*}" >&2; return 1; }
  if native_ldd "$work/c/app-static" | grep libidforge; then
    echo "error: the idforge-static build loads a libidforge" >&2
    return 1
  fi

  # The tarball's README, as written: its program and its build lines.
  rm -f "$work/c/a.out" "$work/c/app-static"
  doc_block "$dir/README.md" 'Unique ids' c >"$work/c/app.c"
  doc_block "$dir/README.md" 'Built and run' sh >"$work/c/build.sh"
  user sh -ec 'cd c && sh -e build.sh'
  if native_ldd "$work/c/app-static" | grep libidforge; then
    echo "error: the tarball README's static build loads a libidforge" >&2
    return 1
  fi

  # examples/c with every warning an error, both ways, and run.
  user env PKG_CONFIG_PATH="$dir/lib/pkgconfig" sh -ec '
    cd c
    cc -std=c99 -Wall -Wextra -Werror -pedantic order_ids.c -o order_ids_shared $(pkg-config --cflags --libs idforge)
    cc -std=c99 -Wall -Wextra -Werror -pedantic order_ids.c -o order_ids_static $(pkg-config --cflags --libs idforge-static)
    ./order_ids_shared >/dev/null
    ./order_ids_static | tail -n 1
  '
  if native_ldd "$work/c/order_ids_static" | grep libidforge; then
    echo "error: order_ids_static loads a libidforge" >&2
    return 1
  fi

  # Copied under a prefix as the tarball's README says (cp -a), used there, then removed by its
  # uninstall line: nothing of idforge stays.
  prefix="$work/c/prefix"
  mkdir -p "$prefix"
  cp -a "$dir/include" "$dir/lib" "$prefix/"
  rm -f "$work/c/a.out"
  user env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" sh -ec 'cd c && cc -std=c99 app.c $(pkg-config --cflags --libs idforge) && ./a.out'
  doc_block "$dir/README.md" 'To uninstall' sh | sed "s#/usr/local/#$prefix/#g" >"$work/c/uninstall.sh"
  user sh -e c/uninstall.sh
  left="$(find "$prefix" ! -type d)"
  [ -z "$left" ] || { echo "error: the C README's uninstall line leaves: $left" >&2; return 1; }
  echo "c: docs/install.md's and the tarball README's lines as written, shared (rpath) and static (no libidforge in ldd), examples/c, uninstall"
}

test_python() {
  local wheel
  wheel="$(ls "$dist"/idforge-"$version"-*"$arch"*.whl)"
  # The wheel: the README is its description (METADATA), the licences in .dist-info/licenses.
  python3 -m zipfile -e "$wheel" "$work/wheel"
  carries "$(basename "$wheel")" "$work/wheel" CHANGELOG.md LICENSE-MIT LICENSE-APACHE METADATA
  of_machine "$work"/wheel/idforge/*.so
  grep -qxF "$(head -n 1 python/README.md)" "$work/wheel/idforge-$version.dist-info/METADATA" ||
    { echo "error: the wheel's METADATA lacks python/README.md" >&2; return 1; }
  mkdir -p "$work/sdist"
  tar -xzf "$dist/idforge-$version.tar.gz" -C "$work/sdist"
  carries "idforge-$version.tar.gz" "$work/sdist"
  user /usr/bin/python3 -m venv "$work/venv"
  user "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary :all: \
    "$wheel" "pytest>=7" "pymongo>=4" "uuid-utils>=0.9" "python-ulid>=2"
  # The tests, and the shared vectors they read (../../core/testdata), outside the source tree.
  mkdir -p "$work/py/python" "$work/py/core"
  cp -r python/tests "$work/py/python/"
  cp -r core/testdata "$work/py/core/"
  # The services' URLs (IDFORGE_TEST_*_URL, IDFORGE_REQUIRE_SERVICES) pass through, if set.
  local pass=() var
  for var in $(compgen -e | grep '^IDFORGE_' || true); do pass+=("$var=${!var}"); done
  (cd "$work/py/python" && exec "${native[@]}" env -i PATH="$SYSTEM_PATH" HOME="$work/home" "${pass[@]}" \
    "$work/venv/bin/pytest" -q -p no:cacheprovider "${py_tests[@]}")
}

test_node() {
  local tarball app peers node_arch=x64
  [ "$arch" = x86_64 ] || node_arch=arm64
  tarball="$dist/idforge-$version.tgz"
  [ -f "$tarball" ] || { echo "error: no $tarball (ci/dist/dist.sh node)" >&2; return 1; }
  mkdir -p "$work/npm"
  tar -xzf "$tarball" -C "$work/npm"
  carries "$(basename "$tarball")" "$work/npm/package"
  of_machine "$work/npm/package/idforge.linux-$node_arch-gnu.node"
  # The tests, and the shared vectors they read, outside the source tree; the peers at the
  # versions node/package.json pins for development.
  app="$work/js/node"
  peers="$(bash ci/dist/node-test-app.sh "$work" "$version" bson @sapphire/snowflake uuid ulid typescript @types/node)"
  local pass=() var
  for var in $(compgen -e | grep '^IDFORGE_' || true); do pass+=("$var=${!var}"); done
  # npm install and tsc here (the package has no install scripts; its loader picks the addon of
  # the machine node runs on), node --test on the tested machine.
  # shellcheck disable=SC2086
  (cd "$app" && env -i PATH="$SYSTEM_PATH" HOME="$work/home" npm_config_cache="$HOME/.npm" \
    sh -ec "npm install --no-audit --no-fund --silent '$tarball' $peers")
  (cd "$app" && exec "${native[@]}" env -i PATH="$SYSTEM_PATH" HOME="$work/home" "${pass[@]}" node --test "${node_tests[@]}")
  (cd "$app" && env -i PATH="$SYSTEM_PATH" HOME="$work/home" node_modules/.bin/tsc -p test/types)
}

test_jvm() {
  local jar="$dist/idforge-jvm-$version.jar" jna=/usr/share/java/jna.jar jna_dir=linux-x86-64
  local stdlib="${IDFORGE_CACHE:-$HOME/.cache/idforge}/kotlin/node_modules/kotlin-compiler/lib/kotlin-stdlib.jar"
  [ -f "$jar" ] || { echo "error: no $jar (ci/dist/dist.sh jvm)" >&2; return 1; }
  python3 -m zipfile -e "$jar" "$work/jar"
  carries "$(basename "$jar")" "$work/jar"
  # JNA's folder for the machine's library in the jar; the tested machine's JNA (Debian's loads
  # its own libjnidispatch).
  if [ "$arch" = aarch64 ]; then jna="$arm_root$jna" jna_dir=linux-aarch64; fi
  of_machine "$work/jar/$jna_dir/libidforge_uniffi.so"
  mkdir -p "$work/jvm"
  cp "$stdlib" "$jna" "$work/jvm/"
  cp bindings/uniffi/tests/JavaCaller.java "$work/jvm/"
  # Compiled here (bytecode is the same everywhere), run on the tested machine.
  (cd "$work/jvm" && env -i PATH="$SYSTEM_PATH" HOME="$work/home" javac -cp "$jar:kotlin-stdlib.jar" JavaCaller.java)
  (cd "$work/jvm" && exec "${native[@]}" env -i PATH="$SYSTEM_PATH" HOME="$work/home" LANG=C.UTF-8 \
    java -cp "$jar:jna.jar:kotlin-stdlib.jar:." JavaCaller)
}

test_go() {
  local name="idforge-c-$version-$arch-linux-gnu" go_dir so
  if [ "$arch" != x86_64 ]; then
    echo "go: skipped on $arch (the root has no Go toolchain; the Go module links the C tarball, tested as c)"
    return 0
  fi
  [ -f "$dist/$name.tar.gz" ] || { echo "error: no $dist/$name.tar.gz (ci/dist/dist.sh c)" >&2; return 1; }
  go_dir="$(bash ci/install/install-go.sh)"
  mkdir -p "$work/go/src/bindings"
  cp "$dist/$name.tar.gz" "$work/go/"
  # The module as a user has it: the folder, outside any checkout.
  cp -r bindings/go "$work/go/src/bindings/"
  doc_block docs/go.md '# Use from Go' go >"$work/go/main.go"
  # The program's segment source: memory: (the README's server is the docs step's).
  doc_block docs/install.md '**Go from the files**' sh |
    sed -e 's/^go run \./go run . memory:/' -e 's#&& ./app-static #\&\& ./app-static memory: #' >"$work/go/install.sh"
  grep -q 'app-static memory:' "$work/go/install.sh" || { echo "error: docs/install.md's Go lines changed shape" >&2; return 1; }
  user env PATH="$go_dir:$SYSTEM_PATH" IDFORGE_SRC="$work/go/src" sh -ec 'cd go && sh -e install.sh'
  if ldd "$work/go/app/app-static" | grep libidforge; then
    echo "error: the idforge_static Go build loads a libidforge" >&2
    return 1
  fi
  user env PATH="$go_dir:$SYSTEM_PATH" PKG_CONFIG_PATH="$work/go/$name/lib/pkgconfig" \
    sh -ec 'cd go/app && go build -o app-shared . && ./app-shared memory: >/dev/null'
  so="$(ldd "$work/go/app/app-shared" | awk '$1 ~ /^libidforge\.so/ { print $3 }')"
  [ -n "$so" ] && [ "$so" -ef "$work/go/$name/lib/libidforge.so.${version%%.*}" ] ||
    { echo "error: the Go program loads '$so', not the tarball's libidforge.so.${version%%.*}" >&2; return 1; }
  echo "go: docs/install.md's lines in an empty folder (Go toolchain and a C compiler, no Rust), shared (rpath) and static (no libidforge in ldd)"
}

test_pgext() {
  local name="idforge-postgres-$version-pg15-$arch-linux-gnu"
  [ -f "$dist/$name.tar.gz" ] || { echo "error: no $dist/$name.tar.gz (ci/dist/dist.sh pgext)" >&2; return 1; }
  # The suite compares decoding with the idforge CLI: the server tarball's.
  [ -n "${IDFORGE_BIN:-}" ] || { echo "error: no server tarball in $dist (its idforge CLI is needed)" >&2; return 1; }
  tar -xzf "$dist/$name.tar.gz" -C "$work"
  carries "$name.tar.gz" "$work/$name"
  of_machine "$work/$name/lib/idforge.so"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # install.sh as a user runs it: system PATH, where Debian's pg_config is.
  $sudo "${native[@]}" env -i PATH="$SYSTEM_PATH" PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config \
    sh "$work/$name/install.sh"
  if [ "$arch" = x86_64 ]; then
    bash ci/steps/pg-extension.sh --installed
    return
  fi
  # In the root: the step and the tests, copied, with an install-deps.sh that installs nothing
  # (arm64-root.sh gave the root PostgreSQL 15 and venv; the step's pgext group is for building).
  # Its pytest venv is kept in the root (made once, as the step keeps it in CARGO_TARGET_DIR).
  mkdir -p "$work/pg/ci/steps" "$work/pg/ci/install" "$work/pg/extensions/postgres" "$work/pg/core"
  cp ci/steps/pg-extension.sh "$work/pg/ci/steps/"
  cp -r extensions/postgres/tests "$work/pg/extensions/postgres/"
  cp -r core/testdata "$work/pg/core/"
  printf '#!/bin/sh\n# The aarch64 root has the packages already (ci/dist/arm64-root.sh).\n' >"$work/pg/ci/install/install-deps.sh"
  # PATH as root's (runuser is in sbin), as the step has it here. The cluster's port is the next
  # after x86_64's (the root shares the host's network): the two tests may run at once (ci/test.sh).
  (cd "$work/pg" && exec "${native[@]}" env -i PATH="/usr/local/sbin:/usr/sbin:/sbin:$SYSTEM_PATH" HOME="$work/home" LANG=C.UTF-8 \
    IDFORGE_BIN="$IDFORGE_BIN" CARGO_TARGET_DIR=/var/cache/idforge-pgext IDFORGE_PGEXT_PORT="$((${IDFORGE_PGEXT_PORT:-25433} + 1))" \
    IDFORGE_PGEXT_TESTS="$pg_tests" bash ci/steps/pg-extension.sh --installed)
}

failed=()
for artifact in "${selected[@]}"; do
  echo "==> $artifact"
  # Not `(test) || failed+=…`: bash ignores set -e in a subshell whose status a || tests, so every
  # assertion but the last would pass unseen. set -e stays on inside the subshell this way.
  start=$SECONDS
  set +e
  (set -e; "test_$artifact")
  rc=$?
  set -e
  echo "--- $artifact: $((SECONDS - start)) s"
  [ "$rc" -eq 0 ] || failed+=("$artifact")
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "error: artifacts failed their tests: ${failed[*]}" >&2
  exit 1
fi
echo "==> the artifacts work as their users get them: ${selected[*]}"
