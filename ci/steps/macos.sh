#!/usr/bin/env bash
# macOS from source: `cargo check` of every crate of the workspace (libraries and binaries) for
# aarch64-apple-darwin and x86_64-apple-darwin, so that a Mac with Rust builds the sdist (pip
# install idforge), the crates (cargo add idforge), the Go binding's C library and the Node addon
# from source.
#
# What this machine can and cannot do (docs/install.md, "Platforms"): Debian's Rust builds std
# for the targets from source (rustup cannot add targets here), and zig compiles the C of the
# build scripts (ring, SQLite) for macOS through cargo-zigbuild's wrapper. Nothing links: no
# macOS SDK (CoreFoundation, Security, SystemConfiguration) is reachable, and no Mac runs the
# result, so no macOS binary is shipped. clippy is not run: Debian's Rust has no clippy, and
# rustup's has no std source to build.
#
#   ci/steps/macos.sh [TRIPLE...]     (default: both)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/target}"
bash ci/install/install-deps.sh cross

# zig and cargo-zigbuild: the dist step's tools venv (ci/dist/dist.sh pins them).
venv="${IDFORGE_DIST_VENV:-$CACHE/dist-venv}"
if ! [ -x "$venv/bin/cargo-zigbuild" ]; then
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  pins="$(sed -n 's/^PIP_TOOLS=(\(.*\))$/\1/p' ci/dist/dist.sh | tr -d '"')"
  # shellcheck disable=SC2086
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $pins
fi

tdir="$CARGO_TARGET_DIR/macos"
xbin="$tdir/bin"
mkdir -p "$xbin"
for t in cargo rustc rustdoc; do ln -sfn "/usr/bin/$t" "$xbin/$t"; done
triples=("$@")
[ "${#triples[@]}" -gt 0 ] || triples=(aarch64-apple-darwin x86_64-apple-darwin)
for triple in "${triples[@]}"; do
  echo "--- cargo check --workspace --target $triple (libraries and binaries; Debian's Rust, std from source)"
  # PYO3_CROSS_PYTHON_VERSION: the abi3 module needs no macOS Python to check against.
  env PATH="$xbin:$venv/bin:$PATH" RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_abort \
    CARGO_TARGET_DIR="$tdir" PYO3_CROSS_PYTHON_VERSION=3.9 \
    cargo-zigbuild check --locked --target "$triple" --workspace
done
echo "macos: every crate checks for ${triples[*]}"
