"""The report of bench/http.sh: the HTTP API (Leaf's segment, tinyid's nextIdSimple) beside RESP
on one server. Reads the results file (one line a run: name, -c, ids per request, round,
requests/s, p99 ms, server CPU ticks, requests) and writes the httpbench section of BENCHMARKS.md.

    python3 bench/report http RESULTS TICKS_PER_SECOND ROUNDS SECONDS [--markdown BENCHMARKS.md]
"""

import argparse
import collections
import statistics

import record

# The RESP workload each HTTP one is compared with: the same ids per request.
RESP_PAIR = {1: "RESP_INCR", 100: "RESP_INCRBY_100"}


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("ticks_per_second", type=int)
    ap.add_argument("rounds")
    ap.add_argument("seconds")
    ap.add_argument("--markdown")
    args = ap.parse_args(argv)
    runs = collections.defaultdict(list)
    with open(args.results) as f:
        for line in f:
            name, c, ids, _, rps, p99, ticks, n = line.split()
            runs[(name, int(c), int(ids))].append((float(rps), float(p99), int(ticks), int(n)))

    def summary(key):
        v = runs[key]
        rps = statistics.median(r[0] for r in v)
        p99 = statistics.median(r[1] for r in v)
        cpu_us = sum(r[2] for r in v) / args.ticks_per_second * 1e6 / max(1, sum(r[3] for r in v))
        return rps, p99, cpu_us

    out = ["| workload | -c | requests/s | ids/s | p99 ms | server CPU µs/request | ids/s ÷ RESP's (same -c, same ids per request) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for key in sorted(runs, key=lambda k: (k[2], k[1], not k[0].startswith("RESP"), k[0])):
        name, c, ids = key
        rps, p99, cpu = summary(key)
        resp = summary((RESP_PAIR[ids], c, ids))[0]
        ratio = "—" if name.startswith("RESP") else f"{rps / resp:.2f}×"
        out.append(f"| {name.replace('_', ' ')} | {c} | {rps:,.0f} | {rps * ids:,.0f} | {p99:.3f} | {cpu:.1f} | {ratio} |")
    out.append("")
    out.append(f"One `idforge serve --threads 1 --http-rate-limit 0` (release build, embedded SQLite store) with "
               f"its RESP and HTTP ports open; wrk 4 (`-t1`, keep-alive, one request in flight per connection) "
               f"and redis-benchmark (`-P 1`, also one in flight) as the clients; server pinned to the last CPU, "
               f"client to the first; the median of {args.rounds} interleaved rounds of {args.seconds} s "
               f"(redis-benchmark: a request count of about that length); CPU µs/request: the server's utime + "
               f"stime over all rounds ÷ their requests. Command: `bash bench/http.sh`, on {record.utc_now()}, "
               f"at commit {record.git_commit()}.")
    body = "\n".join(out)
    print(body)
    if args.markdown:
        record.write_marked(args.markdown, "httpbench", "HTTP API (`bench/http.sh`)", body)
