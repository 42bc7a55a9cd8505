#!/usr/bin/env bash
# The one test command of idforge: `ci/test.sh` runs every step; `ci/test.sh clippy test` runs only
# the named steps (in the table's order). Run from anywhere inside the repository.
#
# Each step is a script (the table below); what it runs is in its header. Every selected step runs
# even when an earlier one failed; a summary follows, then the last lines of each failed step
# (IDFORGE_CI_TAIL, default 40), and the exit status is non-zero if any step failed. A step that
# cannot run here (loom without core/tests/loom.rs, chaos and ops without root) is reported as
# skipped. The helpers the steps share are ci/lib.sh; the build scheduling (the
# dist step's builds in the background) is ci/prebuild.sh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The steps, in the order they run.
#   services: ci/services.sh's servers (idforge serve, Redis, PostgreSQL, MariaDB, etcd on
#   127.0.0.1) are started once before the first such step and stopped by PID at exit; their
#   tests of the segment sources must then run (IDFORGE_REQUIRE_SERVICES).
# step       services  script                     what it checks
STEP_TABLE='
fmt          -         ci/steps/fmt.sh            rustfmt of every crate
generated    -         ci/gen/check-generated.sh  committed generated files (header, native.d.ts, error lists, stubs) match
clippy       -         ci/steps/clippy.sh         clippy -D warnings, every crate and target
msrv         -         ci/steps/msrv.sh           no dependency needs a Rust newer than rust-version
test         services  ci/steps/rust-tests.sh     cargo test --workspace; the optional Rust features; examples/rust-sqlx
server       services  ci/steps/server.sh         the server process tests, its clients, crash, failover, hostile and HTTP harnesses
chaos        -         ci/steps/chaos.sh          the partition harness in network namespaces (root)
pgext        -         ci/steps/pg-extension.sh   the PostgreSQL extension: build, install, its suite
ctest        services  ci/steps/ctest.sh          C tests (shared, static, C++, valgrind, ASan) and examples/c
python       services  ci/steps/python.sh         the Python package: wheel, suite on three CPythons, stubs, sdist without speed tricks
node         services  ci/steps/node.sh           the npm package: addon, suite, tsc, the packed tarball
jvm          services  ci/steps/jvm.sh            Kotlin and Java through uniffi
go           services  ci/steps/go.sh             the Go binding: vet, race tests, static link, database/sql
loom         -         ci/steps/loom.sh           loom models of idforge-core
nostd        -         ci/steps/nostd.sh          idforge-core in a no_std, no-alloc staticlib
fuzz         -         ci/steps/fuzz.sh           the libFuzzer targets (FUZZ_SECONDS each)
doc          -         ci/steps/doc.sh            rustdoc -D warnings
dist         services  ci/steps/dist.sh           the release artifacts in dist/, tested as users get them (x86_64, aarch64, static)
macos        -         ci/steps/macos.sh          clippy of every crate for both Apple targets
windows      services  ci/steps/windows.sh        the Windows artifacts under Wine
registry     -         ci/steps/registry.sh       publish to local registries, install by name
ops          -         ci/steps/ops.sh            rules, image, containers, Prometheus, dashboard, manifests (root)
docs         -         ci/steps/docs.sh           every code block of the documents, run as written
'

# shellcheck source=ci/lib.sh
. ci/lib.sh

STEPS=()
declare -A STEP_SCRIPT STEP_SERVICES STEP_WHAT
while read -r name services script what; do
  [ -n "$name" ] || continue
  STEPS+=("$name")
  STEP_SCRIPT[$name]=$script
  STEP_SERVICES[$name]=$services
  STEP_WHAT[$name]=$what
done <<<"$STEP_TABLE"

