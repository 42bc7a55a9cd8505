#!/usr/bin/env bash
# The release command: every registry package from one version (the workspace's, in Cargo.toml),
# made from the artifacts of ci/dist/dist.sh, checked, and (with --publish) published in
# dependency order. A dry run by default: nothing leaves the machine. docs/release.md is the
# maintainer's checklist around it.
#
#   ci/release/release.sh [--publish] [--dist DIR] [--stage DIR] [REGISTRY...]
#       REGISTRY: crates pypi npm maven go (default: all, in that order)
#       --dist DIR    the artifacts (default: dist/)
#       --stage DIR   where the registry packages are made (default: a new temporary folder,
#                     kept and named at the end)
#
# Checks (every run): one version everywhere (Cargo.toml, node/package.json, include/idforge.h,
# the PostgreSQL control file, the artifacts' names, the server's `idforge --version`);
#   crates  `cargo publish --dry-run` of idforge-core, idforge, idforge-resp, idforge-store, idforge-server (each packaged and
#           built from its package, against the others as packaged)
#   pypi    `twine check --strict` of the wheels and the sdist
#   npm     the package split napi-rs's way (ci/release/npm-split.mjs), `npm publish --dry-run`
#           of each
#   maven   the Maven repository tree of the JVM jar (ci/release/maven-repo.sh: the pom's Central
#           fields, -sources and -javadoc jars, checksums, signatures verified) and the Central
#           bundle zip of it; a dry run without a key signs with a throwaway one
#   go      the module proxy files (ci/release/go-module.sh)
#
# Where --publish sends them (URLs and credentials from the environment; a missing one stops the
# release before anything is published):
#   crates  IDFORGE_CARGO_INDEX (a registry's index URL; unset: crates.io), CARGO_REGISTRY_TOKEN
#   pypi    IDFORGE_PYPI_URL (default https://upload.pypi.org/legacy/), TWINE_USERNAME
#           (default __token__), TWINE_PASSWORD
#   npm     IDFORGE_NPM_REGISTRY (default https://registry.npmjs.org/), IDFORGE_NPM_TOKEN
#   maven   IDFORGE_MAVEN_URL (file:// or a repository taking HTTP PUT; ci/release/maven-publish.sh),
#           IDFORGE_MAVEN_USER and IDFORGE_MAVEN_PASSWORD for http(s), IDFORGE_GPG_KEY and
#           IDFORGE_GPG_PASSPHRASE (the signing key; IDFORGE_GPG_THROWAWAY=1: a new one, for tests)
#   go      IDFORGE_GO_PROXY_DIR: the files of the module host (the folder served at the URL that
#           idforge.dev/idforge's go-import meta tag names with the `mod` protocol)
# A release publishes every platform: --publish refuses artifacts without the aarch64 or Windows ones unless
# IDFORGE_RELEASE_PARTIAL=1 (CI, when its cross lane was deferred).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo="$PWD"

publish=0 dist="$repo/dist" stage=""
registries=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --publish) publish=1 ;;
    --dist) dist="$(cd "$2" && pwd)"; shift ;;
    --stage) stage="$2"; shift ;;
    crates | pypi | npm | maven | go) registries+=("$1") ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ "${#registries[@]}" -gt 0 ] || registries=(crates pypi npm maven go)
stage="${stage:-$(mktemp -d -t idforge-release.XXXXXX)}"
wants() { [[ " ${registries[*]} " == *" $1 "* ]]; }

CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/target}"
# shellcheck source=ci/release/tools.sh
. ci/release/tools.sh

# ---- one version ---------------------------------------------------------------------------------
# The crates published, in order: the libraries the server stands on, then the server.
LIBS=(idforge-core idforge idforge-resp idforge-store)
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"
[ -n "$version" ] || { echo "error: no [workspace.package] version in Cargo.toml" >&2; exit 1; }
problems=()
same() { [ "$2" = "$version" ] || problems+=("$1 says '$2', Cargo.toml '$version'"); }
same node/package.json "$(node -p 'require("./node/package.json").version')"
same include/idforge.h "$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
same extensions/postgres/idforge.control "$(sed -n "s/^default_version = '\(.*\)'$/\1/p" extensions/postgres/idforge.control)"
for dep in "${LIBS[@]}"; do
  same "Cargo.toml's $dep dependency" "$(sed -n "s/^$dep = {.*version = \"\([^\"]*\)\".*/\1/p" Cargo.toml)"
done
server_tgz="$dist/idforge-$version-x86_64-linux.tar.gz"
if [ -f "$server_tgz" ]; then
  t="$(mktemp -d)"
  tar -xzf "$server_tgz" -C "$t"
  same "idforge --version" "$("$t"/*/idforge --version | awk '{print $2}')"
  rm -rf "$t"
else
  problems+=("no $server_tgz: build the artifacts first (ci/dist/dist.sh)")
