#!/usr/bin/env bash
# Builds the release artifacts into dist/ (git-ignored; emptied first), all of the workspace's
# version, for x86_64 Linux with glibc 2.17 or newer (linked by zig through cargo-zigbuild, or
# maturin --zig), stripped (the cargo profile `dist`, then strip(1)), and writes dist/SHA256SUMS:
#   server  idforge-VERSION-x86_64-linux.tar.gz: the idforge binary, an example idforge.toml and
#           a systemd unit (packaging/server/), the project's README.md (the server's manual)
#   c       idforge-c-VERSION-x86_64-linux-gnu.tar.gz: include/idforge.h, lib/libidforge.so*
#           (soname libidforge.so.MAJOR), lib/libidforge.a, relocatable lib/pkgconfig/idforge.pc
#           (shared) and idforge-static.pc (static), packaging/c/README.md
#   python  idforge-VERSION-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl, and the sdist
#   node    idforge-VERSION.tgz (npm pack): the package with the addon for linux-x64-gnu inside it,
#           as idforge.linux-x64-gnu.node, where native.js (napi-rs's loader) looks first
#   jvm     idforge-jvm-VERSION.jar: the Kotlin classes (uniffi-generated, and bindings/uniffi/kotlin)
#           and the native library as the JNA resource linux-x86-64/libidforge_uniffi.so; a Java
#           or Kotlin user adds only JNA (5) and the Kotlin stdlib. Compiled for Java 17. The
#           project's README.md (it has the JVM section) goes in META-INF/.
#   pgext   idforge-postgres-VERSION-pg15-x86_64-linux-gnu.tar.gz: the PostgreSQL 15 extension
#           (lib/idforge.so, share/extension/ control and SQL files) and an install.sh that puts
#           them where pg_config says (packaging/postgres/)
# Every artifact carries a README, CHANGELOG.md and both licences (the wheel: its README as the
# package description in METADATA, the licences in .dist-info/licenses, python/idforge/CHANGELOG.md).
# It fails when a shared object needs a glibc symbol newer than 2.17 or a size target is missed.
#
#   ci/dist/dist.sh [ARTIFACT...]     (default: all of them)
#
# Tools (zig from PyPI `ziglang`, cargo-zigbuild, maturin, auditwheel) are pip-installed, pinned,
# into a venv under ~/.cache/idforge (IDFORGE_DIST_VENV); binutils (objdump, strip) must be there,
# npm for node; for jvm, ci/install/install-deps.sh jvm runs and kotlin-compiler comes from npm as in
# ci/steps/jvm.sh; UNIFFI_BINDGEN names a built uniffi-bindgen (else bindings/uniffi/bindgen is built).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

ARTIFACTS=(server c python node jvm pgext)
TARGET=x86_64-unknown-linux-gnu
GLIBC=2.17
# Size targets (bytes): the server binary, the C shared library, the wheel. The C library was
# 3.74 MB before TLS clients (rustls, ring, and sqlx's TLS) added 1.45 MB.
MAX_SERVER=15000000
MAX_C_SO=6000000
MAX_WHEEL=3000000
MAX_NPM=3000000
PIP_TOOLS=("ziglang==0.17.1" "cargo-zigbuild==0.24.1" "maturin==1.16.0" "auditwheel==6.8.2")

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"

selected=("$@")
[ "$#" -gt 0 ] || selected=("${ARTIFACTS[@]}")
for a in "${selected[@]}"; do
  [[ " ${ARTIFACTS[*]} " == *" $a "* ]] || {
    echo "error: unknown artifact '$a' (artifacts: ${ARTIFACTS[*]})" >&2
    exit 2
  }
done
wants() { [[ " ${selected[*]} " == *" $1 "* ]]; }

tools=(objdump strip sha256sum)
wants node && tools+=(node npm)
wants jvm && tools+=(npm)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "error: $tool not found (ci/install/install-deps.sh dist)" >&2; exit 1; }
done

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
# Reproducible archives: every file dated at the last commit.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"

rm -rf dist
mkdir dist
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
problems=()

# ---- checks ------------------------------------------------------------------------------------
# newest_glibc FILE: the newest GLIBC_x.y that FILE's dynamic symbols need (empty: none).
newest_glibc() {
  objdump -T "$1" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV | tail -n 1
}
# check_glibc FILE: records a problem when FILE needs a glibc newer than $GLIBC.
check_glibc() {
  local newest
  newest="$(newest_glibc "$1")"
  printf '    %-40s needs GLIBC_%s at most\n' "$(basename "$1")" "${newest:-none}"
  if [ -n "$newest" ] && [ "$(printf '%s\n%s\n' "$newest" "$GLIBC" | sort -V | tail -n 1)" != "$GLIBC" ]; then
    problems+=("$(basename "$1") needs GLIBC_$newest (> $GLIBC)")
  fi
}
# check_size FILE MAX: records a problem when FILE is larger than MAX bytes.
check_size() {
  local size
  size="$(stat -c %s "$1")"
  printf '    %-40s %9d bytes (target <= %d)\n' "$(basename "$1")" "$size" "$2"
  [ "$size" -le "$2" ] || problems+=("$(basename "$1") is $size bytes (> $2)")
}
# ship SRC DEST: installs the binary SRC as DEST without its symbol table (the dynamic symbols stay).
ship() {
  install -D -m 755 "$1" "$2"
  strip --strip-unneeded "$2"
}
# pack DIR TARBALL: a reproducible .tar.gz of DIR (its name as the top folder).
pack() {
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    -C "$(dirname "$1")" -cf - "$(basename "$1")" | gzip -9n >"$2"
}