usage() {
  cat <<EOF
usage: ci/test.sh [STEP...]
       ci/test.sh --soak N STEP...  (each step once, then N more times with every core kept busy;
                                     each failure's output is kept and shown)
       ci/test.sh --help STEP   (what a step runs: its script's header)

Runs the named steps, or all of them, in this order:
EOF
  local s
  for s in "${STEPS[@]}"; do
    printf '  %-10s %s\n' "$s" "${STEP_WHAT[$s]}"
  done
  cat <<EOF
Target dir: \$CARGO_TARGET_DIR (default \$HOME/.cache/idforge/target; now $CARGO_TARGET_DIR).
When dist runs with other steps, its builds start in the background at nice 19 as the run begins
(paused during the test step and server/tests/harness/hostile.py); IDFORGE_NO_PREBUILD=1 keeps them in the
dist step. Their lanes, in order: the host's (x86_64 Linux), windows (the Windows artifacts),
macos (the clippy run of the macos step) and cross (the musl servers and the aarch64 artifacts).
IDFORGE_CI_MINUTES (default 75; 0: none) is the run's budget: when the dist step finds the host's
lane built but not all the others (a cold cache: the later lanes compile std and every dependency
again) and less than 15 minutes of it left (18 once the windows lane is built), the lanes not yet
built are stopped, their progress kept in the cache, and the steps test what was built (the
x86_64 artifacts at least), saying in the summary what was deferred.
Before each step, ci/slowdown.py measures how much slower than idle the machine runs (wall over
CPU time of a busy loop) into IDFORGE_TEST_SLOWDOWN, which the tests' few time bounds scale by
(testkit's scaled); set it yourself to keep one value for every step.
Each step's summary line says the disk left; below IDFORGE_CI_MIN_DISK_GB (default 6) before a
step, the incremental caches are removed first. .ci/run turns incremental compilation off.
EOF
}

# step_help STEP: the header comment of STEP's script.
step_help() {
  awk 'NR == 1 && /^#!/ { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "${STEP_SCRIPT[$1]}"
}

# skip_reason STEP: prints why STEP cannot run in this tree (nothing when it can).
skip_reason() {
  case "$1" in
    loom) [ -f core/tests/loom.rs ] || echo "core/tests/loom.rs does not exist: no loom models to run" ;;
    chaos) [ "$(id -u)" -eq 0 ] || echo "needs root for network namespaces and iptables" ;;
    ops) [ "$(id -u)" -eq 0 ] || echo "needs root for rootful podman" ;;
  esac
}

# ---- what runs at exit -------------------------------------------------------------------------

# What a step tells the summary beside its result (a file per step; ci/lib.sh's `note`).
IDFORGE_CI_NOTES="$(mktemp -d)"
export IDFORGE_CI_NOTES
# The local registries of the registry and docs steps (ci/lib.sh's registries_up).
IDFORGE_REGISTRIES_DIR="$(mktemp -d)"
export IDFORGE_REGISTRIES_DIR
# What runs at exit (the registries' and services' stop, the dist prebuild's kill), in order.
at_exit=('rm -rf "$IDFORGE_CI_NOTES"'
  'bash ci/release/registries.sh stop "$IDFORGE_REGISTRIES_DIR/run/reg"; rm -rf "$IDFORGE_REGISTRIES_DIR"')
run_at_exit() {
  local c
  for c in "${at_exit[@]}"; do eval "$c" || true; done
}
trap run_at_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck source=ci/prebuild.sh
. ci/prebuild.sh

start_services() {
  bash ci/install/install-deps.sh services etcd faketime
  cargo build -p idforge-server --bin idforge --locked
  services_dir="$(mktemp -d)"
  at_exit+=('bash ci/services.sh stop "$services_dir"; rm -rf "$services_dir"')
  IDFORGE_BIN="$CARGO_TARGET_DIR/debug/idforge" bash ci/services.sh start "$services_dir" \
    >"$services_dir/env"
  # shellcheck source=/dev/null
  . "$services_dir/env"
  export IDFORGE_REQUIRE_SERVICES=1
  # Tests that must stop a server (a lost worker lease) start their own from this binary.
  export IDFORGE_BIN="$CARGO_TARGET_DIR/debug/idforge"
}

