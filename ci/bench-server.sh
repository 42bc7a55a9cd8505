#!/usr/bin/env bash
# The segment server against a real redis-server on the same machine, with identical
# redis-benchmark flags: INCR and `INCRBY orders 1000`, -c 1 and 50, -P 1 and 16. Redis runs twice:
# in memory (no persistence) and with `appendonly yes, appendfsync always` (every write on disk
# before the reply, the durability idforge gives). Loopback only; every server is stopped by PID.
# Each run also records the server's own CPU time (utime + stime from /proc/PID/stat) and
# redis-benchmark's p50/p99 latency: CPU microseconds per request is the machine-independent
# comparison (on a shared 2-core machine the client's CPU, not the server, can set the rate).
# Writes the tables and ratios to BENCHMARKS.md between <!-- serverbench:begin/end -->.
#
#   ci/bench-server.sh            (BENCH_N=50000 requests per run, times -P; ROUNDS=3 runs of
#                                 each configuration, the median is reported)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
bash ci/install-deps.sh services
cargo build --release --locked -p idforge-server
bin="$CARGO_TARGET_DIR/release/idforge"
n=${BENCH_N:-50000}
rounds=${ROUNDS:-3}

# shellcheck source=ci/bench-common.sh
. ci/bench-common.sh

declare -A port pid
port[idforge]=$(free_port)
# One worker thread, as Redis has one: the other core runs redis-benchmark.
"$bin" serve --port "${port[idforge]}" --data-dir "$work/idforge" --threads 1 --log warn &
pids+=($!)
pid[idforge]=$!
port[redis-memory]=$(free_port)
redis-server --port "${port[redis-memory]}" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$work" --daemonize no --logfile "$work/redis-memory.log" &
pids+=($!)
pid[redis-memory]=$!
mkdir -p "$work/aof"
port[redis-fsync]=$(free_port)
redis-server --port "${port[redis-fsync]}" --bind 127.0.0.1 --save '' --appendonly yes \
  --appendfsync always --dir "$work/aof" --daemonize no --logfile "$work/redis-fsync.log" &
pids+=($!)
pid[redis-fsync]=$!
# A process's CPU time so far (utime + stime, clock ticks): fields 14 and 15 of /proc/PID/stat,
# counted after the ")" that ends its name.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
hz=$(getconf CLK_TCK)
for s in idforge redis-memory redis-fsync; do wait_port "${port[$s]}"; done