# ---- server, C and the Node addon: cargo-zigbuild ------------------------------------------------
# One cargo run per package: built together, cargo would unify their dependencies' features (the
# server's tokio and sqlx features would land in libidforge.so).
zigbuild() {
  echo "==> cargo zigbuild --profile dist --target $TARGET.$GLIBC -p $1"
  cargo zigbuild --locked --profile dist --target "$TARGET.$GLIBC" -p "$1"
}
wants server && zigbuild idforge-server
wants c && zigbuild idforge-c
wants node && zigbuild idforge-node
wants jvm && zigbuild idforge-uniffi
out="$CARGO_TARGET_DIR/$TARGET/dist"

if wants server; then
  name="idforge-$version-x86_64-linux"
  dir="$stage/$name"
  install -d "$dir"
  ship "$out/idforge" "$dir/idforge"
  install -m 644 packaging/server/idforge.toml packaging/server/idforge.service \
    README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$dir/"
  # The README links its docs/ pages, when there are any.
  [ ! -d docs ] || cp -r docs "$dir/docs"
  echo "==> server: $name.tar.gz"
  check_glibc "$dir/idforge"
  check_size "$dir/idforge" "$MAX_SERVER"
  pack "$dir" "dist/$name.tar.gz"
fi

if wants c; then
  name="idforge-c-$version-x86_64-linux-gnu"
  dir="$stage/$name"
  install -d "$dir/include" "$dir/lib/pkgconfig"
  install -m 644 include/idforge.h "$dir/include/"
  ship "$out/libidforge.so" "$dir/lib/libidforge.so.$version"
  ln -s "libidforge.so.$version" "$dir/lib/libidforge.so.$major"
  ln -s "libidforge.so.$major" "$dir/lib/libidforge.so"
  # An archive keeps the symbols its users link against; std's debug info goes.
  install -m 644 "$out/libidforge.a" "$dir/lib/"
  strip --strip-debug "$dir/lib/libidforge.a"
  # Relocatable: every path is relative to the .pc file.
  for pc in idforge idforge-static; do
    sed -e 's|@PREFIX@|${pcfiledir}/../..|' -e "s|@VERSION@|$version|" "packaging/c/$pc.pc.in" \
      >"$dir/lib/pkgconfig/$pc.pc"
  done
  install -m 644 packaging/c/README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$dir/"
  soname="$(objdump -p "$dir/lib/libidforge.so.$version" | awk '$1 == "SONAME" { print $2 }')"
  [ "$soname" = "libidforge.so.$major" ] || problems+=("libidforge.so has soname '$soname', not libidforge.so.$major")
  echo "==> c: $name.tar.gz (soname $soname)"
  check_glibc "$dir/lib/libidforge.so.$version"
  check_size "$dir/lib/libidforge.so.$version" "$MAX_C_SO"
  printf '    %-40s %9d bytes\n' libidforge.a "$(stat -c %s "$dir/lib/libidforge.a")"
  pack "$dir" "dist/$name.tar.gz"
fi

