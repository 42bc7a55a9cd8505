#!/usr/bin/env bash
# The segment server against a real redis-server on the same machine, with identical
# redis-benchmark flags: INCR and `INCRBY orders 1000`, -c 1 and 50, -P 1 and 16. Redis runs twice:
# in memory (no persistence) and with `appendonly yes, appendfsync always` (every write on disk
# before the reply, the durability idforge gives). Loopback only; every server is stopped by PID.
# Each run also records the server's own CPU time (utime + stime from /proc/PID/stat) and
# redis-benchmark's p50/p99 latency: CPU microseconds per request is the machine-independent
# comparison (on a shared 2-core machine the client's CPU, not the server, can set the rate).
# Writes the tables and ratios to BENCHMARKS.md between <!-- serverbench:begin/end -->
# (bench/report/server.py; a target is met when this run and the previous one both pass).
#
# A second in-memory Redis, identical to the first, is measured alongside as a control: how far
# Redis differs from itself in the same run is the resolution of every comparison with it (both
# servers stand on the same kernel floor, so a plain "≥ 1.0×" would fail Redis against Redis
# half the time). A target passes when idforge is on its side of 1.0 or within that resolution.
#
#   bench/server.sh            (BENCH_N=50000 requests per run, times -P; ROUNDS=5 runs of
#                                 each configuration, interleaved; IDFORGE_ARGS: more flags for
#                                 `idforge serve`, e.g. "--busy-poll-us 0")
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/common.sh
. bench/common.sh
release_server services
n=${BENCH_N:-50000}
rounds=${ROUNDS:-5}

# Every server on the last CPU, redis-benchmark on the first (bench/common.sh).
pin_cpus
# Below, ${a[@]+"${a[@]}"} expands an empty array to nothing under `set -u` on every bash.
read -ra idforge_args <<<"${IDFORGE_ARGS:-}"

declare -A port pid
port[idforge]=$(free_port)
# One worker thread, as Redis has one: the other core runs redis-benchmark.
${on_server[@]+"${on_server[@]}"} "$bin" serve --port "${port[idforge]}" --data-dir "$work/idforge" --threads 1 --log warn \
  ${idforge_args[@]+"${idforge_args[@]}"} &
pids+=($!)
pid[idforge]=$!
port[redis-memory]=$(free_port)
${on_server[@]+"${on_server[@]}"} redis-server --port "${port[redis-memory]}" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$work" --daemonize no --logfile "$work/redis-memory.log" &
pids+=($!)
pid[redis-memory]=$!
port[redis-control]=$(free_port)
${on_server[@]+"${on_server[@]}"} redis-server --port "${port[redis-control]}" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$work" --daemonize no --logfile "$work/redis-control.log" &
pids+=($!)
pid[redis-control]=$!
mkdir -p "$work/aof"
port[redis-fsync]=$(free_port)
${on_server[@]+"${on_server[@]}"} redis-server --port "${port[redis-fsync]}" --bind 127.0.0.1 --save '' --appendonly yes \
  --appendfsync always --dir "$work/aof" --daemonize no --logfile "$work/redis-fsync.log" &
pids+=($!)
pid[redis-fsync]=$!
# A process's CPU time so far (utime + stime, clock ticks): fields 14 and 15 of /proc/PID/stat,
# counted after the ")" that ends its name.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
hz=$(getconf CLK_TCK)
servers=(idforge redis-memory redis-control redis-fsync)
for s in "${servers[@]}"; do wait_port "${port[$s]}"; done

results="$work/results.csv"
# Interleaved (each configuration on the four servers back to back, and every configuration once
# per round), so drift in the machine's speed falls on all alike; one run of under a second moves
# ±15% on a shared 2-core machine, so each result is the median of the rounds (CPU: all the
# rounds' CPU over all their requests, free of the 10 ms tick each reading is rounded to).
# The servers take turns going first, and follow each other in a balanced order (a Williams
# square: over four turns each server goes first once and follows each other server once). With
# one fixed order idforge always ran first, right after Redis's fsync runs, and lost up to 30%
# in single rounds there; a plain rotation would still have put it after fsync 30 times in 40.
orders=("0 1 3 2" "1 2 0 3" "2 3 1 0" "3 0 2 1")
for round in $(seq "$rounds"); do
  turn=$round
  for c in 1 50; do
    for p in 1 16; do
      for cmd in INCR INCRBY; do
        turn=$((turn + 1))
        for i in ${orders[$((turn % 4))]}; do
          s=${servers[$i]}
          if [ "$cmd" = INCR ]; then args=(INCR orders); else args=(INCRBY orders 1000); fi
          # The client's CPU share of the run (bash's `time`, %P): near 100% the client, not the
          # server, sets the rate.
          before=$(cpu_ticks "${pid[$s]}")
          cpu=$({
            TIMEFORMAT=%P
            time ${on_client[@]+"${on_client[@]}"} redis-benchmark -p "${port[$s]}" -n $((n * p)) -c "$c" -P "$p" --csv "${args[@]}" \
              >"$work/run.csv" 2>/dev/null
          } 2>&1)
          after=$(cpu_ticks "${pid[$s]}")
          # redis-benchmark's CSV: "test","rps","avg","min","p50","p95","p99","max" (ms).
          IFS=, read -r _ rps _ _ p50 _ p99 _ < <(tail -1 "$work/run.csv" | tr -d '"')
          us=$(python3 -c "print(($after - $before) * 1e6 / $hz / $((n * p)))")
          echo "$s,$cmd,$c,$p,$rps,$cpu,$us,$p50,$p99" | tee -a "$results"
        done
      done
    done
  done
  echo "round $round of $rounds done" >&2
done

# The tables and targets (with the previous run's verdicts, read back from BENCHMARKS.md).
python3 bench/report server "$results" BENCHMARKS.md "$(redis-server --version | cut -d' ' -f3)" \
  "$(nproc)" "$rounds" "$n"
