#!/usr/bin/env bash
# Builds the release artifacts into dist/ (git-ignored; emptied first), all of the workspace's
# version, for Linux on x86_64 and aarch64 with glibc 2.17 or newer (linked by zig through
# cargo-zigbuild, or maturin --zig), stripped (the cargo profile `dist`, then strip(1)), and writes
# dist/SHA256SUMS. ARCH is x86_64 or aarch64:
#   server  idforge-VERSION-ARCH-linux.tar.gz: the idforge binary, an example idforge.toml and
#           a systemd unit (packaging/server/), the project's README.md (the server's manual)
#   static  idforge-VERSION-ARCH-linux-musl.tar.gz: the same, the binary linked statically with
#           musl (no program interpreter, no dynamic section: runs in an empty container)
#   c       idforge-c-VERSION-ARCH-linux-gnu.tar.gz: include/idforge.h, lib/libidforge.so*
#           (soname libidforge.so.MAJOR), lib/libidforge.a, relocatable lib/pkgconfig/idforge.pc
#           (shared) and idforge-static.pc (static), packaging/c/README.md
#   python  idforge-VERSION-cp39-abi3-manylinux2014_ARCH.manylinux_2_17_ARCH.whl, and the sdist
#   node    idforge-VERSION.tgz (npm pack): one package with an addon per platform inside it, as
#           idforge.linux-x64-gnu.node and idforge.linux-arm64-gnu.node, where native.js
#           (napi-rs's loader) looks first. Not napi-rs's optional platform packages: those are
#           resolved by name on the npm registry, where this project publishes nothing, so a
#           user's `npm install` of the tarball could fetch a stranger's package of that name.
#   jvm     idforge-jvm-VERSION.jar: the Kotlin classes (uniffi-generated, and bindings/uniffi/kotlin)
#           and the native libraries as JNA resources, linux-x86-64/ and linux-aarch64/
#           libidforge_uniffi.so (one jar for both); a Java or Kotlin user adds only JNA (5) and
#           the Kotlin stdlib. Compiled for Java 17. The project's README.md and its JVM guide
#           (docs/jvm.md) go in META-INF/. Beside it idforge-jvm-VERSION.pom, -sources.jar (the
#           Kotlin sources) and -javadoc.jar (the API pages of ci/dist/jvm-apidoc.py)
#   pgext   idforge-postgres-VERSION-pg15-ARCH-linux-gnu.tar.gz: the PostgreSQL 15 extension
#           (lib/idforge.so, share/extension/ control and SQL files) and an install.sh that puts
#           them where pg_config says (packaging/postgres/)
#   windows x86_64 only, whatever IDFORGE_DIST_ARCHES says (ci/dist/windows.sh): the command line
#           and server (idforge-VERSION-x86_64-windows.zip), the C library
#           (idforge-c-VERSION-x86_64-windows-gnu.zip: DLL, import library, static library,
#           header, pkg-config files) and, with node, the addon idforge.win32-x64-msvc.node in the
#           npm package
# Every artifact carries a README, CHANGELOG.md and both licences (the wheel: its README as the
# package description in METADATA, the licences in .dist-info/licenses, python/idforge/CHANGELOG.md).
# It fails when a native object is of another machine than its name says, when a glibc one needs a
# symbol newer than 2.17, when a static server has a program interpreter or a dynamic section, or
# when a size target is missed.
#
#   ci/dist/dist.sh [ARTIFACT...]     (default: all of them)
#   IDFORGE_DIST_ARCHES="x86_64"      only these architectures (default: x86_64 aarch64)
#   IDFORGE_DIST_BUILD_ONLY=1         the builds only, nothing packed or checked, dist/ untouched
#                                     (ci/test.sh runs this in the background ahead of the dist step)
#
# Toolchains: x86_64 glibc with the host's (rustup) Rust. aarch64 and musl (servers with thin LTO: for_target) with Debian's Rust
# (rustc-web, cargo-web) and its std source (rust-web-src), std built for the target by cargo's
# -Zbuild-std (RUSTC_BOOTSTRAP=1: rustup cannot download other targets here), into
# $CARGO_TARGET_DIR/cross (Windows: cross-win-mac); ci/install/install-deps.sh cross installs them and aarch64 binutils.
# Tools (zig from PyPI `ziglang`, cargo-zigbuild, maturin, auditwheel) are pip-installed, pinned,
# into a venv under ~/.cache/idforge (IDFORGE_DIST_VENV); binutils (objdump, strip) must be there,
# npm for node; for jvm, ci/install/install-deps.sh jvm runs and kotlin-compiler comes from npm as in
# ci/steps/jvm.sh; UNIFFI_BINDGEN names a built uniffi-bindgen (else bindings/uniffi/bindgen is built).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

