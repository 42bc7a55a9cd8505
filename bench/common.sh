# Sourced by the bench scripts: a work dir and the PIDs of what they start, both cleaned up at
# exit (servers stopped by PID), the release server, and loopback port helpers.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"

# release_server GROUP...: ci/install/install-deps.sh's GROUPs, then the release server; sets
# $bin to it.
release_server() {
  bash ci/install/install-deps.sh "$@"
  cargo build --release --locked -p idforge-server --bin idforge
  bin="$CARGO_TARGET_DIR/release/idforge"
}

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do redis-cli -p "$1" PING >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }

# write_section MARKER TITLE REPORT: puts REPORT's text in BENCHMARKS.md between
# <!-- MARKER:begin --> and <!-- MARKER:end -->, or in a new "## TITLE" section at the end
# (through bench/report, the one writer of BENCHMARKS.md's sections).
write_section() {
  python3 bench/report section "$1" "$2" "$3"
}

# pin_cpus: sets on_server and on_client, the command prefixes that put every server on the last
# CPU and the client on the first. On a 2-core machine the client never takes the server's core,
# and no run's numbers depend on where the scheduler put whom (unpinned, one setting's medians
# moved ±10% between runs). BENCH_PIN=0 turns it off. The CPUs used (a cpuset need not start at
# 0): the first and the last.
pin_cpus() {
  read -r first_cpu last_cpu < <(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[0], c[-1])')
  on_server=()
  on_client=()
  if [ "${BENCH_PIN:-1}" = 1 ] && [ "$first_cpu" != "$last_cpu" ]; then
    if command -v taskset >/dev/null 2>&1; then
      on_server=(taskset -c "$last_cpu")
      on_client=(taskset -c "$first_cpu")
    else
      echo "warning: no taskset (util-linux): the servers and the client are not pinned" >&2
    fi
  fi
}
