#!/usr/bin/env bash
# The segment sources from one client thread (bench/examples/sources.rs): ids/s for fixed steps
# 1, 100, 1000 and 10000 through `Segments` against `idforge serve` (SQLite), Redis in memory and
# Redis with `appendfsync always`; then a stalled allocator (every reply +50 ms) under a steady
# 100,000 ids/s, with next()'s latency percentiles. Loopback only; servers stopped by PID.
# Writes the tables to BENCHMARKS.md between <!-- sourcesbench:begin/end -->.
#
#   bench/sources.sh            (BENCH_WINDOW_MS=1000 per cell)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/common.sh
. bench/common.sh
release_server services
cargo build --release --locked -p idforge-bench --example sources

p_idf=$(free_port)
"$bin" serve --port "$p_idf" --data-dir "$work/idforge" --log warn &
pids+=($!)
p_mem=$(free_port)
redis-server --port "$p_mem" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  --daemonize no --logfile "$work/redis-memory.log" &
pids+=($!)
mkdir -p "$work/aof"
p_fsync=$(free_port)
redis-server --port "$p_fsync" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync always \
  --dir "$work/aof" --daemonize no --logfile "$work/redis-fsync.log" &
pids+=($!)
for p in "$p_idf" "$p_mem" "$p_fsync"; do wait_port "$p"; done

report="$work/report.md"
{
  echo "Run: \`bash bench/sources.sh\` at $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d)," \
    "$(nproc) cores; one client thread, \`Segments::next\` with a fixed step (a refill is one" \
    "\`INCRBY tag step\`); redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')."
  echo
  "$CARGO_TARGET_DIR/release/examples/sources" \
    "idforge serve (SQLite)=idforge://127.0.0.1:$p_idf" \
    "Redis, in memory=redis://127.0.0.1:$p_mem" \
    "Redis, appendfsync always=redis://127.0.0.1:$p_fsync"
} | tee "$report"

write_section sourcesbench "Segment sources (bench/sources.sh)" "$report"