ARTIFACTS=(server static c python node jvm pgext windows)
read -r -a ARCHES <<<"${IDFORGE_DIST_ARCHES:-x86_64 aarch64}"
HOST_TRIPLE=x86_64-unknown-linux-gnu
GLIBC=2.17
# Size targets (bytes): the server binary, the C shared library, the wheel, an npm addon
# (compressed). The C library was 3.74 MB before TLS clients (rustls, ring, and sqlx's TLS) added
# 1.45 MB.
MAX_SERVER=15000000
MAX_C_SO=6000000
MAX_WHEEL=3000000
MAX_NPM=3000000
PIP_TOOLS=("ziglang==0.17.1" "cargo-zigbuild==0.24.1" "maturin==1.16.0" "auditwheel==6.8.2")

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
# Debian's Rust, found by PATH (cargo runs cargo-zigbuild and maturin runs cargo; both take the
# first on PATH): links to /usr/bin, so that rustup's proxies in ~/.cargo/bin are not it.
CROSS_BIN="${IDFORGE_CACHE:-$HOME/.cache/idforge}/debian-rust/bin"

selected=("$@")
[ "$#" -gt 0 ] || selected=("${ARTIFACTS[@]}")
for a in "${selected[@]}"; do
  [[ " ${ARTIFACTS[*]} " == *" $a "* ]] || {
    echo "error: unknown artifact '$a' (artifacts: ${ARTIFACTS[*]})" >&2
    exit 2
  }
done
for arch in "${ARCHES[@]}"; do
  case "$arch" in
    x86_64 | aarch64) ;;
    *) echo "error: unknown architecture '$arch' (x86_64, aarch64)" >&2; exit 2 ;;
  esac
done
wants() { [[ " ${selected[*]} " == *" $1 "* ]]; }
# cross_needed: an artifact of this run is built by Debian's toolchain.
cross_needed() {
  wants static && return 0
  wants windows && return 0
  [[ " ${ARCHES[*]} " == *" aarch64 "* ]]
}

tools=(objdump strip readelf sha256sum)
wants node && tools+=(node npm)
wants jvm && tools+=(npm)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found (ci/install/install-deps.sh dist)" >&2; exit 1; }
done
if cross_needed; then
  bash ci/install/install-deps.sh cross
  mkdir -p "$CROSS_BIN"
  for t in cargo rustc rustdoc; do ln -sfn "/usr/bin/$t" "$CROSS_BIN/$t"; done
fi