results="$work/results.csv"
# Interleaved (each configuration on the three servers back to back, and every configuration once
# per round), so drift in the machine's speed falls on all three alike; one run of under a second
# moves ±15% on a shared 2-core machine, so each result is the median of the rounds.
for round in $(seq "$rounds"); do
  for c in 1 50; do
    for p in 1 16; do
      for cmd in INCR INCRBY; do
        for s in idforge redis-memory redis-fsync; do
          if [ "$cmd" = INCR ]; then args=(INCR orders); else args=(INCRBY orders 1000); fi
          # The client's CPU share of the run (bash's `time`, %P): near 100% the client, not the
          # server, sets the rate.
          before=$(cpu_ticks "${pid[$s]}")
          cpu=$({
            TIMEFORMAT=%P
            time redis-benchmark -p "${port[$s]}" -n $((n * p)) -c "$c" -P "$p" --csv "${args[@]}" \
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

python3 - "$results" BENCHMARKS.md "$(redis-server --version | cut -d' ' -f3)" "$(nproc)" "$rounds" "$n" <<'PY'
import sys, re, statistics
rows = [l.strip().split(",") for l in open(sys.argv[1]) if l.strip()]
runs, cpus, server_us, p50s, p99s = {}, {}, {}, {}, {}
for s, cmd, c, p, v, cpu, us, p50, p99 in rows:
    runs.setdefault((s, cmd, c, p), []).append(float(v))
    cpus.setdefault((s, cmd, c, p), []).append(float(cpu))
    server_us.setdefault((s, cmd, c, p), []).append(float(us))
    p50s.setdefault((s, cmd, c, p), []).append(float(p50))
    p99s.setdefault((s, cmd, c, p), []).append(float(p99))
med = lambda d: {k: statistics.median(v) for k, v in d.items()}
rps, cpu, sus, p50, p99 = med(runs), med(cpus), med(server_us), med(p50s), med(p99s)
configs = sorted({(cmd, c, p) for _, cmd, c, p, *_ in rows}, key=lambda k: (k[0], int(k[1]), int(k[2])))
out = ["| command | -c | -P | idforge req/s | redis (memory) req/s | redis (fsync always) req/s "
       "| ÷ memory | ÷ fsync always | redis-benchmark CPU (idforge / memory) |",
       "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
worst = {}
for cmd, c, p in configs:
    ours = rps[("idforge", cmd, c, p)]
    mem = rps[("redis-memory", cmd, c, p)]
    fs = rps[("redis-fsync", cmd, c, p)]
    out.append(f"| {'INCRBY orders 1000' if cmd == 'INCRBY' else 'INCR orders'} | {c} | {p} "
               f"| {ours:,.0f} | {mem:,.0f} | {fs:,.0f} | {ours / mem:.2f}× | {ours / fs:.2f}× "
               f"| {cpu[('idforge', cmd, c, p)]:.0f}% / {cpu[('redis-memory', cmd, c, p)]:.0f}% |")
    worst.setdefault(("INCR", "mem"), []).append(ours / mem) if cmd == "INCR" else None
    worst.setdefault(("INCRBY", "fsync"), []).append(ours / fs) if cmd == "INCRBY" else None
incr = min(worst[("INCR", "mem")])
incrby = min(worst[("INCRBY", "fsync")])
# The server's own CPU per request, and latency.
servers = ["idforge", "redis-memory", "redis-fsync"]
cpu_table = ["| command | -c | -P | CPU µs/request: idforge | redis (memory) | redis (fsync always) "
             "| idforge ÷ memory | p50 / p99 ms: idforge | redis (memory) | redis (fsync always) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
cpu_ratio, p99_ratio = [], []
for cmd, c, p in configs:
    k = {s: (s, cmd, c, p) for s in servers}
    ratio = sus[k["idforge"]] / sus[k["redis-memory"]]
    cpu_ratio.append(ratio)
    if c == "50" and p == "1":
        p99_ratio.append(p99[k["idforge"]] / max(p99[k["redis-memory"]], 1e-9))
    cpu_table.append(
        f"| {'INCRBY orders 1000' if cmd == 'INCRBY' else 'INCR orders'} | {c} | {p} "
        + "".join(f"| {sus[k[s]]:.2f} " for s in servers) + f"| {ratio:.2f}× "
        + "".join(f"| {p50[k[s]]:.3f} / {p99[k[s]]:.3f} " for s in servers) + "|")
worst_cpu, worst_p99 = max(cpu_ratio), max(p99_ratio)
out += ["", "| target | worst ratio over the 4 configurations | verdict |", "| --- | ---: | --- |",
        f"| INCR ≥ 1.0× in-memory Redis | {incr:.2f}× | {'PASS' if incr >= 1 else 'MISS'} |",
        f"| INCRBY 1000 ≥ 2× Redis with appendfsync always (superseded by the CPU target below) | {incrby:.2f}× | {'PASS' if incrby >= 2 else 'MISS'} |",
        f"| server CPU per request ≤ in-memory Redis's, every setting (worst idforge ÷ Redis) | {worst_cpu:.2f}× | {'PASS' if worst_cpu <= 1 else 'MISS'} |",
        f"| p99 latency ≤ in-memory Redis's at -c 50 -P 1 (worst idforge ÷ Redis) | {worst_p99:.2f}× | {'PASS' if worst_p99 <= 1 else 'MISS'} |",
        "", *cpu_table,
        "", f"redis-server {sys.argv[3]}, {sys.argv[4]} CPUs shared by the server and redis-benchmark; "
        "idforge on the embedded SQLite store (synchronous=FULL), one worker thread (`--threads 1`) as Redis has one; "
        f"each figure is the median of {sys.argv[5]} interleaved runs of {sys.argv[6]} × P requests; "
        "CPU µs/request is the server process's utime + stime over the run (/proc/PID/stat) divided by "
        "the requests. Command: `bash ci/bench-server.sh`."]
text = "\n".join(out)
print(text)
md = open(sys.argv[2]).read()
block = f"<!-- serverbench:begin -->\n{text}\n<!-- serverbench:end -->"
if "<!-- serverbench:begin -->" in md:
    md = re.sub(r"<!-- serverbench:begin -->.*<!-- serverbench:end -->", lambda m: block, md, flags=re.S)
else:
    md += "\n## Segment server (`ci/bench-server.sh`)\n\n" + block + "\n"
open(sys.argv[2], "w").write(md)
PY
