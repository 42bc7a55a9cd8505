#!/usr/bin/env bash
# The HTTP API's ids per second with keep-alive against the same server's RESP, on one machine:
# wrk (-t1, keep-alive, no pipelining) on Leaf's /api/segment/get/orders and tinyid's
# nextIdSimple (batchSize 1 and 100), redis-benchmark (-P 1) on INCR and INCRBY 100, each at
# -c 1 and -c 50, against one `idforge serve --threads 1` (embedded SQLite store) with both ports
# open. Server pinned to the last CPU, client to the first (BENCH_PIN=0: not pinned), ROUNDS
# interleaved rounds (the median kept) of BENCH_SECS seconds each; the server's CPU per request
# from /proc/PID/stat. Writes the table to BENCHMARKS.md between <!-- httpbench:begin/end -->.
#
#   ci/bench/bench-http.sh          (ROUNDS=3, BENCH_SECS=5)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
bash ci/install/install-deps.sh services wrk
cargo build --release --locked -p idforge-server
bin="$CARGO_TARGET_DIR/release/idforge"
rounds=${ROUNDS:-3}
secs=${BENCH_SECS:-5}

# shellcheck source=ci/bench/bench-common.sh
. ci/bench/bench-common.sh

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

python3 - "$work/results" "$tps" "$rounds" "$secs" >"$work/report" <<'PY'
import collections, statistics, subprocess, sys, datetime
path, tps, rounds, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
runs = collections.defaultdict(list)
for line in open(path):
    name, c, ids, _, rps, p99, ticks, n = line.split()
    runs[(name, int(c), int(ids))].append((float(rps), float(p99), int(ticks), int(n)))
def summary(key):
    v = runs[key]
    rps = statistics.median(r[0] for r in v)
    p99 = statistics.median(r[1] for r in v)
    cpu_us = sum(r[2] for r in v) / tps * 1e6 / max(1, sum(r[3] for r in v))
    return rps, p99, cpu_us
pairs = {1: "RESP_INCR", 100: "RESP_INCRBY_100"}
out = ["| workload | -c | requests/s | ids/s | p99 ms | server CPU µs/request | ids/s ÷ RESP's (same -c, same ids per request) |",
       "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
for key in sorted(runs, key=lambda k: (k[2], k[1], not k[0].startswith("RESP"), k[0])):
    name, c, ids = key
    rps, p99, cpu = summary(key)
    resp = summary((pairs[ids], c, ids))[0]
    ratio = "—" if name.startswith("RESP") else f"{rps / resp:.2f}×"
    label = name.replace("_", " ").replace("HTTP ", "HTTP ").replace("RESP ", "RESP ")
    out.append(f"| {label} | {c} | {rps:,.0f} | {rps * ids:,.0f} | {p99:.3f} | {cpu:.1f} | {ratio} |")
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
out.append("")
out.append(f"One `idforge serve --threads 1 --http-rate-limit 0` (release build, embedded SQLite store) with "
           f"its RESP and HTTP ports open; wrk 4 (`-t1`, keep-alive, one request in flight per connection) "
           f"and redis-benchmark (`-P 1`, also one in flight) as the clients; server pinned to the last CPU, "
           f"client to the first; the median of {rounds} interleaved rounds of {secs} s (redis-benchmark: a "
           f"request count of about that length); CPU µs/request: the server's utime + stime over all "
           f"rounds ÷ their requests. Command: `bash ci/bench/bench-http.sh`, on {date}, at commit {commit}.")
print("\n".join(out))
PY
cat "$work/report"
write_section httpbench "HTTP API (\`ci/bench/bench-http.sh\`)" "$work/report"