# ---- per target ----------------------------------------------------------------------------------
# gnu_triple ARCH / musl_triple ARCH: the Rust target of ARCH with glibc / musl.
gnu_triple() { echo "$1-unknown-linux-gnu"; }
musl_triple() { echo "$1-unknown-linux-musl"; }
# target_dir TRIPLE: where cargo builds for TRIPLE (Debian's toolchain has its own): Windows and
# macOS (ci/dist/macos-check.sh) in one folder, musl and aarch64 in another, so that the CI run's
# background builds (ci/prebuild.sh) make the two at once; cargo locks a target folder per build.
target_dir() {
  case "$1" in
    "$HOST_TRIPLE") echo "$CARGO_TARGET_DIR" ;;
    *-windows-* | *-apple-*) echo "$CARGO_TARGET_DIR/cross-win-mac" ;;
    *) echo "$CARGO_TARGET_DIR/cross" ;;
  esac
}
# for_target TRIPLE CMD...: CMD with the toolchain that builds TRIPLE: the host's for x86_64 glibc,
# else Debian's with std built from source (the target's RUSTFLAGS: musl linked fully static, no
# position-independent executable, whose self-relocation needs a dynamic section).
for_target() {
  local triple="$1"
  shift
  if [ "$triple" = "$HOST_TRIPLE" ]; then
    "$@"
    return
  fi
  local flags_var="CARGO_TARGET_${triple^^}_RUSTFLAGS" flags=""
  flags_var="${flags_var//-/_}"
  case "$triple" in
    *-musl) flags="-C target-feature=+crt-static -C link-self-contained=no -C relocation-model=static" ;;
  esac
  # The servers (THIN=1, from zigbuild): thin LTO over 16 codegen units, so that each link spreads
  # over both cores instead of one; they are the largest builds (tokio, sqlx, etcd's gRPC) and
  # their size target has room. The libraries keep fat LTO and one unit: with thin LTO the aarch64
  # C library, wheel and npm addon missed their size targets (6.38 MB, 3.29 MB, 3.13 MB). Fat LTO
  # stays for the x86_64 glibc server, the build the benchmarks measure.
  local lto=()
  [ "${THIN:-}" != 1 ] || lto=(CARGO_PROFILE_DIST_LTO=thin CARGO_PROFILE_DIST_CODEGEN_UNITS=16)
  env PATH="$CROSS_BIN:$PATH" RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_abort \
    "${lto[@]}" CARGO_TARGET_DIR="$(target_dir "$triple")" "$flags_var=$flags" "$@"
}
# bin_tool ARCH TOOL: binutils' TOOL (strip, objdump) for ARCH's objects.
bin_tool() {
  if [ "$1" = x86_64 ]; then echo "$2"; else echo "$1-linux-gnu-$2"; fi
}
# machine ARCH: what readelf -h calls ARCH's machine.
machine() {
  case "$1" in
    x86_64) echo "Advanced Micro Devices X86-64" ;;
    aarch64) echo "AArch64" ;;
  esac
}
# npm_platform ARCH / jna_platform ARCH: ARCH as napi-rs and JNA name it.
npm_platform() { case "$1" in x86_64) echo x64 ;; aarch64) echo arm64 ;; esac; }
jna_platform() { case "$1" in x86_64) echo x86-64 ;; aarch64) echo aarch64 ;; esac; }

# ---- the tools, in their own venv --------------------------------------------------------------
venv="${IDFORGE_DIST_VENV:-$HOME/.cache/idforge/dist-venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
stamp="$venv/idforge-tools"
if [ "$(cat "$stamp" 2>/dev/null)" != "${PIP_TOOLS[*]}" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${PIP_TOOLS[@]}"
  echo "${PIP_TOOLS[*]}" >"$stamp"
fi
# cargo-zigbuild and maturin find zig as `python3 -m ziglang` of the venv.
export PATH="$venv/bin:$PATH"

# ---- the version ---------------------------------------------------------------------------------
version="$(cargo metadata --no-deps --locked --format-version 1 |
  python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "idforge-server"))')"
major="${version%%.*}"
header_version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
[ "$header_version" = "$version" ] || {
  echo "error: include/idforge.h says $header_version, the workspace $version" >&2
  exit 1
}
# Reproducible archives: every file dated at the last commit. Given to the archivers only, not
# to cargo: the C build scripts (ring's, SQLite's) rerun when SOURCE_DATE_EPOCH changes, so each
# commit would rebuild them and all above them for every target. Without it maturin dates a
# wheel's files 1980-01-01 (reproducible too).
archive_epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
unset SOURCE_DATE_EPOCH

build_only="${IDFORGE_DIST_BUILD_ONLY:-}"
if [ -z "$build_only" ]; then
  rm -rf dist
  mkdir dist
fi
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
problems=()

