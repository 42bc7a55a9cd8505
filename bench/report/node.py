"""Ratios and targets of a bench.mjs (or, with --suite uuid7, bench_uuid7.mjs) --json run;
rewrites the bench's section of BENCHMARKS.md (between <!-- nodebench:begin --> and
<!-- nodebench:end -->, or the nodeuuid7bench markers), keeping the previous run's verdicts beside
this run's (a target is met when both pass; the pass/fail rule is bench/report/record.py's,
shared by every bench report, so bench.mjs writes numbers only).

    python3 bench/report node results.json [--suite ids|uuid7] [--markdown ../BENCHMARKS.md] [--command "..."]
"""

import argparse
import json
import os
import re

import record  # the pass/fail rule and the sections every bench report shares

# Each bench (run.sh's argument) writes its own section. Speed against a peer: (measure, the
# peer's benchmark, ours, target text, lower bound).
SUITES = {
    "ids": {
        "markers": ("<!-- nodebench:begin -->", "<!-- nodebench:end -->"),
        "heading": "Node (`bench/node`)",
        "peers": [
            ("@sapphire/snowflake generate() / our Snowflake.next()", "peer/@sapphire/snowflake generate()",
             "idforge/Snowflake.next()", "≥ 2×", 2),
            ("bson new ObjectId() / our new ObjectId()", "peer/bson new ObjectId()", "idforge/new ObjectId()",
             "≥ 1×", 1),
        ],
    },
    "uuid7": {
        "markers": ("<!-- nodeuuid7bench:begin -->", "<!-- nodeuuid7bench:end -->"),
        "heading": "Node UUIDv7 (`bench/node`)",
        "peers": [
            ("uuid v7() / our uuid7()", "peer/uuid v7()", "idforge/uuid7()", "≥ 2×", 2),
            ("ulid monotonicFactory()() / our ulid()", "peer/ulid monotonicFactory()()", "idforge/ulid()",
             "≥ 1×", 1),
        ],
    },
}


def speedup(v):
    return f"{v:.2f}×"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
        return m.group(1).strip() if m else "unknown"
    except OSError:
        return "unknown"


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--markdown")
    ap.add_argument("--command", default="bench/node/run.sh")
    ap.add_argument("--suite", choices=sorted(SUITES), default="ids")
    args = ap.parse_args(argv)
    suite = SUITES[args.suite]
    begin, end = suite["markers"]
    peers = suite["peers"]
    with open(args.json) as f:
        data = json.load(f)
    ns = {r["name"]: r["ns"] for r in data["rows"] if r["ns"] is not None}
    loop_ns = {r["name"]: r["ns"] for r in data.get("loops") or []}

    def ratio(a, b, source=ns):
        return source[a] / source[b] if a in source and b in source else None

    many = ns.get("idforge/Snowflake.nextMany(100000) per call")
    rate = 100_000 / many * 1e9 if many else None

    text = ""
    if args.markdown:
        with open(args.markdown) as f:
            text = f.read()
    previous = record.previous_run(record.old_section(text, begin, end))

    # The plain loop's figures when the run has them ("what a user's loop sees"), else mitata's;
    # the measure's name says which, so a run is only paired with a run measured the same way.
    by_loop = any(ratio(peer, our, loop_ns) is not None for _, peer, our, _, _ in peers)
    targets = []  # (measure, value, shown, target text, lower bound)
    for name, peer, our, target, least in peers:
        value = ratio(peer, our, loop_ns) if by_loop else ratio(peer, our)
        label = f"{name} (speed-up, plain loop)" if by_loop else f"{name} (speed-up)"
        targets.append((label, value, None if value is None else speedup(value), target, least))
    if args.suite == "ids":
        targets.append(("Snowflake.nextMany(100000)", rate, None if rate is None else f"{rate / 1e6:.1f} M ids/s",
                        "≥ 50 M ids/s", 50e6))
    lines, verdicts = record.targets_table(
        ["measure", "result", "target"],
        [([label, shown or "—", target], record.verdict(value, at_least=least))
         for label, value, shown, target, least in targets],
        previous)

    loop = data.get("loop")
    loop_desc = f"best of {loop['rounds']} × {loop['n']:,} calls, every id kept" if loop else ""
    if by_loop:
        def ns1(v):
            return "n/a" if v is None else f"{v:.1f}"

        def x(v):
            return "n/a" if v is None else speedup(v)

        lines += ["", f"Plain loop ({loop_desc}) beside mitata (mean ns per call):", "",
                  "| comparison | plain loop: peer / ours (ns) | speed-up | mitata: peer / ours (ns) | speed-up |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        for name, peer, our, _, _ in peers:
            lines.append(f"| {name} | {ns1(loop_ns.get(peer))} / {ns1(loop_ns.get(our))} "
                         f"| {x(ratio(peer, our, loop_ns))} | {ns1(ns.get(peer))} / {ns1(ns.get(our))} "
                         f"| {x(ratio(peer, our))} |")
    lines += ["", "| benchmark | ns per call | × no-op native call |", "| --- | ---: | ---: |"]
    floor = ns.get("floor/no-op native call")
    for r in data["rows"]:
        cell = "error" if r["ns"] is None else f"{r['ns']:.1f}"
        rel = "" if r["ns"] is None or not floor else f"{r['ns'] / floor:.2f}"
        lines.append(f"| `{r['name']}` | {cell} | {rel} |")
    commit, now = record.git_commit(), record.utc_now()
    lines += ["", record.comment(commit, now, verdicts)]

    method = (f"verdicts on speed against a peer from a plain loop, {loop_desc}; mitata's mean ns per "
              "call, one run, beside it" if by_loop else "mitata, one run; mean ns per call")
    head = (f"Generated by `{args.command}` ({method}) on {now}, at commit {commit}; Node {data['node']}, "
            f"{os.cpu_count()} CPUs ({cpu_model()}).")
    section = "\n".join([head, "", *lines])
    print(section)
    if args.markdown:
        record.write_section(args.markdown, text, begin, end, section, heading=suite["heading"])