fi
if [ "$publish" = 1 ] && [ "${IDFORGE_RELEASE_PARTIAL:-0}" != 1 ]; then
  for f in "idforge-c-$version-aarch64-linux-gnu.tar.gz" "idforge-c-$version-x86_64-windows-gnu.zip" \
    "idforge-$version-x86_64-windows.zip" "idforge-$version.tgz"; do
    [ -f "$dist/$f" ] || problems+=("no $dist/$f: a release carries every platform")
  done
  ls "$dist"/idforge-"$version"-*manylinux*aarch64*.whl >/dev/null 2>&1 ||
    problems+=("no aarch64 wheel in $dist: a release carries every platform")
fi
if [ "$publish" = 1 ]; then
  need() { [ -n "${!1:-}" ] || problems+=("--publish needs $1 in the environment"); }
  if wants crates; then need CARGO_REGISTRY_TOKEN; fi
  if wants pypi; then need TWINE_PASSWORD; fi
  if wants npm; then need IDFORGE_NPM_TOKEN; fi
  if wants maven; then
    need IDFORGE_MAVEN_URL
    [ "${IDFORGE_GPG_THROWAWAY:-}" = 1 ] || need IDFORGE_GPG_KEY
  fi
  if wants go; then need IDFORGE_GO_PROXY_DIR; fi
fi
if [ "${#problems[@]}" -gt 0 ]; then
  printf 'error: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "==> release $version ($([ "$publish" = 1 ] && echo publish || echo dry run)): ${registries[*]}"
rm -rf "$stage"
mkdir -p "$stage"

# ---- crates.io: the core, the runtime, the server's libraries, the server, in that order --------
CRATES=()
for c in "${LIBS[@]}" idforge-server; do CRATES+=(-p "$c"); done
if wants crates; then
  echo "==> crates: cargo publish --dry-run (${CRATES[*]})"
  # A dry run may be of a work tree with changes; a release is of a commit.
  dirty=()
  [ "$publish" = 1 ] || dirty=(--allow-dirty)
  # cargo verifies each crate against the others as just packaged, unpacked under
  # $CARGO_HOME/registry/src/-HASH/NAME-VERSION, and reuses a copy unpacked there before under
  # the same name and version: an earlier run's, older code. Those copies go first.
  cargo_home="${CARGO_HOME:-$HOME/.cargo}"
  for c in "${LIBS[@]}" idforge-server; do
    rm -rf "$cargo_home"/registry/src/-*/"$c-$version" "$cargo_home"/registry/cache/-*/"$c-$version.crate"
  done
  # What it compiled of them is reused the same way (a registry crate of one name, version and
  # source is not looked at again): the fingerprints of the builds from a registry source go
  # too, found by their dep-info, never the work tree's.
  target="${CARGO_TARGET_DIR:-target}"
  for d in "$target"/debug/deps/idforge-*.d "$target"/debug/deps/idforge_*-*.d; do
    [ -f "$d" ] && grep -q "/registry/src/-" "$d" || continue
    base="$(basename "$d" .d)"
    name="${base%-*}"
    rm -rf "$target/debug/.fingerprint/${name//_/-}-${base##*-}"
  done
  cargo publish --locked --dry-run "${dirty[@]}" "${CRATES[@]}"
  if [ "$publish" = 1 ] && [ -z "${IDFORGE_CARGO_INDEX:-}" ]; then
    # Verified by the dry run above: built once, not twice.
    echo "==> crates: cargo publish (crates.io)"
    cargo publish --locked --no-verify "${CRATES[@]}"
  elif [ "$publish" = 1 ]; then
    # Another registry: the crates' dependencies on each other must name it (unnamed, cargo
    # looks them up on crates.io), so they are published from a copy of the commit whose
    # workspace dependencies say `registry = "release"`.
    echo "==> crates: cargo publish to $IDFORGE_CARGO_INDEX"
    copy="$stage/crates-src"
    mkdir -p "$copy"
    git archive HEAD | tar -x -C "$copy"
    sed -i -E 's/^(idforge(-[a-z]+)? = \{ path = "[^"]*", version = "[^"]*") \}$/\1, registry = "release" }/' "$copy/Cargo.toml"
    [ "$(grep -c 'registry = "release"' "$copy/Cargo.toml")" = "${#LIBS[@]}" ] ||
      { echo "error: Cargo.toml's dependencies on ${LIBS[*]} are not where the release expects them" >&2; exit 1; }
    (
      cd "$copy"
      CARGO_REGISTRIES_RELEASE_INDEX="$IDFORGE_CARGO_INDEX" CARGO_REGISTRIES_RELEASE_TOKEN="$CARGO_REGISTRY_TOKEN" \
        cargo publish --locked --no-verify --registry release "${CRATES[@]}"
    )
    rm -rf "$copy"
  fi
fi