# ---- checks ------------------------------------------------------------------------------------
# check_machine FILE ARCH: records a problem when FILE is not an ELF object for ARCH.
check_machine() {
  local got
  got="$(readelf -h "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p')"
  [ "$got" = "$(machine "$2")" ] || problems+=("$(basename "$1") is for '${got:-not ELF}', not $2")
}
# newest_glibc FILE ARCH: the newest GLIBC_x.y that FILE's dynamic symbols need (empty: none).
newest_glibc() {
  "$(bin_tool "$2" objdump)" -T "$1" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV | tail -n 1
}
# check_glibc FILE ARCH: records a problem when FILE is not for ARCH or needs a glibc newer than
# $GLIBC.
check_glibc() {
  local newest
  check_machine "$1" "$2"
  newest="$(newest_glibc "$1" "$2")"
  printf '    %-40s %s, needs GLIBC_%s at most\n' "$(basename "$1")" "$2" "${newest:-none}"
  if [ -n "$newest" ] && [ "$(printf '%s\n%s\n' "$newest" "$GLIBC" | sort -V | tail -n 1)" != "$GLIBC" ]; then
    problems+=("$(basename "$1") ($2) needs GLIBC_$newest (> $GLIBC)")
  fi
}
# check_static FILE ARCH: records a problem when FILE is not for ARCH or has a program interpreter
# or a dynamic section (it would need a loader or libraries: not for an empty container).
check_static() {
  local headers
  check_machine "$1" "$2"
  headers="$(readelf -l -W "$1" | awk '$1 == "INTERP" || $1 == "DYNAMIC" { print $1 }' | tr '\n' ' ')"
  printf '    %-40s %s, program headers INTERP/DYNAMIC: %s\n' "$(basename "$1")" "$2" "${headers:-none}"
  [ -z "$headers" ] || problems+=("$(basename "$1") ($2) is not static: $headers")
}
# check_size FILE MAX: records a problem when FILE is larger than MAX bytes.
check_size() {
  local size
  size="$(stat -c %s "$1")"
  printf '    %-40s %9d bytes (target <= %d)\n' "$(basename "$1")" "$size" "$2"
  [ "$size" -le "$2" ] || problems+=("$(basename "$1") is $size bytes (> $2)")
}
# ship SRC DEST ARCH: installs the binary SRC as DEST without its symbol table (the dynamic
# symbols stay).
ship() {
  install -D -m 755 "$1" "$2"
  "$(bin_tool "$3" strip)" --strip-unneeded "$2"
}
# readme_for ARCH SRC DEST: a tarball's README, written for x86_64 (the names in its lines run as
# written by ci/dist/dist-test.sh), with ARCH in place of x86_64.
readme_for() {
  sed "s/x86_64/$1/g" "$2" >"$3"
  chmod 644 "$3"
}
# pack DIR TARBALL: a reproducible .tar.gz of DIR (its name as the top folder).
pack() {
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$archive_epoch" \
    -C "$(dirname "$1")" -cf - "$(basename "$1")" | gzip -9n >"$2"
}

# ---- server, C, the Node addon and the JVM library: cargo-zigbuild ------------------------------
# One cargo run per package: built together, cargo would unify their dependencies' features (the
# server's tokio and sqlx features would land in libidforge.so).
# zigbuild TRIPLE ZIGTARGET PACKAGE: builds PACKAGE for TRIPLE (ZIGTARGET: TRIPLE or TRIPLE.GLIBC).
zigbuild() {
  echo "==> cargo zigbuild --profile dist --target $2 -p $3"
  local thin=0
  [ "$3" != idforge-server ] || thin=1
  THIN="$thin" for_target "$1" cargo zigbuild --locked --profile dist --target "$2" -p "$3"
}
# out ARCH [musl]: the folder of ARCH's dist builds.
out() {
  local triple
  if [ "${2:-}" = musl ]; then triple="$(musl_triple "$1")"; else triple="$(gnu_triple "$1")"; fi
  echo "$(target_dir "$triple")/$triple/dist"
}
for arch in "${ARCHES[@]}"; do
  triple="$(gnu_triple "$arch")"
  wants server && zigbuild "$triple" "$triple.$GLIBC" idforge-server
  wants static && zigbuild "$(musl_triple "$arch")" "$(musl_triple "$arch")" idforge-server
  wants c && zigbuild "$triple" "$triple.$GLIBC" idforge-c
  wants node && zigbuild "$triple" "$triple.$GLIBC" idforge-node
  wants jvm && zigbuild "$triple" "$triple.$GLIBC" idforge-uniffi
done
# shellcheck source=windows.sh
. ci/dist/windows.sh
wants windows && windows_build

