"""The report of bench/server.sh: medians of its results CSV (one row a run:
server,cmd,c,p,rps,client cpu%,server µs/request,p50 ms,p99 ms), the tables, the targets, and the
section of BENCHMARKS.md between <!-- serverbench:begin/end -->. A target is met when this run and
the previous one (read back from that section) both pass; the pass/fail rule is
bench/report/record.py's.

    python3 bench/report server RESULTS.csv BENCHMARKS.md REDIS_VERSION CPUS ROUNDS N
"""
import statistics

import record  # the pass/fail rule and the sections every bench report shares

BEGIN, END = "<!-- serverbench:begin -->", "<!-- serverbench:end -->"
# The most a comparison with Redis is allowed to lean on the control's spread.
MAX_RESOLUTION = 0.15


def label(cmd):
    return "INCRBY orders 1000" if cmd == "INCRBY" else "INCR orders"


def main(argv):
    results, markdown, redis_version, ncpus, rounds, n = argv[:6]
    rows = [l.strip().split(",") for l in open(results) if l.strip()]
    runs, cpus, server_us, p50s, p99s = {}, {}, {}, {}, {}
    for s, cmd, c, p, v, cpu, us, p50, p99 in rows:
        runs.setdefault((s, cmd, c, p), []).append(float(v))
        cpus.setdefault((s, cmd, c, p), []).append(float(cpu))
        server_us.setdefault((s, cmd, c, p), []).append(float(us))
        p50s.setdefault((s, cmd, c, p), []).append(float(p50))
        p99s.setdefault((s, cmd, c, p), []).append(float(p99))
    med = lambda d: {k: statistics.median(v) for k, v in d.items()}  # noqa: E731
    rps, cpu, p50, p99 = med(runs), med(cpus), med(p50s), med(p99s)
    # Every round runs the same requests, so the mean is all the CPU over all the requests: each
    # reading is rounded to a 10 ms tick (2.5% of a -c 50 run), the sum of five to 0.5%.
    sus = {k: statistics.fmean(v) for k, v in server_us.items()}
    configs = sorted({(cmd, c, p) for _, cmd, c, p, *_ in rows}, key=lambda k: (k[0], int(k[1]), int(k[2])))
    out = ["| command | -c | -P | idforge req/s | redis (memory) req/s | redis (fsync always) req/s "
           "| ÷ memory | ÷ fsync always | control ÷ memory | redis-benchmark CPU (idforge / memory) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    # Per target: idforge's ratios and the control's, over the settings the target covers.
    incr, incrby, incr_control, incrby_control = [], [], [], []
    for cmd, c, p in configs:
        ours = rps[("idforge", cmd, c, p)]
        mem = rps[("redis-memory", cmd, c, p)]
        fs = rps[("redis-fsync", cmd, c, p)]
        ctl = rps.get(("redis-control", cmd, c, p))
        out.append(f"| {label(cmd)} | {c} | {p} "
                   f"| {ours:,.0f} | {mem:,.0f} | {fs:,.0f} | {ours / mem:.2f}× | {ours / fs:.2f}× "
                   f"| {'—' if ctl is None else f'{ctl / mem:.2f}×'} "
                   f"| {cpu[('idforge', cmd, c, p)]:.0f}% / {cpu[('redis-memory', cmd, c, p)]:.0f}% |")
        if cmd == "INCR":
            incr.append(ours / mem)
            if ctl is not None:
                incr_control.append(ctl / mem)
        elif (c, p) != ("50", "1"):
            # At -c 50 -P 1 the CPU-per-request target judges instead: one client at a time makes the
            # throughput ratio a measure of round trips, not of the server.
            incrby.append(ours / fs)
            if ctl is not None:
                incrby_control.append(ctl / mem)
    # The server's own CPU per request, and latency.
    servers = ["idforge", "redis-memory", "redis-fsync"]
    cpu_table = ["| command | -c | -P | CPU µs/request: idforge | redis (memory) | redis (fsync always) "
                 "| idforge ÷ memory | control ÷ memory | p50 / p99 ms: idforge | redis (memory) "
                 "| redis (fsync always) |",
                 "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    cpu_ratio, p99_ratio, cpu_control, p99_control = [], [], [], []
    for cmd, c, p in configs:
        k = {s: (s, cmd, c, p) for s in servers + ["redis-control"]}
        ratio = sus[k["idforge"]] / sus[k["redis-memory"]]
        cpu_ratio.append(ratio)
        control = sus[k["redis-control"]] / sus[k["redis-memory"]] if k["redis-control"] in sus else None
        if control is not None:
            cpu_control.append(control)
        if c == "50" and p == "1":
            p99_ratio.append(p99[k["idforge"]] / max(p99[k["redis-memory"]], 1e-9))
            if k["redis-control"] in p99:
                p99_control.append(p99[k["redis-control"]] / max(p99[k["redis-memory"]], 1e-9))
        cpu_table.append(
            f"| {label(cmd)} | {c} | {p} "
            + "".join(f"| {sus[k[s]]:.2f} " for s in servers) + f"| {ratio:.2f}× "
            + f"| {'—' if control is None else f'{control:.2f}×'} "
            + "".join(f"| {p50[k[s]]:.3f} / {p99[k[s]]:.3f} " for s in servers) + "|")
    # The resolution of a comparison with Redis: the furthest Redis strays from itself over the
    # settings a target covers, capped: a run where Redis strays further cannot pass on it.
    res = lambda ratios: min(max((abs(r - 1) for r in ratios), default=0.0), MAX_RESOLUTION)  # noqa: E731
    res_incr, res_incrby = res(incr_control), res(incrby_control)
    res_cpu, res_p99 = res(cpu_control), res(p99_control)
    worst_cpu, worst_p99 = max(cpu_ratio), max(p99_ratio)
    worst_incr, worst_incrby = min(incr), min(incrby, default=0.0)
    verdict = record.verdict
    targets = [  # (target, worst ratio, the control's resolution, verdict)
        ("INCR ≥ 1.0× in-memory Redis, every setting", worst_incr, res_incr,
         verdict(worst_incr, at_least=1 - res_incr)),
        ("INCRBY 1000 ≥ 2× Redis with appendfsync always (at -c 50 -P 1 the CPU target replaces it)",
         worst_incrby, res_incrby, verdict(worst_incrby, at_least=2 * (1 - res_incrby))),
        ("server CPU per request ≤ in-memory Redis's, every setting (worst idforge ÷ Redis)", worst_cpu, res_cpu,
         verdict(worst_cpu, at_most=1 + res_cpu)),
        ("p99 latency ≤ in-memory Redis's at -c 50 -P 1 (worst idforge ÷ Redis)", worst_p99, res_p99,
         verdict(worst_p99, at_most=1 + res_p99)),
    ]
    md = open(markdown).read()
    previous = record.previous_run(record.old_section(md, BEGIN, END))
    commit, now = record.git_commit(), record.utc_now()
    table, verdicts = record.targets_table(
        ["target", "worst ratio", "Redis against itself (±)"],
        [([name, f"{value:.2f}×", f"{resolution:.2f}"], v) for name, value, resolution, v in targets],
        previous)
    out += ["", *table]
    out += [
        "", *cpu_table,
        "", f"redis-server {redis_version}, {ncpus} CPUs: every server pinned to the last, redis-benchmark to "
        "the first (`taskset`); idforge on the embedded SQLite store (synchronous=FULL), one worker thread "
        "(`--threads 1`) as Redis has one; "
        f"each figure is the median of {rounds} interleaved runs of {n} × P requests (the servers take turns "
        "going first), except CPU µs/request: "
        "the server process's utime + stime (/proc/PID/stat) over all the runs, divided by their requests. "
        "\"control\" is a second in-memory Redis, identical to the first: \"Redis against itself\" is the "
        "furthest it strays from 1.0× over the settings a target covers (at most 0.15), the resolution of a "
        "comparison with Redis in this run; a target passes when idforge is on its side of 1.0× or within that. "
        f"Command: `bash bench/server.sh`, on {now}, at commit {commit}.",
        "", record.comment(commit, now, verdicts)]
    text = "\n".join(out)
    print(text)
    record.write_section(markdown, md, BEGIN, END, text, heading="Segment server (`bench/server.sh`)")
