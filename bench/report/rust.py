"""Turns one run of the idforge benchmarks into ratios, checks the targets, and rewrites the
generated section of BENCHMARKS.md. Called by bench/bench.sh; reads:

  - criterion's results: <criterion dir>/**/new/{benchmark,estimates}.json (mean point estimate);
    only those written since --since (the run's start), so stale results are never reported;
  - the saturation bench's JSON (IDFORGE_SATURATION_JSON).

Keeps the previous run's verdicts (read from the section it replaces) beside this run's: a
target counts as met when both runs pass; the pass/fail rule is bench/report/record.py's.

Prints the table; exits 0 whether targets pass or miss (timings are reported, not enforced).
"""

import argparse
import json
import os
import platform
import re
import subprocess

import record  # the pass/fail rule and the sections every bench report shares
from record import verdict

BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"
SEQ_RATE = 4_096_000  # a TWITTER layout's 12-bit sequence per millisecond


def load_criterion(root, since):
    """full_id -> {"ns": mean ns per element, "lo": .., "hi": .., "elements": n}."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "estimates.json" not in files:
            continue
        est_path = os.path.join(dirpath, "estimates.json")
        if os.path.getmtime(est_path) < since:
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            meta = json.load(f)
        with open(est_path) as f:
            est = json.load(f)
        elements = 1
        tp = meta.get("throughput") or {}
        if "Elements" in tp:
            elements = tp["Elements"]
        mean = est["mean"]
        ci = mean["confidence_interval"]
        out[meta["full_id"]] = {
            "ns": mean["point_estimate"] / elements,
            "lo": ci["lower_bound"] / elements,
            "hi": ci["upper_bound"] / elements,
            "elements": elements,
        }
    return out


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def git_state():
    """The commit the benches were built from, and whether the measured code was modified."""

    def git(*argv):
        try:
            return subprocess.run(
                ["git", *argv], capture_output=True, text=True, check=False
            ).stdout.rstrip("\n")
        except OSError:
            return ""

    commit = git("rev-parse", "--short", "HEAD").strip() or "unknown"
    dirty = git("status", "--porcelain", "--", "core", "runtime", "bench", "Cargo.toml", "Cargo.lock")
    if dirty:
        commit += " with uncommitted changes in " + ", ".join(
            sorted({line[3:].split("/")[0] for line in dirty.splitlines()})
        )
    return commit


def machine():
    cpuinfo = read("/proc/cpuinfo")
    m = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    cpu = m.group(1).strip() if m else platform.processor() or "unknown"
    clocksource = read(
        "/sys/devices/system/clocksource/clocksource0/current_clocksource", "unknown"
    ).strip()
    try:
        rustc = subprocess.run(
            ["rustc", "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        rustc = "unknown"
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "clocksource": clocksource,
        "kernel": platform.release(),
        "rustc": rustc,
        "load": " ".join(read("/proc/loadavg").split()[:3]),
    }


def fmt_ns(x):
    return "—" if x is None else f"{x:.2f}"


def fmt_ratio(x):
    return "—" if x is None else f"{x:.2f}×"


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--criterion", required=True)
    ap.add_argument("--saturation", required=True)
    ap.add_argument("--since", type=float, required=True)
    ap.add_argument("--markdown", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--steps", action="append", default=[])
    ap.add_argument("--commit", default="")
    ap.add_argument("--load-before", default="")
    ap.add_argument("--c-bench", default="", help="JSON of bench/c/run.sh (the C API), optional")
    args = ap.parse_args(argv)

    b = load_criterion(args.criterion, args.since)
    try:
        with open(args.saturation) as f:
            sat = json.load(f)
        if os.path.getmtime(args.saturation) < args.since:
            sat = []
    except (OSError, ValueError):
        sat = []

    c = {}
    if args.c_bench:
        try:
            if os.path.getmtime(args.c_bench) >= args.since:
                with open(args.c_bench) as f:
                    c = {r["name"]: r for r in json.load(f)}
        except (OSError, ValueError):
            c = {}

    def ns(full_id):
        r = b.get(full_id) or c.get(full_id)
        return None if r is None else r["ns"]

    def ratio(a, c):
        x, y = ns(a), ns(c)
        return None if x is None or y is None or y == 0 else x / y

    def sat_rate(name, threads):
        for r in sat:
            if r["name"] == name and r["threads"] == threads:
                return r
        return None

    sf = "idforge/snowflake.next"
    sf_wait = "idforge/snowflake.next (Wait: precise clock)"
    oid = "idforge/objectid"
    seg = "idforge/segments.next"
    fl = "idforge/flake128"
    u7 = "idforge/uuid7"

    # (label, value, target text, verdict)
    rows = []
    r = ratio(sf, "clock/Instant::now")
    rows.append(("snowflake.next / Instant::now", fmt_ratio(r), "≤ 1.25×", verdict(r, at_most=1.25)))
    # Wait reads the precise clock for each id: held to the floor of doing so.
    r = ratio(sf_wait, "atomic/SystemClock.now_ms then fetch_add")
    rows.append(("snowflake.next under Wait (precise clock) / (now_ms then fetch_add)", fmt_ratio(r), "≤ 1.1×",
                 verdict(r, at_most=1.1)))
    r = ratio("peers/bson ObjectId::new", oid)
    rows.append(("bson ObjectId::new / our objectid (speed-up)", fmt_ratio(r), "≥ 4×", verdict(r, at_least=4.0)))
    r = ratio("peers/uuid now_v7", u7)
    rows.append(("uuid Uuid::now_v7 / our uuid7 (speed-up)", fmt_ratio(r), "≥ 1×", verdict(r, at_least=1.0)))
    r = ratio(seg, "atomic/fetch_add (Relaxed)")
    rows.append(("segments.next / atomic fetch_add", fmt_ratio(r), "≤ 1.5×", verdict(r, at_most=1.5)))
    s1 = sat_rate("idforge Borrow(1 s)", 1)
    rate = None if s1 is None else s1["ids_per_sec"]
    rows.append((
        "saturated snowflake, Borrow, 1 thread (mean ids/s)",
        "—" if rate is None else f"{rate / 1e6:.3f} M/s",
        "> 4.096 M/s",
        verdict(rate, above=SEQ_RATE),
    ))
    for threads in (1, 2):
        w = sat_rate("idforge Wait(1 s)", threads)
        rate = None if w is None else w["ids_per_sec"]
        rows.append((
            f"saturated snowflake, Wait, {threads} thread{'s' if threads > 1 else ''} (mean ids/s)",
            "—" if rate is None else f"{rate / 1e6:.3f} M/s",
            "≥ 4.0 M/s",
            verdict(rate, at_least=4.0e6),
        ))
    if c:
        r = ratio("c/libbson bson_oid_init (own context)", "c/idforge_objectid_generate")
        rows.append(("C: libbson bson_oid_init / our idforge_objectid_generate (speed-up)", fmt_ratio(r),
                     "≥ 1×", verdict(r, at_least=1.0)))
        x, y = ns("c/idforge_snowflake_next"), ns(sf)
        d = None if x is None or y is None else x - y
        rows.append(("C: idforge_snowflake_next − Rust snowflake.next", "—" if d is None else f"{d:+.2f} ns",
                     "≤ +2 ns", verdict(d, at_most=2.0)))
    info = [
        ("snowflake.next_many(1024) per id / snowflake.next", ratio("idforge/snowflake.next_many(1024) per id", sf)),
        ("objectid / CLOCK_MONOTONIC_COARSE", ratio(oid, "clock/CLOCK_MONOTONIC_COARSE")),
        ("ferroid / our snowflake.next (speed-up)", ratio("peers/ferroid AtomicSnowflakeGenerator", sf)),
        ("snowflaked / our snowflake.next (speed-up)", ratio("peers/snowflaked sync::Generator", sf)),
        ("uuid now_v7 / our flake128 (speed-up)", ratio("peers/uuid now_v7", fl)),
        ("ulid Generator / our flake128 (speed-up)", ratio("peers/ulid Generator.generate", fl)),
        ("ulid Generator / our ulid (speed-up)", ratio("peers/ulid Generator.generate", "idforge/ulid")),
        ("our uuid7 / SystemTime::now", ratio(u7, "clock/SystemTime::now")),
        ("SystemClock.now_ms / Instant::now", ratio("pieces/SystemClock.now_ms", "clock/Instant::now")),
        ("snowflake.next / (recent_ms then fetch_add), the floor of a shared generator reading the coarse clock",
         ratio(sf, "atomic/SystemClock.recent_ms then fetch_add")),
        ("snowflake.next under Wait / Instant::now", ratio(sf_wait, "clock/Instant::now")),
        ("(now_ms then fetch_add) / Instant::now", ratio("atomic/SystemClock.now_ms then fetch_add", "clock/Instant::now")),
        ("CLOCK_MONOTONIC as ms / Instant::now", ratio("pieces/CLOCK_MONOTONIC as ms (integer math)", "clock/Instant::now")),
        ("core SnowflakeGen.next / atomic fetch_add", ratio("pieces/core SnowflakeGen.next (fixed time)", "atomic/fetch_add (Relaxed)")),
        ("core SegmentBuffer.take / atomic fetch_add", ratio("pieces/core SegmentBuffer.take", "atomic/fetch_add (Relaxed)")),
    ]
    if c:
        info += [
            ("C: idforge_snowflake_next / clock_gettime(CLOCK_REALTIME)",
             ratio("c/idforge_snowflake_next", "c/clock_gettime(CLOCK_REALTIME)")),
            ("C: idforge_objectid_generate / CLOCK_MONOTONIC_COARSE (our second clock)",
             ratio("c/idforge_objectid_generate", "c/clock_gettime(CLOCK_MONOTONIC_COARSE)")),
            ("C: libbson bson_oid_init / time(NULL) (its second clock)",
             ratio("c/libbson bson_oid_init (own context)", "c/time(NULL)")),
        ]

    order = [
        "clock/Instant::now",
        "clock/SystemTime::now",
        "clock/CLOCK_MONOTONIC_COARSE",
        "atomic/fetch_add (Relaxed)",
        sf,
        sf_wait,
        "idforge/snowflake.next_many(1024) per id",
        oid,
        fl,
        seg,
        "peers/ferroid AtomicSnowflakeGenerator",
        "peers/snowflaked sync::Generator",
        "peers/uuid now_v7",
        "peers/bson ObjectId::new",
        "peers/ulid Generator.generate",
        "pieces/SystemClock.now_ms",
        "pieces/CLOCK_MONOTONIC as ms (integer math)",
        "pieces/SystemClock.now_secs",
        "pieces/core SnowflakeGen.next (fixed time)",
        "pieces/core ObjectIdGen.next (fixed time)",
        "pieces/core SegmentBuffer.take",
    ]
    order += sorted(k for k in b if k not in order)
    base = ns("clock/Instant::now")

    m = machine()
    now = record.utc_now()
    commit = args.commit or git_state()
    text = read(args.markdown)
    previous = record.previous_run(record.old_section(text, BEGIN, END))
    table, verdicts = record.targets_table(
        ["measure", "result", "target"], [([label, value, target], v) for label, value, target, v in rows],
        previous)
    extra = [record.cells(label, v, previous) for label, _, _, v in rows]
    md = []
    steps = ", then ".join(f"`{x}`" for x in args.steps)
    md.append(
        f"Generated by `{args.command}`{f' ({steps})' if steps else ''} on {now}, "
        f"at commit {commit}."
    )
    md.append("")
    md.append(
        f"Machine: {m['nproc']} CPUs, {m['cpu']}, clocksource `{m['clocksource']}`, "
        f"Linux {m['kernel']}, {m['rustc']}; load average before the run "
        f"{args.load_before or '?'}, after {m['load']}."
    )
    md.append("")
    md.append("### Targets")
    md.append("")
    md += table
    md.append("")
    md.append("### Other ratios")
    md.append("")
    md.append("| ratio | value |")
    md.append("| --- | ---: |")
    for label, value in info:
        md.append(f"| {label} | {fmt_ratio(value)} |")
    md.append("")
    md.append("### Single-thread cost per id (criterion mean, 95% CI)")
    md.append("")
    md.append("| benchmark | ns/id | 95% CI | × Instant::now |")
    md.append("| --- | ---: | ---: | ---: |")
    for k in order:
        if k not in b:
            continue
        r = b[k]
        rel = "—" if base is None else f"{r['ns'] / base:.2f}"
        md.append(f"| `{k}` | {r['ns']:.2f} | {r['lo']:.2f} – {r['hi']:.2f} | {rel} |")
    md.append("")
    if c:
        md.append("### C API cost per id (bench/c, median of runs, gcc -O2, static libidforge.a)")
        md.append("")
        md.append("| benchmark | ns/id | runs × ids |")
        md.append("| --- | ---: | ---: |")
        for r in c.values():
            md.append(f"| `{r['name']}` | {r['ns']:.2f} | {r['runs']} × {r['iters']:,} |")
        md.append("")
    md.append("### Saturated snowflake rate (TWITTER layout, ids returned per second)")
    md.append("")
    md.append("| generator | threads | seconds | ids | mean M/s | last second M/s | errors |")
    md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in sat:
        md.append(
            f"| {r['name']} | {r['threads']} | {r['secs']:.2f} | {r['ids']:,} | "
            f"{r['ids_per_sec'] / 1e6:.3f} | {r['last_second_ids_per_sec'] / 1e6:.3f} | {r['errors']} |"
        )
    md.append("")
    md.append(record.comment(commit, now, verdicts))
    section = "\n".join(md)

    # Print for the terminal.
    print()
    print("targets:")
    for (label, value, target, v), (prev, both) in zip(rows, extra):
        print(f"  {label:<52} {value:>12}  target {target:<12} {v:<4}  previous {prev}  both: {both}")
    print("other ratios:")
    for label, value in info:
        print(f"  {label:<52} {fmt_ratio(value):>12}")
    print("ns per id:")
    for k in order:
        if k in b:
            print(f"  {k:<52} {fmt_ns(b[k]['ns']):>12}")

    record.write_section(args.markdown, text, BEGIN, END, section)
    print(f"\nwrote {args.markdown}")
    return 0