# build_wheel ARCH OUT: the abi3 wheel for ARCH, into OUT.
build_wheel() {
  local triple
  triple="$(gnu_triple "$1")"
  echo "==> python ($1): maturin build --zig --compatibility manylinux2014"
  # Its own target folder: maturin's flags (--strip) are not part of cargo's unit hashes, so in the
  # folder of the other builds of the same target each would rebuild every dependency of the other.
  (cd python && for_target "$triple" env CARGO_TARGET_DIR="$(target_dir "$triple")/python" \
    maturin build --locked --profile dist --strip --zig \
    --compatibility manylinux2014 --target "$triple" --out "$2" --quiet)
}
# build_pgext ARCH: the PostgreSQL extension for ARCH (its own workspace and profile, release).
# bindgen reads PostgreSQL's headers (the host's: between x86_64 and aarch64, Debian's pg_config.h
# differs only in which CRC32C and popcount instructions it names, not in any type) with the
# target's C headers from Debian (the host's for x86_64, libc6-dev-arm64-cross's for aarch64):
# zig's glibc headers (which cargo-zigbuild hands bindgen) lack what postgres.h needs, and the
# bindings do not depend on the glibc version; zig still compiles the C shim and links.
build_pgext() {
  local triple c_headers
  triple="$(gnu_triple "$1")"
  case "$1" in
    x86_64) c_headers="-I/usr/include -I/usr/include/x86_64-linux-gnu" ;;
    aarch64) c_headers="-I/usr/aarch64-linux-gnu/include -I/usr/include" ;;
  esac
  bash ci/install/install-deps.sh pgext
  echo "==> cargo zigbuild --release --target $triple.$GLIBC (extensions/postgres)"
  PGRX_PG_CONFIG_PATH=/usr/lib/postgresql/15/bin/pg_config for_target "$triple" \
    env "BINDGEN_EXTRA_CLANG_ARGS_$triple=$c_headers" \
    cargo zigbuild --locked --release --target "$triple.$GLIBC" \
    --manifest-path extensions/postgres/Cargo.toml
}
if [ -n "$build_only" ]; then
  for arch in "${ARCHES[@]}"; do
    wants python && build_wheel "$arch" "$stage/wheels"
    wants pgext && build_pgext "$arch"
  done
  echo "==> built (IDFORGE_DIST_BUILD_ONLY: nothing packed or checked)"
  exit 0
fi

# server_tarball ARCH NAME BINARY: the server's tarball NAME.tar.gz around BINARY.
server_tarball() {
  local arch="$1" name="$2" dir="$stage/$2"
  install -d "$dir"
  ship "$3" "$dir/idforge" "$arch"
  install -m 644 packaging/server/idforge.toml packaging/server/idforge.service \
    README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$dir/"
  # The README links its docs/ pages, when there are any.
  [ ! -d docs ] || cp -r docs "$dir/docs"
  echo "==> server: $name.tar.gz"
  if [[ "$name" == *-musl ]]; then check_static "$dir/idforge" "$arch"; else check_glibc "$dir/idforge" "$arch"; fi
  check_size "$dir/idforge" "$MAX_SERVER"
  pack "$dir" "dist/$name.tar.gz"
}

c_tarball() {
  local arch="$1" name="idforge-c-$version-$1-linux-gnu" dir soname
  dir="$stage/$name"
  install -d "$dir/include" "$dir/lib/pkgconfig"
  install -m 644 include/idforge.h "$dir/include/"
  ship "$(out "$arch")/libidforge.so" "$dir/lib/libidforge.so.$version" "$arch"
  ln -s "libidforge.so.$version" "$dir/lib/libidforge.so.$major"
  ln -s "libidforge.so.$major" "$dir/lib/libidforge.so"
  # An archive keeps the symbols its users link against; std's debug info goes.
  install -m 644 "$(out "$arch")/libidforge.a" "$dir/lib/"
  "$(bin_tool "$arch" strip)" --strip-debug "$dir/lib/libidforge.a"
  # Relocatable: every path is relative to the .pc file.
  for pc in idforge idforge-static; do
    sed -e 's|@PREFIX@|${pcfiledir}/../..|' -e "s|@VERSION@|$version|" "packaging/c/$pc.pc.in" \
      >"$dir/lib/pkgconfig/$pc.pc"
  done
  install -m 644 CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$dir/"
  readme_for "$arch" packaging/c/README.md "$dir/README.md"
  soname="$(readelf -d "$dir/lib/libidforge.so.$version" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')"
  [ "$soname" = "libidforge.so.$major" ] || problems+=("libidforge.so ($arch) has soname '$soname', not libidforge.so.$major")
  echo "==> c: $name.tar.gz (soname $soname)"
  check_glibc "$dir/lib/libidforge.so.$version" "$arch"
  check_size "$dir/lib/libidforge.so.$version" "$MAX_C_SO"
  printf '    %-40s %9d bytes\n' libidforge.a "$(stat -c %s "$dir/lib/libidforge.a")"
  pack "$dir" "dist/$name.tar.gz"
}

for arch in "${ARCHES[@]}"; do
  wants server && server_tarball "$arch" "idforge-$version-$arch-linux" "$(out "$arch")/idforge"
  wants static && server_tarball "$arch" "idforge-$version-$arch-linux-musl" "$(out "$arch" musl)/idforge"
  wants c && c_tarball "$arch"
