# Sourced by ci/test.sh and by every step script of ci/steps/: the helpers the steps share.
# Safe to source more than once. From the repository root (the step scripts cd there first).
#
# What ci/test.sh exports for the steps (each has a default, so a step script also runs alone):
#   IDFORGE_CI_NOTES     a folder for what a step tells the summary (FILE named after the step)
#   IDFORGE_CI_STEP      the step running
#   IDFORGE_CI_STARTED   when the run began (epoch seconds); IDFORGE_CI_MINUTES its budget
#   IDFORGE_PREBUILD_PID the dist prebuild's session (ci/prebuild.sh), when one runs
#   IDFORGE_REGISTRIES_DIR  where registries_up keeps the local registries of this run

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-auto}"
export IDFORGE_CI_MINUTES="${IDFORGE_CI_MINUTES:-75}"
export IDFORGE_CI_STARTED="${IDFORGE_CI_STARTED:-$(date +%s)}"

# disk_free_gb: the gigabytes free where the builds go (the summary prints it after each step: a
# full disk fails a build halfway, with a message about a temp dir).
disk_free_gb() {
  mkdir -p "$CARGO_TARGET_DIR"
  df -Pk "$CARGO_TARGET_DIR" | awk 'NR == 2 { printf "%.1f", $4 / 1048576 }'
}

# A step run alone gets a notes folder of its own (removed with the machine's temp files).
if [ -z "${IDFORGE_CI_NOTES:-}" ]; then
  IDFORGE_CI_NOTES="$(mktemp -d)"
  export IDFORGE_CI_NOTES
fi

# In a step script run by ci/test.sh: the command that failed goes into the summary (CI shows
# only a part of the output).
if [ -n "${IDFORGE_CI_STEP:-}" ]; then
  set -eE
  trap '[ -f "$IDFORGE_CI_NOTES/$IDFORGE_CI_STEP.at" ] || echo "at: ${BASH_COMMAND:0:160} (${BASH_SOURCE[0]}, line $LINENO)" >"$IDFORGE_CI_NOTES/$IDFORGE_CI_STEP.at"' ERR
fi

# note TEXT: what this step tells the summary beside its result.
note() { echo "$*" >"$IDFORGE_CI_NOTES/${IDFORGE_CI_STEP:-step}"; }

# ci_minutes_left: the whole minutes left of the run's budget (9999 without one).
ci_minutes_left() {
  if [ "$IDFORGE_CI_MINUTES" -eq 0 ]; then
    echo 9999
  else
    echo $((IDFORGE_CI_MINUTES - ($(date +%s) - IDFORGE_CI_STARTED) / 60))
  fi
}

ensure_cargo() {
  if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
    # shellcheck source=/dev/null
    . "$HOME/.cargo/env"
  fi
  command -v cargo >/dev/null 2>&1 || {
    echo "error: cargo not found; install Rust with rustup (https://rustup.rs)" >&2
    return 1
  }
}

# ensure_rust_component NAME...: `rustup component add` for the components not yet installed
# (without rustup, the toolchain is assumed to ship them).
ensure_rust_component() {
  command -v rustup >/dev/null 2>&1 || return 0
  local installed missing=() c
  installed=$(rustup component list --installed)
  for c in "$@"; do
    grep -q "^$c" <<<"$installed" || missing+=("$c")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "    installing rust components: ${missing[*]}"
    rustup component add --quiet "${missing[@]}"
  fi
}

# ensure_node: node and npm on PATH, installed when missing.
ensure_node() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || bash ci/install/install-deps.sh node
}

# binding_debug: the steps that test a language's binding (ctest, go, python, node) build it in
# the debug profile, as `cargo test` and the server's tests do: their tests assert behaviour, not
# speed, and a release build of their own compiled every dependency once more (cold, about 250
# units at opt-level 3, beside the dist profile's). What users get is tested as well: the dist
# step runs the C, Python, Node and Go checks on dist/'s release artifacts (ci/dist/dist-test.sh).
binding_debug() {
  # install-c.sh (the C examples, Go's library) and maturin's PEP 517 backend (pip wheel, the
  # sdist's install) read these.
  export IDFORGE_C_PROFILE=debug MATURIN_PEP517_ARGS="--profile dev"
}

# without_prebuild CMD...: CMD with the dist prebuild (ci/prebuild.sh) paused (the hostile
# clients' check that a real AUTH is answered within 500 ms under a flood of argon2 work failed
# once beside a build, and a stripes test twice).
without_prebuild() {
  local rc=0 pid="${IDFORGE_PREBUILD_PID:-}"
  [ -z "$pid" ] || kill -STOP -- "-$pid" 2>/dev/null || true
  "$@" || rc=$?
  [ -z "$pid" ] || kill -CONT -- "-$pid" 2>/dev/null || true
  return "$rc"
}

# dist_version: the version the artifacts carry.
dist_version() {
  sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h
}

# deferred LANE: the dist step deferred LANE (its prebuild ran out of the run's time).
deferred() { [[ " $(cat "$IDFORGE_CI_NOTES/deferred" 2>/dev/null) " == *" $1 "* ]]; }

# skip_when_deferred LANE WHAT: ends the step, passed with a note, when the dist step deferred
# LANE (WHAT: what this run then leaves out).
skip_when_deferred() {
  if deferred "$1"; then
    note "deferred with the dist step's $1 lane: $2 in this run"
    exit 0
  fi
}

# ensure_dist: dist/'s artifacts of this checkout, built first when missing (as when a step runs
# alone).
ensure_dist() {
  if [ ! -f "dist/idforge-$(dist_version)-x86_64-linux.tar.gz" ]; then
    bash ci/install/install-deps.sh dist
    ensure_node
    CARGO_TARGET_DIR="$CARGO_TARGET_DIR/artifacts" bash ci/dist/dist.sh
  fi
}

# registries_up: local registries on 127.0.0.1 with dist/ published to them
# (ci/release/local-release.sh), once per run (the registry step, else the docs step); their
# variables exported. ci/test.sh stops them by PID at exit.
registries_up() {
  local dir="${IDFORGE_REGISTRIES_DIR:?registries_up needs IDFORGE_REGISTRIES_DIR (set by ci/test.sh)}"
  if [ ! -f "$dir/env" ]; then
    bash ci/release/local-release.sh "$dir/run" >"$dir/env.new"
    mv "$dir/env.new" "$dir/env"
  fi
  # shellcheck source=/dev/null
  . "$dir/env"
}
