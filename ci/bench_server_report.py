#!/usr/bin/env python3
"""The report of ci/bench-server.sh: medians of its results CSV (one row a run:
server,cmd,c,p,rps,client cpu%,server µs/request,p50 ms,p99 ms), the tables, the targets, and the
section of BENCHMARKS.md between <!-- serverbench:begin/end -->. A target is met when this run and
the previous one (read back from that section) both pass (ci/bench_verdicts.py).

    python3 ci/bench_server_report.py RESULTS.csv BENCHMARKS.md REDIS_VERSION CPUS ROUNDS N
"""
import re
import statistics
import sys

import bench_verdicts  # ci/, this script's own directory

BEGIN, END = "<!-- serverbench:begin -->", "<!-- serverbench:end -->"


def main():
    results, markdown, redis_version, ncpus, rounds, n = sys.argv[1:7]
    rows = [l.strip().split(",") for l in open(results) if l.strip()]
    runs, cpus, server_us, p50s, p99s = {}, {}, {}, {}, {}
    for s, cmd, c, p, v, cpu, us, p50, p99 in rows:
        runs.setdefault((s, cmd, c, p), []).append(float(v))
        cpus.setdefault((s, cmd, c, p), []).append(float(cpu))
        server_us.setdefault((s, cmd, c, p), []).append(float(us))
        p50s.setdefault((s, cmd, c, p), []).append(float(p50))
        p99s.setdefault((s, cmd, c, p), []).append(float(p99))
    med = lambda d: {k: statistics.median(v) for k, v in d.items()}  # noqa: E731
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
    targets = [  # (target, worst ratio, passed)
        ("INCR ≥ 1.0× in-memory Redis", incr, incr >= 1),
        ("INCRBY 1000 ≥ 2× Redis with appendfsync always (superseded by the CPU target below)", incrby, incrby >= 2),
        ("server CPU per request ≤ in-memory Redis's, every setting (worst idforge ÷ Redis)", worst_cpu, worst_cpu <= 1),
        ("p99 latency ≤ in-memory Redis's at -c 50 -P 1 (worst idforge ÷ Redis)", worst_p99, worst_p99 <= 1),
    ]
    md = open(markdown).read()
    previous = bench_verdicts.previous_run(bench_verdicts.old_section(md, BEGIN, END))
    commit, now = bench_verdicts.git_commit(), bench_verdicts.utc_now()
    verdicts = [(name, f"{value:.2f}×", "PASS" if ok else "MISS") for name, value, ok in targets]
    out += ["", "| target | worst ratio over the 4 configurations | verdict " + bench_verdicts.HEADER,
            "| --- | ---: | --- " + bench_verdicts.ALIGN]
    for name, shown, verdict in verdicts:
        prev, both = bench_verdicts.cells(name, verdict, previous)
        out.append(f"| {name} | {shown} | {verdict} | {prev} | {both} |")
    out += [
        "", *cpu_table,
        "", f"redis-server {redis_version}, {ncpus} CPUs shared by the server and redis-benchmark; "
        "idforge on the embedded SQLite store (synchronous=FULL), one worker thread (`--threads 1`) as Redis has one; "
        f"each figure is the median of {rounds} interleaved runs of {n} × P requests; "
        "CPU µs/request is the server process's utime + stime over the run (/proc/PID/stat) divided by "
        f"the requests. Command: `bash ci/bench-server.sh`, on {now}, at commit {commit}.",
        "", bench_verdicts.comment(commit, now, verdicts)]
    text = "\n".join(out)
    print(text)
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in md:
        md = re.sub(f"{re.escape(BEGIN)}.*{re.escape(END)}", lambda m: block, md, flags=re.S)
    else:
        md += "\n## Segment server (`ci/bench-server.sh`)\n\n" + block + "\n"
    open(markdown, "w").write(md)


if __name__ == "__main__":
    main()