# children_cpu: sets $cpu to the user + system seconds of this shell's finished children (bash's
# `times`; not in a $(...) subshell, whose `times` counts only its own), so each step's summary
# line says how much CPU its commands took beside how long they ran (the background dist builds
# count in the step that waits for them).
children_cpu() {
  times >"$IDFORGE_CI_NOTES/times"
  cpu=$(python3 -c 'import re,sys; print(round(sum(float(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", sys.argv[1]))))' "$(tail -1 "$IDFORGE_CI_NOTES/times")")
}

# run_step STEP [LABEL]: runs STEP's script, its output copied and timed to
# $IDFORGE_CI_NOTES/LABEL.log (LABEL: STEP), and adds its line to `results` (and LABEL to
# `failed_steps` when it failed).
run_step() {
  local step=$1 label=${2:-$1} reason free start cpu_start rc took note
  echo
  echo "==> $label (${STEP_SCRIPT[$step]})"
  reason=$(skip_reason "$step")
  if [ -n "$reason" ]; then
    echo "    skipped: $reason"
    results+=("skipped $label ($reason)")
    return 0
  fi
  free=$(disk_free_gb)
  if [ "${free%.*}" -lt "${IDFORGE_CI_MIN_DISK_GB:-6}" ]; then
    # Builds that run out of disk fail halfway with messages about temp dirs: say why first, and
    # give back what only speeds up rebuilds.
    echo "    warning: ${free}G free in $CARGO_TARGET_DIR; removing incremental caches"
    rm -rf "$CARGO_TARGET_DIR"/*/incremental "$CARGO_TARGET_DIR"/*/*/incremental
    echo "    now $(disk_free_gb)G free"
  fi
  rm -f "$IDFORGE_CI_NOTES/$step" "$IDFORGE_CI_NOTES/$step.at"
  # The machine's slowness now (other steps' builds, a soak's load), for the time bounds the
  # tests keep (testkit's `scaled`); a value given from outside stays.
  if [ -z "${IDFORGE_SLOWDOWN_FIXED:-}" ]; then
    IDFORGE_TEST_SLOWDOWN="$(python3 ci/slowdown.py)"
    export IDFORGE_TEST_SLOWDOWN
  fi
  echo "    slowdown ${IDFORGE_TEST_SLOWDOWN:-1} (ci/slowdown.py: wall over CPU time of a busy loop)"
  start=$SECONDS
  children_cpu
  cpu_start=$cpu
  rc=0
  # A copy of the output, timed (ci/steplog.py), for the failed step's tail and the slowest
  # phases after the summary. A process substitution, not a pipe: the step's exit status is its
  # own, and a server it left running on the same stdout cannot hold the run open.
  IDFORGE_CI_STEP="$step" bash "${STEP_SCRIPT[$step]}" \
    > >(python3 ci/steplog.py tee "$IDFORGE_CI_NOTES/$label.log") 2>&1 || rc=$?
  children_cpu
  took="$((SECONDS - start))s, cpu $((cpu - cpu_start))s, disk free $(disk_free_gb)G"
  note=""
  [ ! -f "$IDFORGE_CI_NOTES/$step" ] || note="; $(cat "$IDFORGE_CI_NOTES/$step")"
  if [ "$rc" -eq 0 ]; then
    results+=("ok      $label ($took$note)")
  else
    [ -f "$IDFORGE_CI_NOTES/$step.at" ] || echo "at: ${STEP_SCRIPT[$step]}" >"$IDFORGE_CI_NOTES/$step.at"
    note="$note; $(cat "$IDFORGE_CI_NOTES/$step.at")"
    results+=("FAILED  $label ($took, exit $rc$note)")
    failed_steps+=("$label")
  fi
  ran_labels+=("$label")
}

# load_start: keeps every core busy (one spinning process per core, at the tests' own priority)
# until load_stop, as a loaded CI machine would (the dist builds beside the tests); stopped by
# PID at exit too.
load_pids=()
load_start() {
  local i
  for ((i = 0; i < $(nproc); i++)); do
    yes >/dev/null &
    load_pids+=("$!")
  done
  at_exit+=('load_stop')
}
load_stop() {
  [ "${#load_pids[@]}" -eq 0 ] || kill "${load_pids[@]}" 2>/dev/null || true
  load_pids=()
}

# ---- main ------------------------------------------------------------------------------------

