#!/usr/bin/env bash
# macOS from source: clippy (cargo check and its lints, warnings as errors) of every crate of the
# workspace, libraries and binaries, for aarch64-apple-darwin and x86_64-apple-darwin, so that a
# Mac with Rust builds the sdist (pip install idforge), the crates (cargo add idforge), the Go
# binding's C library and the Node addon from source. Run by the dist step (ci/test.sh) and, ahead
# of it, by ci/prebuild.sh.
#
# What this machine can and cannot do (docs/install.md, "Platforms"): Debian's Rust and clippy
# (rustc-web, rust-web-clippy) build std for the targets from source (rustup cannot add targets
# here), and zig compiles the C of the build scripts (ring, SQLite) for macOS through
# cargo-zigbuild's wrapper. Nothing links: no macOS SDK (CoreFoundation, Security,
# SystemConfiguration) is reachable and no Mac runs the result, so no macOS binary is shipped.
# The PostgreSQL extension (a workspace of its own, built against a server's headers) is not
# checked for macOS.
#
#   ci/dist/macos-check.sh [TRIPLE...]     (default: both)
# Into $CARGO_TARGET_DIR/cross-win-mac, with the dist profile: the host's build scripts and proc
# macros are those the dist step's Windows artifacts use (ci/dist/dist.sh's target_dir).
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

# Debian's Rust first on PATH (as ci/dist/dist.sh's CROSS_BIN), with its clippy.
xbin="$CACHE/debian-rust/bin"
mkdir -p "$xbin"
for t in cargo rustc rustdoc cargo-clippy clippy-driver; do ln -sfn "/usr/bin/$t" "$xbin/$t"; done
triples=("$@")
[ "${#triples[@]}" -gt 0 ] || triples=(aarch64-apple-darwin x86_64-apple-darwin)
for triple in "${triples[@]}"; do
  echo "==> cargo clippy --workspace --target $triple -- -D warnings (Debian's Rust $(/usr/bin/rustc --version | cut -d' ' -f2), std from source)"
  # PYO3_CROSS_PYTHON_VERSION: the abi3 module needs no macOS Python to check against.
  env PATH="$xbin:$venv/bin:$PATH" RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_abort \
    CARGO_TARGET_DIR="$CARGO_TARGET_DIR/cross-win-mac" PYO3_CROSS_PYTHON_VERSION=3.9 \
    cargo-zigbuild clippy --locked --profile dist --target "$triple" --workspace -- -D warnings
done
echo "macos: every crate of the workspace passes clippy for ${triples[*]}"