# ---- Python: the abi3 wheel (manylinux2014) and the sdist ----------------------------------------
if wants python; then
  echo "==> python: maturin build --zig --compatibility manylinux2014, maturin sdist"
  (cd python && maturin build --locked --profile dist --strip --zig --compatibility manylinux2014 \
    --target "$TARGET" --out ../dist --quiet)
  (cd python && maturin sdist --out ../dist >/dev/null)
  wheel="$(ls dist/idforge-"$version"-*.whl)"
  python3 -m zipfile -e "$wheel" "$stage/wheel"
  for so in "$stage"/wheel/idforge/*.so; do check_glibc "$so"; done
  check_size "$wheel" "$MAX_WHEEL"
  # auditwheel: the wheel's external symbols fit the manylinux2014 policy it is tagged with.
  shown="$(auditwheel show "$wheel")"
  echo "    auditwheel show: $(tr '\n' ' ' <<<"$shown" | cut -c1-300)"
  grep -q 'manylinux_2_17_x86_64' <<<"$shown" || problems+=("auditwheel: $wheel is not manylinux_2_17: $shown")
  case "$(basename "$wheel")" in
    *manylinux2014_x86_64*) ;;
    *) problems+=("$(basename "$wheel") is not tagged manylinux2014") ;;
  esac
fi

# ---- Node: the npm package with the addon inside ------------------------------------------------
# One platform is built, so its addon goes in the main package: `npm install idforge-VERSION.tgz`
# needs no platform package (napi-rs's optionalDependencies scheme pays off with several).
if wants node; then
  node_version="$(node -p 'require("./node/package.json").version')"
  [ "$node_version" = "$version" ] || problems+=("node/package.json says $node_version, the workspace $version")
  dir="$stage/node"
  install -d "$dir"
  tar -C node -h --exclude=node_modules --exclude='*.node' --exclude='*.tgz' -cf - . | tar -C "$dir" -xf -
  # npm packs README.md by itself; CHANGELOG.md and the licences are in package.json's "files".
  install -m 644 CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$dir/"
  ship "$out/libidforge_node.so" "$dir/idforge.linux-x64-gnu.node"
  echo "==> node: npm pack"
  check_glibc "$dir/idforge.linux-x64-gnu.node"
  tgz="$(cd "$dir" && npm pack --silent --pack-destination "$OLDPWD/dist")"
  check_size "dist/$tgz" "$MAX_NPM"
  grep -qx 'package/idforge.linux-x64-gnu.node' <<<"$(tar -tzf "dist/$tgz")" ||
    problems+=("$tgz lacks package/idforge.linux-x64-gnu.node")
fi

# ---- PostgreSQL: the extension -------------------------------------------------------------------
# Its own workspace and profile (release). bindgen reads PostgreSQL's headers with the host's C
# headers: zig's glibc headers (which cargo-zigbuild hands bindgen) lack what postgres.h needs,
# and the bindings do not depend on the glibc version; zig still compiles the C shim and links.
if wants pgext; then
  bash ci/install/install-deps.sh pgext
  pg_config=/usr/lib/postgresql/15/bin/pg_config
  ext_version="$(sed -n "s/^default_version = '\(.*\)'$/\1/p" extensions/postgres/idforge.control)"
  [ "$ext_version" = "$version" ] || problems+=("idforge.control says $ext_version, the workspace $version")
  echo "==> cargo zigbuild --release --target $TARGET.$GLIBC (extensions/postgres)"
  PGRX_PG_CONFIG_PATH="$pg_config" \
    env "BINDGEN_EXTRA_CLANG_ARGS_$TARGET=-I/usr/include -I/usr/include/x86_64-linux-gnu" \
    cargo zigbuild --locked --release --target "$TARGET.$GLIBC" \
    --manifest-path extensions/postgres/Cargo.toml
  name="idforge-postgres-$version-pg15-x86_64-linux-gnu"
  dir="$stage/$name"
  install -d "$dir/lib" "$dir/share/extension"
  ship "$CARGO_TARGET_DIR/$TARGET/release/libidforge_pg.so" "$dir/lib/idforge.so"
  install -m 644 extensions/postgres/idforge.control extensions/postgres/sql/idforge--*.sql \
    "$dir/share/extension/"
  install -m 755 packaging/postgres/install.sh "$dir/"
  install -m 644 packaging/postgres/README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$dir/"
  echo "==> pgext: $name.tar.gz"
  check_glibc "$dir/lib/idforge.so"
  printf '    %-40s %9d bytes\n' idforge.so "$(stat -c %s "$dir/lib/idforge.so")"
  pack "$dir" "dist/$name.tar.gz"
fi

# ---- JVM: one jar with the native library as a JNA resource ---------------------------------------
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
  # Library mode: the bindings are generated from the very library the jar carries.
  "$bindgen" generate --no-format --language kotlin --library "$out/libidforge_uniffi.so" \
    --out-dir "$dir/gen" >/dev/null
  "$kotlin_home/bin/kotlinc" -nowarn -jvm-target 17 -cp /usr/share/java/jna.jar -d "$dir/classes" \
    "$dir/gen/dev/idforge/idforge_uniffi.kt" bindings/uniffi/kotlin/*.kt
  # JNA looks for a library it cannot find on the system in the class path, under its platform's
  # folder, and loads it from there.
  ship "$out/libidforge_uniffi.so" "$dir/classes/linux-x86-64/libidforge_uniffi.so"
  install -D -m 644 README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE -t "$dir/classes/META-INF/"
  check_glibc "$dir/classes/linux-x86-64/libidforge_uniffi.so"
  printf '    %-40s %9d bytes\n' libidforge_uniffi.so "$(stat -c %s "$dir/classes/linux-x86-64/libidforge_uniffi.so")"
  jar --create --file "dist/idforge-jvm-$version.jar" --date "$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)" \
    -C "$dir/classes" .
  printf '    %-40s %9d bytes\n' "idforge-jvm-$version.jar" "$(stat -c %s "dist/idforge-jvm-$version.jar")"
  sed "s|@VERSION@|$version|" packaging/jvm/pom.xml >"dist/idforge-jvm-$version.pom" # JNA, kotlin-stdlib
fi

(cd dist && sha256sum -- * >SHA256SUMS)
echo "==> dist/ ($version)"
(cd dist && ls -l -- *)
if [ "${#problems[@]}" -gt 0 ]; then
  printf 'error: %s\n' "${problems[@]}" >&2
  exit 1
fi