# ---- PyPI: the wheels and the sdist ------------------------------------------------------------
if wants pypi; then
  mkdir -p "$stage/pypi"
  cp "$dist"/idforge-"$version"-*.whl "$dist/idforge-$version.tar.gz" "$stage/pypi/"
  echo "==> pypi: twine check --strict"
  "$RELEASE_VENV/bin/twine" check --strict "$stage"/pypi/*
  if [ "$publish" = 1 ]; then
    echo "==> pypi: twine upload to ${IDFORGE_PYPI_URL:-https://upload.pypi.org/legacy/}"
    TWINE_USERNAME="${TWINE_USERNAME:-__token__}" "$RELEASE_VENV/bin/twine" upload --non-interactive --disable-progress-bar \
      --repository-url "${IDFORGE_PYPI_URL:-https://upload.pypi.org/legacy/}" "$stage"/pypi/*
  fi
fi

# ---- npm: the platform packages, then the package that names them ------------------------------
if wants npm; then
  unpacked="$stage/npm-unpacked"
  mkdir -p "$unpacked"
  tar -xzf "$dist/idforge-$version.tgz" -C "$unpacked" --strip-components=1
  node ci/release/npm-split.mjs "$unpacked" "$stage/npm" >"$stage/npm-packages"
  mapfile -t packages <"$stage/npm-packages"
  rm -rf "$unpacked"
  # Published in reverse: the platform packages first, so the main package never names a
  # version the registry lacks.
  npmrc="$stage/npmrc"
  registry="${IDFORGE_NPM_REGISTRY:-https://registry.npmjs.org/}"
  # npm reads the token from the environment: it is never written to a file.
  # shellcheck disable=SC2016
  printf '//%s:_authToken=${IDFORGE_NPM_TOKEN}\n' "$(sed -E 's#^https?://##; s#/*$#/#' <<<"$registry")" >"$npmrc"
  for ((i = ${#packages[@]} - 1; i >= 0; i--)); do
    p="${packages[$i]}"
    (
      cd "$stage/npm/$p"
      size="$(npm pack --dry-run --json 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const p=JSON.parse(s)[0];console.log(p.size+" bytes packed, "+p.entryCount+" files")})')"
      echo "==> npm: $p ($size)"
      IDFORGE_NPM_TOKEN="${IDFORGE_NPM_TOKEN:-dry-run}" npm publish --dry-run --userconfig "$npmrc" \
        --registry "$registry" --access public >/dev/null 2>&1 ||
        { echo "error: npm publish --dry-run failed for $p" >&2; npm publish --dry-run --userconfig "$npmrc" --registry "$registry" >&2; exit 1; }
      if [ "$publish" = 1 ]; then
        npm publish --userconfig "$npmrc" --registry "$registry" --access public --loglevel warn
      fi
    )
  done
fi

# ---- Maven: the JVM jar, its pom, sources and javadoc, signed --------------------------------
if wants maven; then
  echo "==> maven: the repository tree, signed and summed"
  # A dry run without a key still signs (with a key of its own), so the signing is checked too.
  if [ "$publish" = 0 ] && [ -z "${IDFORGE_GPG_KEY:-}" ]; then export IDFORGE_GPG_THROWAWAY=1; fi
  bash ci/release/maven-repo.sh "$dist" "$stage/maven/repository"
  # Maven Central's portal takes the tree as one zip (docs/release.md).
  python3 -c 'import os, sys, zipfile
root, out = sys.argv[1:3]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for d, _, names in sorted(os.walk(root)):
        for n in sorted(names):
            z.write(os.path.join(d, n), os.path.relpath(os.path.join(d, n), root))' \
    "$stage/maven/repository" "$stage/maven/central-bundle.zip"
  if [ "$publish" = 1 ]; then
    echo "==> maven: publish to $IDFORGE_MAVEN_URL"
    bash ci/release/maven-publish.sh "$stage/maven/repository" "$IDFORGE_MAVEN_URL"
  fi
fi

# ---- Go: the module, with the libraries it links --------------------------------------------------
if wants go; then
  echo "==> go: the module proxy files"
  bash ci/release/go-module.sh "$dist" "$stage/goproxy"
  if [ "$publish" = 1 ]; then
    # The host's list names every version published, not only this one.
    list="$(cd "$stage/goproxy" && find . -name list)"
    # The version's files first, the list last and by rename: a copy that fails halfway leaves
    # the host's list as it was, naming no version whose files are not all there.
    merged="$(sort -uV "$stage/goproxy/$list" "$IDFORGE_GO_PROXY_DIR/$list" 2>/dev/null || cat "$stage/goproxy/$list")"
    mkdir -p "$(dirname "$IDFORGE_GO_PROXY_DIR/$list")"
    find "$stage/goproxy/$(dirname "$list")" -type f ! -name list -exec cp -t "$IDFORGE_GO_PROXY_DIR/$(dirname "$list")/" {} +
    printf '%s\n' "$merged" >"$IDFORGE_GO_PROXY_DIR/$list.new"
    mv "$IDFORGE_GO_PROXY_DIR/$list.new" "$IDFORGE_GO_PROXY_DIR/$list"
    echo "    go: $(tr '\n' ' ' <"$IDFORGE_GO_PROXY_DIR/$list")in $IDFORGE_GO_PROXY_DIR"
  fi
fi
echo "==> release $version: done (the packages: $stage)"