done
wants windows && windows_pack

# ---- Python: the abi3 wheels (manylinux2014) and the sdist ---------------------------------------
if wants python; then
  for arch in "${ARCHES[@]}"; do
    triple="$(gnu_triple "$arch")"
    build_wheel "$arch" "$PWD/dist"
    wheel="$(ls dist/idforge-"$version"-*"_$arch.whl")"
    rm -rf "$stage/wheel"
    python3 -m zipfile -e "$wheel" "$stage/wheel"
    for so in "$stage"/wheel/idforge/*.so; do check_glibc "$so" "$arch"; done
    check_size "$wheel" "$MAX_WHEEL"
    # auditwheel: the wheel's external symbols fit the manylinux2014 policy it is tagged with.
    shown="$(auditwheel show "$wheel")"
    echo "    auditwheel show: $(tr '\n' ' ' <<<"$shown" | cut -c1-300)"
    grep -q "manylinux_2_17_$arch" <<<"$shown" || problems+=("auditwheel: $wheel is not manylinux_2_17_$arch: $shown")
    case "$(basename "$wheel")" in
      *"manylinux2014_$arch"*) ;;
      *) problems+=("$(basename "$wheel") is not tagged manylinux2014_$arch") ;;
    esac
  done
  echo "==> python: maturin sdist"
  (cd python && SOURCE_DATE_EPOCH="$archive_epoch" maturin sdist --out ../dist >/dev/null)
fi

# ---- Node: the npm package with the addons inside -----------------------------------------------
if wants node; then
  node_version="$(node -p 'require("./node/package.json").version')"
  [ "$node_version" = "$version" ] || problems+=("node/package.json says $node_version, the workspace $version")
  dir="$stage/node"
  install -d "$dir"
  tar -C node -h --exclude=node_modules --exclude='*.node' --exclude='*.tgz' -cf - . | tar -C "$dir" -xf -
  # npm packs README.md by itself; CHANGELOG.md and the licences are in package.json's "files".
  install -m 644 CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$dir/"
  addons=()
  for arch in "${ARCHES[@]}"; do
    addon="idforge.linux-$(npm_platform "$arch")-gnu.node"
    ship "$(out "$arch")/libidforge_node.so" "$dir/$addon" "$arch"
    echo "==> node: $addon"
    check_glibc "$dir/$addon" "$arch"
    # The size target is an addon's download: compressed, as in the tarball.
    gzip -9nc "$dir/$addon" >"$stage/$addon.gz"
    check_size "$stage/$addon.gz" "$MAX_NPM"
    addons+=("$addon")
  done
  wants windows && windows_node_addon "$dir"
  echo "==> node: npm pack"
  tgz="$(cd "$dir" && npm pack --silent --pack-destination "$OLDPWD/dist")"
  printf '    %-40s %9d bytes\n' "$tgz" "$(stat -c %s "dist/$tgz")"
  packed="$(tar -tzf "dist/$tgz")"
  for addon in "${addons[@]}"; do
    grep -qx "package/$addon" <<<"$packed" || problems+=("$tgz lacks package/$addon")
  done
fi

# ---- PostgreSQL: the extension (build_pgext) -----------------------------------------------------
if wants pgext; then
  ext_version="$(sed -n "s/^default_version = '\(.*\)'$/\1/p" extensions/postgres/idforge.control)"
  [ "$ext_version" = "$version" ] || problems+=("idforge.control says $ext_version, the workspace $version")
  for arch in "${ARCHES[@]}"; do
    triple="$(gnu_triple "$arch")"
    build_pgext "$arch"
    name="idforge-postgres-$version-pg15-$arch-linux-gnu"
    dir="$stage/$name"
    install -d "$dir/lib" "$dir/share/extension"
    ship "$(target_dir "$triple")/$triple/release/libidforge_pg.so" "$dir/lib/idforge.so" "$arch"
    install -m 644 extensions/postgres/idforge.control extensions/postgres/sql/idforge--*.sql \
      "$dir/share/extension/"
    install -m 755 packaging/postgres/install.sh "$dir/"
    install -m 644 CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$dir/"
    readme_for "$arch" packaging/postgres/README.md "$dir/README.md"
    echo "==> pgext: $name.tar.gz"
    check_glibc "$dir/lib/idforge.so" "$arch"
    printf '    %-40s %9d bytes\n' idforge.so "$(stat -c %s "$dir/lib/idforge.so")"
    pack "$dir" "dist/$name.tar.gz"
  done
fi

# ---- JVM: one jar with the native libraries as JNA resources --------------------------------------
if wants jvm; then
  bash ci/install/install-deps.sh jvm
  kotlin_version=2.4.20 # as ci/steps/jvm.sh
  kotlin_home="${IDFORGE_CACHE:-$HOME/.cache/idforge}/kotlin/node_modules/kotlin-compiler"
  if [ "$(cat "$kotlin_home/.idforge-version" 2>/dev/null)" != "$kotlin_version" ]; then
    mkdir -p "$(dirname "$(dirname "$kotlin_home")")"
    npm install --silent --no-save --no-audit --no-fund --prefix "$(dirname "$(dirname "$kotlin_home")")" \
      "kotlin-compiler@$kotlin_version" >/dev/null
    echo "$kotlin_version" >"$kotlin_home/.idforge-version"
  fi
  bindgen="${UNIFFI_BINDGEN:-}"
  if [ -z "$bindgen" ]; then
    cargo build --locked -q --manifest-path bindings/uniffi/bindgen/Cargo.toml
    bindgen="$CARGO_TARGET_DIR/debug/uniffi-bindgen"
  fi
  dir="$stage/jvm"
  echo "==> jvm: uniffi-bindgen, kotlinc, jar"
  # Library mode: the bindings are generated from a library the jar carries (the first
  # architecture's: every one has the same interface).
  "$bindgen" generate --no-format --language kotlin --library "$(out "${ARCHES[0]}")/libidforge_uniffi.so" \
    --out-dir "$dir/gen" >/dev/null
  "$kotlin_home/bin/kotlinc" -nowarn -jvm-target 17 -cp /usr/share/java/jna.jar -d "$dir/classes" \
    "$dir/gen/dev/idforge/idforge_uniffi.kt" bindings/uniffi/kotlin/*.kt
  # JNA looks for a library it cannot find on the system in the class path, under its platform's
  # folder (linux-x86-64, linux-aarch64), and loads it from there.
  for arch in "${ARCHES[@]}"; do
    lib="$dir/classes/linux-$(jna_platform "$arch")/libidforge_uniffi.so"
    ship "$(out "$arch")/libidforge_uniffi.so" "$lib" "$arch"
    check_glibc "$lib" "$arch"
    printf '    %-40s %9d bytes\n' "linux-$(jna_platform "$arch")/libidforge_uniffi.so" "$(stat -c %s "$lib")"
  done
  install -D -m 644 README.md docs/jvm.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE -t "$dir/classes/META-INF/"
  jar --create --file "dist/idforge-jvm-$version.jar" --date "$(date -u -d "@$archive_epoch" +%Y-%m-%dT%H:%M:%SZ)" \
    -C "$dir/classes" .
  printf '    %-40s %9d bytes\n' "idforge-jvm-$version.jar" "$(stat -c %s "dist/idforge-jvm-$version.jar")"
  sed "s|@VERSION@|$version|" packaging/jvm/pom.xml >"dist/idforge-jvm-$version.pom" # JNA, kotlin-stdlib
  # Maven Central's companions (ci/release/maven-repo.sh): the Kotlin sources as compiled, and
  # the API pages (the guide and javap's public signatures: ci/dist/jvm-apidoc.py says why).
  mkdir -p "$dir/sources/dev/idforge" "$dir/javadoc"
  cp "$dir/gen/dev/idforge/idforge_uniffi.kt" bindings/uniffi/kotlin/*.kt "$dir/sources/dev/idforge/"
  python3 ci/dist/jvm-apidoc.py "dist/idforge-jvm-$version.jar" docs/jvm.md "$version" "$dir/javadoc"
  for kind in sources javadoc; do
    install -D -m 644 LICENSE-MIT LICENSE-APACHE -t "$dir/$kind/META-INF/"
    jar --create --file "dist/idforge-jvm-$version-$kind.jar" \
      --date "$(date -u -d "@$archive_epoch" +%Y-%m-%dT%H:%M:%SZ)" -C "$dir/$kind" .
  done
fi

(cd dist && sha256sum -- * >SHA256SUMS)
echo "==> dist/ ($version)"
(cd dist && ls -l -- *)
if [ "${#problems[@]}" -gt 0 ]; then
  printf 'error: %s\n' "${problems[@]}" >&2
  exit 1
fi