# IDFORGE_TEST_SLOWDOWN given by the caller: kept for every step (else measured before each).
[ -z "${IDFORGE_TEST_SLOWDOWN:-}" ] || IDFORGE_SLOWDOWN_FIXED=1

selected=()
soak=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    -h | --help)
      if [ -n "${2:-}" ] && [ -n "${STEP_SCRIPT[$2]:-}" ]; then
        step_help "$2"
      else
        usage
      fi
      exit 0
      ;;
    --soak)
      soak=${2:-}
      [[ "$soak" =~ ^[1-9][0-9]*$ ]] || { echo "error: --soak takes a count of runs (N >= 1)" >&2; exit 2; }
      shift
      ;;
    *)
      if [ -z "${STEP_SCRIPT[$1]:-}" ]; then
        echo "error: unknown step '$1'" >&2
        usage >&2
        exit 2
      fi
      selected+=("$1")
      ;;
  esac
  shift
done
if [ "$soak" -gt 0 ] && [ "${#selected[@]}" -eq 0 ]; then
  echo "error: --soak N names its steps (ci/test.sh --soak 5 server node)" >&2
  exit 2
fi
[ "${#selected[@]}" -gt 0 ] || selected=("${STEPS[@]}")

ensure_cargo

# Not when dist is the only step (nothing would run beside it), nor in a soak (its builds are
# done by the first, unloaded round).
if [[ " ${selected[*]} " == *" dist "* ]] && [ "${#selected[@]}" -gt 1 ] && [ -z "${IDFORGE_NO_PREBUILD:-}" ] &&
  [ "$soak" -eq 0 ]; then
  start_dist_prebuild
fi

for step in "${selected[@]}"; do
  if [ "${STEP_SERVICES[$step]}" = services ]; then
    echo "==> services (ci/services.sh: idforge serve, Redis, PostgreSQL, MariaDB on 127.0.0.1)"
    start_services
    break
  fi
done

results=()
failed_steps=()
ran_labels=()
in_order=()
for step in "${STEPS[@]}"; do
  [[ " ${selected[*]} " == *" $step "* ]] && in_order+=("$step")
done
if [ "$soak" -eq 0 ]; then
  for step in "${in_order[@]}"; do
    run_step "$step"
  done
else
  # A soak: each step once as it is (its builds), then N rounds of the same scripts with every
  # core kept busy, which find nothing left to build and so run their tests under load.
  for step in "${in_order[@]}"; do
    run_step "$step" "$step.build"
  done
  if [ "${#failed_steps[@]}" -eq 0 ]; then
    load_start
    echo "==> soak: ${in_order[*]}, $soak rounds, $(nproc) cores kept busy (PIDs ${load_pids[*]})"
    for ((round = 1; round <= soak; round++)); do
      for step in "${in_order[@]}"; do
        run_step "$step" "$step.$round"
      done
    done
    load_stop
  fi
fi

echo
echo "==> summary (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
printf '    %s\n' "${results[@]}"
# Where each step's time went: the lines that came after its longest waits (a test binary's
# result, a build's end, a harness's own line), so a regression in time shows on the CI page.
echo
echo "==> the slowest phases of each step (seconds waited before the line)"
for label in "${ran_labels[@]}"; do
  echo "    $label"
  python3 ci/steplog.py slowest "$IDFORGE_CI_NOTES/$label.log" 5 | sed 's/^/    /'
done
if [ "${#failed_steps[@]}" -gt 0 ]; then
  # Last: a CI page that shows only the end of the output still shows why.
  for label in "${failed_steps[@]}"; do
    echo
    echo "==> the last ${IDFORGE_CI_TAIL:-40} lines of $label"
    tail -n "${IDFORGE_CI_TAIL:-40}" "$IDFORGE_CI_NOTES/$label.log" | sed 's/^/    /'
  done
  echo "==> FAILED: ${failed_steps[*]}"
  exit 1
fi
if [ "$soak" -gt 0 ]; then
  echo "==> soak passed: ${in_order[*]}, $soak rounds under load, 0 failures"
else
  echo "==> all selected steps passed"
fi
