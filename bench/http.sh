#!/usr/bin/env bash
# The HTTP API's ids per second with keep-alive against the same server's RESP, on one machine:
# wrk (-t1, keep-alive, no pipelining) on Leaf's /api/segment/get/orders and tinyid's
# nextIdSimple (batchSize 1 and 100), redis-benchmark (-P 1) on INCR and INCRBY 100, each at
# -c 1 and -c 50, against one `idforge serve --threads 1` (embedded SQLite store) with both ports
# open. Server pinned to the last CPU, client to the first (BENCH_PIN=0: not pinned), ROUNDS
# interleaved rounds (the median kept) of BENCH_SECS seconds each; the server's CPU per request
# from /proc/PID/stat. Writes the table to BENCHMARKS.md between <!-- httpbench:begin/end -->.
#
#   bench/http.sh          (ROUNDS=3, BENCH_SECS=5)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/common.sh
. bench/common.sh
release_server services wrk
rounds=${ROUNDS:-3}
secs=${BENCH_SECS:-5}
pin_cpus

port=$(free_port)
http=$(free_port)
${on_server[@]+"${on_server[@]}"} "$bin" serve --port "$port" --http-port "$http" --data-dir "$work/idforge" \
  --threads 1 --http-rate-limit 0 --log warn &
pids+=($!)
server=$!
wait_port "$port"

cpu() { awk '{print $14 + $15}' "/proc/$server/stat"; }
tps=$(getconf CLK_TCK)

# One measurement: NAME C IDS-PER-REQUEST -> a line "name c round req/s p99ms cpu_ticks requests".
http_run() { # NAME C IDS PATH ROUND
  local before after out rps p99 n
  before=$(cpu)
  out=$(${on_client[@]+"${on_client[@]}"} wrk -t1 -c"$2" -d"${secs}s" --latency "http://127.0.0.1:$http$4")
  after=$(cpu)
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us$/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v*=1000}; print v}' <<<"$out")
  echo "$1 $2 $3 $5 $rps $p99 $((after - before)) $n" >>"$work/results"
}
resp_run() { # NAME C IDS ROUND COMMAND...
  local name=$1 c=$2 ids=$3 round=$4 before after out rps p99 n
  shift 4
  n=$(python3 -c "print(max(20000, int($secs * (3000 if $c == 1 else 20000))))")
  before=$(cpu)
  out=$(${on_client[@]+"${on_client[@]}"} redis-benchmark -p "$port" -c "$c" -P 1 -n "$n" --csv "$@")
  after=$(cpu)
  rps=$(tail -1 <<<"$out" | tr -d '"' | cut -d, -f2)
  p99=$(tail -1 <<<"$out" | tr -d '"' | cut -d, -f7)
  echo "$name $c $ids $round $rps $p99 $((after - before)) $n" >>"$work/results"
}

: >"$work/results"
for round in $(seq "$rounds"); do
  for c in 1 50; do
    http_run "HTTP_Leaf_segment/get" "$c" 1 "/api/segment/get/orders" "$round"
    resp_run "RESP_INCR" "$c" 1 "$round" INCR orders
    http_run "HTTP_tinyid_nextIdSimple_batchSize=1" "$c" 1 "/tinyid/id/nextIdSimple?bizType=orders&token=t&batchSize=1" "$round"
    http_run "HTTP_tinyid_nextIdSimple_batchSize=100" "$c" 100 "/tinyid/id/nextIdSimple?bizType=orders&token=t&batchSize=100" "$round"
    resp_run "RESP_INCRBY_100" "$c" 100 "$round" INCRBY orders 100
  done
done

python3 bench/report http "$work/results" "$tps" "$rounds" "$secs" --markdown BENCHMARKS.md
