#!/usr/bin/env bash
# Many tags from one process (bench/examples/many_tags.rs): 10,000 `Segments` on one URL, 1 id/s
# each (10,000 ids/s round-robin) for 30 s at a fixed step of 10, against `idforge serve` and
# Redis in memory on loopback: CPU, threads, sockets, RSS and next()'s latency. With BEFORE=REV,
# the same example built against the runtime at REV (a git worktree with its own target dir)
# runs the same load first: the "before" rows. Servers stopped by PID. Writes the table to
# BENCHMARKS.md between <!-- manytagsbench:begin/end -->.
#
#   bench/many-tags.sh                       (TAGS=10000 SECONDS=30 RATE=10000 STEP=10)
#   BEFORE=f27d988 bench/many-tags.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
TAGS=${TAGS:-10000}
SECONDS_RUN=${SECONDS_RUN:-30}
RATE=${RATE:-10000}
STEP=${STEP:-10}
# shellcheck source=bench/common.sh
. bench/common.sh
release_server services
cargo build --release --locked -p idforge-bench --example many_tags

# One socket per tag before the engine: room for them on both ends.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
clients=$((TAGS * 2 + 100))

before_bin=
if [ -n "${BEFORE:-}" ]; then
  git worktree add --detach "$work/before" "$BEFORE" >/dev/null
  mkdir -p "$work/before/bench/examples"
  cp bench/examples/many_tags.rs "$work/before/bench/examples/"
  (cd "$work/before" && CARGO_TARGET_DIR="${BEFORE_TARGET_DIR:-$HOME/.cache/idforge/target-before}" \
    cargo build --release -q -p idforge-bench --example many_tags)
  before_bin="${BEFORE_TARGET_DIR:-$HOME/.cache/idforge/target-before}/release/examples/many_tags"
  git worktree remove --force "$work/before"
fi

p_idf=$(free_port)
"$bin" serve --port "$p_idf" --data-dir "$work/idforge" --log warn --maxclients "$clients" \
  --max-tags-per-user $((TAGS * 4)) &
pids+=($!)
p_mem=$(free_port)
redis-server --port "$p_mem" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  --maxclients "$clients" --daemonize no --logfile "$work/redis-memory.log" &
pids+=($!)
for p in "$p_idf" "$p_mem"; do wait_port "$p"; done

report="$work/report.md"
{
  echo "Run: \`BEFORE=${BEFORE:-} bash bench/many-tags.sh\` at $(git rev-parse --short HEAD)," \
    "$(date -u +%Y-%m-%d), $(nproc) cores: $TAGS \`Segments\` in one process, 1 id/s each" \
    "($RATE ids/s round-robin, paced) for $SECONDS_RUN s, fixed step $STEP (a refill per tag" \
    "every ~$STEP s); CPU is the process's user + system time over the run, threads and" \
    "sockets are the process's halfway through, latency is of each \`next()\` call."
  echo
  echo "| build | source | tags | ids | CPU s | threads | sockets | RSS MB | p50 | p99 | p999 | max | failed calls |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  for build in before now; do
    exe="$CARGO_TARGET_DIR/release/examples/many_tags"
    label="this commit"
    if [ "$build" = before ]; then
      [ -n "$before_bin" ] || continue
      exe=$before_bin
      label="before ($BEFORE)"
    fi
    for src in "idforge serve=idforge://127.0.0.1:$p_idf" "Redis=redis://127.0.0.1:$p_mem"; do
      row=$("$exe" "${src#*=}" "$TAGS" "$SECONDS_RUN" "$RATE" "$STEP" 2>"$work/err" ||
        echo "| failed: $(tail -1 "$work/err") |")
      echo "| $label | ${src%%=*} $row"
    done
  done
} | tee "$report"

write_section manytagsbench "Many tags from one process (bench/many-tags.sh)" "$report"
