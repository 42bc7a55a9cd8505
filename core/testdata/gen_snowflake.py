#!/usr/bin/env python3
"""Generates core/testdata/snowflake.json, the shared snowflake vectors.

Run from anywhere: `python3 core/testdata/gen_snowflake.py` rewrites snowflake.json next to this
script (or `--check` to fail when the committed file differs). It is a second, independent model of
the snowflake layout and of the (tick, sequence) state in core/src/tick.rs, written with Python's
unbounded integers; it never imports or runs the Rust code. Review a change to the vectors as a
diff of the JSON.
"""

import json
import sys
from pathlib import Path

U64_MAX = (1 << 64) - 1

# --------------------------------------------------------------------------- layouts

PRESETS = [
    # name, epoch_ms, tick_ms, time_bits, node_bits, seq_bits, order, unsigned
    ("twitter", 1288834974657, 1, 41, 10, 12, "time_node_seq", False),
    ("discord", 1420070400000, 1, 42, 10, 12, "time_node_seq", True),
    ("instagram", 1314220021721, 1, 41, 13, 10, "time_node_seq", True),
    ("sonyflake", 1409529600000, 10, 39, 16, 8, "time_seq_node", False),
    ("baidu", 1463702400000, 1000, 28, 22, 13, "time_node_seq", False),
    ("js_safe", 1577836800000, 1, 41, 4, 8, "time_node_seq", False),
]

FIELDS = ("epoch_ms", "tick_ms", "time_bits", "node_bits", "seq_bits", "order", "unsigned")


def preset(name):
    for p in PRESETS:
        if p[0] == name:
            return dict(zip(FIELDS, p[1:]))
    raise KeyError(name)


def custom(epoch_ms, tick_ms, time_bits, node_bits, seq_bits, order="time_node_seq",
           unsigned=False):
    return dict(epoch_ms=epoch_ms, tick_ms=tick_ms, time_bits=time_bits, node_bits=node_bits,
                seq_bits=seq_bits, order=order, unsigned=unsigned)


def resolve(ref):
    """A layout reference in a row is a preset name or the layout's fields."""
    return preset(ref) if isinstance(ref, str) else ref


def layout_json(layout):
    """The JSON form of a custom layout: 64-bit quantities as decimal strings."""
    out = dict(layout)
    out["epoch_ms"] = str(layout["epoch_ms"])
    out["tick_ms"] = str(layout["tick_ms"])
    return out


def ref_json(ref):
    return ref if isinstance(ref, str) else layout_json(ref)


def layout_error(l):
    """The rule a layout breaks (None when valid), following the documented rules."""
    t, n, s = l["time_bits"], l["node_bits"], l["seq_bits"]
    if l["tick_ms"] < 1:
        return "tick_ms must be at least 1"
    if t < 1:
        return "time_bits must be at least 1"
    if t + s > 63:
        return "time_bits + seq_bits must be at most 63"
    if t + n + s > (64 if l["unsigned"] else 63):
        return "time_bits + node_bits + seq_bits must be at most 63, or 64 when unsigned"
    if l["epoch_ms"] + ((1 << t) - 1) * l["tick_ms"] > U64_MAX:
        return "the last encodable time must fit u64 milliseconds"
    return None


def maxes(l):
    return (1 << l["time_bits"]) - 1, (1 << l["node_bits"]) - 1, (1 << l["seq_bits"]) - 1


def pack(l, tick, node, seq):
    n, s = l["node_bits"], l["seq_bits"]
    if l["order"] == "time_node_seq":
        return (tick << (n + s)) | (node << s) | seq
    return (tick << (n + s)) | (seq << n) | node


def unpack(l, ident):
    n, s = l["node_bits"], l["seq_bits"]
    tick = ident >> (n + s)
    if l["order"] == "time_node_seq":
        node, seq = (ident >> s) & ((1 << n) - 1), ident & ((1 << s) - 1)
    else:
        node, seq = ident & ((1 << n) - 1), (ident >> n) & ((1 << s) - 1)
    return tick, node, seq


def compose(l, tick, node, seq):
    max_tick, max_node, max_seq = maxes(l)
    if tick > max_tick:
        return "TIME_OUT_OF_RANGE"
    if node > max_node:
        return "NODE_OUT_OF_RANGE"
    if seq > max_seq:
        return "SEQUENCE_OUT_OF_RANGE"
    ident = pack(l, tick, node, seq)
    total = l["time_bits"] + l["node_bits"] + l["seq_bits"]
    assert ident < (1 << total) and ident <= U64_MAX
    if not l["unsigned"]:
        assert ident < (1 << 63)
    return ident


def tick_of(l, time_ms):
    if time_ms < l["epoch_ms"]:
        return None
    tick = (time_ms - l["epoch_ms"]) // l["tick_ms"]
    return tick if tick <= maxes(l)[0] else None


def ceil_div(a, b):
    return -(-a // b)


def run_generator(l, node, max_lead_ms, readings):
    """The expected result of each `next(now_ms)` call on a fresh generator.

    state is the next free `tick << seq_bits | seq`; a call takes
    cand = max(now_tick << seq_bits, state); it fails when the time field is used up, is
    Pending when cand's tick is more than max_lead ticks ahead of the clock, and otherwise
    issues cand and moves state to cand + 1.
    """
    s = l["seq_bits"]
    max_tick = maxes(l)[0]
    lead = ceil_div(max_lead_ms, l["tick_ms"])
    state = 0
    out = []
    for now in readings:
        if now < l["epoch_ms"]:
            out.append({"error": "EPOCH_IN_FUTURE"})
            continue
        now_tick = (now - l["epoch_ms"]) // l["tick_ms"]
        if now_tick > max_tick:
            out.append({"error": "TIME_OUT_OF_RANGE"})
            continue
        cand = max(now_tick << s, state)
        tick = cand >> s
        if tick > max_tick:
            out.append({"error": "TIME_OUT_OF_RANGE"})
            continue
        if tick - now_tick > lead:
            until_tick = tick - lead
            out.append({"pending_until_ms": str(l["epoch_ms"] + until_tick * l["tick_ms"])})
            continue
        seq = cand & ((1 << s) - 1)
        out.append({"id": str(pack(l, tick, node, seq))})
        state = cand + 1
    return out


# --------------------------------------------------------------------------- rows

def presets_rows():
    rows = []
    for p in PRESETS:
        l = dict(zip(FIELDS, p[1:]))
        assert layout_error(l) is None, p
        rows.append({"name": p[0], **layout_json(l)})
    return rows


PRESET_NAMES = [
    ("twitter", "twitter"), ("TWITTER", "twitter"), ("Discord", "discord"),
    ("instagram", "instagram"), ("SonyFlake", "sonyflake"), ("baidu", "baidu"),
    ("js_safe", "js_safe"), ("js-safe", "js_safe"), ("JS-SAFE", "js_safe"),
    ("nope", None), ("", None), ("twitter ", None), ("jssafe", None),
]

TINY = custom(1000, 1, 4, 0, 1)
SEQ2 = custom(0, 1, 41, 10, 2)
FULL63 = custom(0, 1, 63, 0, 0)
FULL64 = custom(0, 1, 50, 4, 10, unsigned=True)
EDGE_EPOCH = custom(U64_MAX - ((1 << 20) - 1) * 7, 7, 20, 3, 5)
NOSEQ_SONY = custom(1409529600000, 10, 39, 24, 0, order="time_seq_node")


def compose_rows():
    cases = []
    for name, l in [(p[0], preset(p[0])) for p in PRESETS]:
        mt, mn, ms = maxes(l)
        cases += [
            (name, 0, 0, 0), (name, 0, 0, 1), (name, 0, 1, 0), (name, 1, 0, 0),
            (name, 0, mn, ms), (name, 1, mn, 0), (name, mt, 0, 0), (name, mt, mn, ms),
            (name, mt >> 1, mn >> 1, ms >> 1), (name, (mt >> 1) + 1, 0, 0),
        ]
    cases += [
        # A tweet id (status 1212161842325159937): fields from the published bit positions.
        ("twitter", 1212161842325159937 >> 22, (1212161842325159937 >> 12) & 1023,
         1212161842325159937 & 4095),
        # Discord's documented example id 175928847299117063: worker 1, process 0, increment 7.
        ("discord", 41944705796, (1 << 5) | 0, 7),
        ("instagram", 1387263000, 1341, 5001 % 1024),
        ("sonyflake", 123456789, 0xabcd, 5),
        ("baidu", 100_000_000, 123_456, 42),
        ("js_safe", 150_000_000_000, 9, 200),
    ]
    for l in (TINY, SEQ2, FULL63, FULL64, EDGE_EPOCH, NOSEQ_SONY):
        assert layout_error(l) is None, l
        mt, mn, ms = maxes(l)
        for t, n, s in [(0, 0, 0), (1, mn, ms), (mt, mn, ms), (mt, 0, 0), (mt >> 1, mn >> 1, 0)]:
            cases.append((l, t, n, s))
    rows = []
    for ref, t, n, s in cases:
        l = resolve(ref)
        ident = compose(l, t, n, s)
        assert isinstance(ident, int), (ref, t, n, s)
        assert unpack(l, ident) == (t, n, s)
        rows.append({"layout": ref_json(ref), "tick": str(t), "node": str(n), "seq": str(s),
                     "id": str(ident), "time_ms": str(l["epoch_ms"] + t * l["tick_ms"])})
    ids = {r["id"] for r in rows if r["layout"] == "discord"}
    assert "175928847299117063" in ids and any(int(r["id"]) >= 1 << 63 for r in rows)
    return rows


def bounds_rows():
    cases = []
    for p in PRESETS:
        l = preset(p[0])
        e, tm = l["epoch_ms"], l["tick_ms"]
        mt = maxes(l)[0]
        cases += [(p[0], e), (p[0], e + tm - 1), (p[0], e + 1_000_000 * tm + tm // 2),
                  (p[0], e + mt * tm), (p[0], e + mt * tm + tm - 1),
                  (p[0], 1_700_000_000_000)]
    cases += [(TINY, 1000), (TINY, 1015), (FULL63, 0), (FULL63, (1 << 63) - 1),
              (FULL64, (1 << 50) - 1), (EDGE_EPOCH, U64_MAX)]
    rows = []
    for ref, time_ms in cases:
        l = resolve(ref)
        tick = tick_of(l, time_ms)
        assert tick is not None, (ref, time_ms)
        _, mn, ms = maxes(l)
        lo, hi = pack(l, tick, 0, 0), pack(l, tick, mn, ms)
        assert lo <= hi
        rows.append({"layout": ref_json(ref), "time_ms": str(time_ms), "min": str(lo),
                     "max": str(hi)})
    return rows


def generator_rows():
    tw = preset("twitter")["epoch_ms"]
    sf = preset("sonyflake")["epoch_ms"]
    now = 1_700_000_000_000
    runs = []

    def run(comment, ref, node, max_lead_ms, readings):
        l = resolve(ref)
        calls = run_generator(l, node, max_lead_ms, readings)
        runs.append({
            "comment": comment, "layout": ref_json(ref), "node": str(node),
            "max_lead_ms": str(max_lead_ms),
            "calls": [{"now_ms": str(r), **c} for r, c in zip(readings, calls)],
        })

    run("twitter: a steady clock, repeats in a millisecond, a step back within the lead",
        "twitter", 1, 10,
        [now, now, now, now + 1, now + 1, now + 5, now + 3, now + 3, now + 6, now - 4, now + 6,
         now + 7])
    run("twitter: no lead at all, so a step back is Pending until the last tick comes round",
        "twitter", 1023, 0,
        [now, now + 1, now, now - 1000, now + 1, now + 2, now + 2])
    run("twitter: a large step back inside a large lead keeps counting past the last id",
        "twitter", 513, 60_000,
        [now, now - 30_000, now - 30_000, now - 59_999, now - 60_000, now - 60_001, now + 1])
    run("twitter: the very first tick of the epoch", "twitter", 0, 0, [tw, tw, tw + 1])
    run("2 sequence bits, lead 1 ms: the sequence carries into the next tick, then waits",
        SEQ2, 7, 1,
        [100] * 10 + [101, 101, 101, 101, 102, 99, 103, 110, 110])
    run("2 sequence bits, lead 3 ms: carries across several ticks and a step back",
        SEQ2, 1023, 3, [5000] * 17 + [4990, 5001, 5002, 5003, 5003, 5004])
    run("2 sequence bits, no lead: every overflow is Pending", SEQ2, 0, 0,
        [2000] * 6 + [2001] * 5 + [1999, 2002])
    run("sonyflake: 10 ms ticks, a lead of 15 ms rounds up to 2 ticks", "sonyflake", 0xabcd, 15,
        [now + 3, now + 9, now + 1, now - 10, now - 21, now - 20, now + 10, now + 15])
    seq = [now] * 258 + [now + 9, now + 10] + [now] * 260 + [now + 20, now + 30]
    run("sonyflake: 256 ids per tick, then the sequence carries into borrowed ticks",
        "sonyflake", 65535, 10, seq)
    run("sonyflake: the first ticks after its epoch", "sonyflake", 1, 0,
        [sf, sf + 9, sf + 10, sf + 19])
    run("baidu: one-second ticks; lead 1 ms still allows one whole tick", "baidu", 4194303, 1,
        [now, now + 999, now + 1000, now + 500, now + 2000])
    run("js_safe: every id stays below 2^53", "js_safe", 15, 1,
        [now] * 3 + [now + 1, now - 1, now + 2])
    run("discord late in the century: ids above 2^63", "discord", 1, 5,
        [4_000_000_000_000, 4_000_000_000_000, 4_000_000_000_001, 3_999_999_999_999])
    run("instagram past 2046: ids above 2^63 for an unsigned layout", "instagram", 8191, 0,
        [2_500_000_000_000, 2_500_000_000_000, 2_500_000_000_001])
    run("a 4-bit time field: before the epoch, then the field runs out", TINY, 0, 10,
        [999, 1000, 1000, 1000, 1014, 1015, 1015, 1015, 1016, 1015, 0])
    run("a 4-bit time field with no lead: the last tick fills, then the field is used up", TINY, 0,
        0, [1015, 1015, 1015, 1015, 1000])
    run("no sequence bits: each tick holds one id per node", NOSEQ_SONY, 12345, 25,
        [sf + 100, sf + 101, sf + 105, sf + 109, sf + 110, sf + 111, sf + 50])
    run("an unbounded lead never waits", SEQ2, 3, U64_MAX,
        [1000] * 12 + [1001, 990])
    run("a 63-bit time field with no node or sequence", FULL63, 0, 2,
        [(1 << 63) - 3] * 4 + [(1 << 63) - 1] * 2 + [(1 << 63), U64_MAX])
    run("a layout whose last tick starts at u64::MAX - 6", EDGE_EPOCH, 7, 7 * 1000,
        [U64_MAX - 20, U64_MAX - 20, U64_MAX, U64_MAX])

    for r in runs:
        l = resolve(r["layout"]) if isinstance(r["layout"], str) else None
        ids = [int(c["id"]) for c in r["calls"] if "id" in c]
        assert ids and ids == sorted(ids) and len(set(ids)) == len(ids), r["comment"]
        if l is not None and not l["unsigned"]:
            assert all(i < 1 << 63 for i in ids)
        if r["layout"] == "js_safe":
            assert all(i < 1 << 53 for i in ids)
    kinds = {k for r in runs for c in r["calls"] for k in c if k != "now_ms"}
    assert kinds == {"id", "pending_until_ms", "error"}, kinds
    return runs


def invalid_layout_rows():
    good = dict(epoch_ms=0, tick_ms=1, time_bits=41, node_bits=10, seq_bits=12,
                order="time_node_seq", unsigned=False)
    u32_max = (1 << 32) - 1
    cases = [
        ("tick_ms 0", dict(tick_ms=0)),
        ("time_bits 0", dict(time_bits=0)),
        ("time_bits 0, no other fields", dict(time_bits=0, node_bits=0, seq_bits=0)),
        ("time_bits over 63", dict(time_bits=64, node_bits=0, seq_bits=0, unsigned=True)),
        ("time_bits far over 63", dict(time_bits=u32_max, node_bits=0, seq_bits=0)),
        ("seq_bits alone over 62", dict(time_bits=1, node_bits=0, seq_bits=63, unsigned=True)),
        ("seq_bits far over 62", dict(seq_bits=u32_max)),
        ("time + seq = 64 even when unsigned", dict(time_bits=52, node_bits=0, seq_bits=12,
                                                    unsigned=True)),
        ("time + seq = 64 with room in the total", dict(time_bits=32, node_bits=0, seq_bits=32,
                                                        unsigned=True)),
        ("64 bits in all without unsigned", dict(time_bits=42)),
        ("63-bit time and one node bit, signed", dict(time_bits=63, node_bits=1, seq_bits=0)),
        ("65 bits in all with unsigned", dict(time_bits=41, node_bits=12, seq_bits=12,
                                              unsigned=True)),
        ("node_bits alone over 64", dict(time_bits=1, node_bits=64, seq_bits=0, unsigned=True)),
        ("the time field outlasts u64 ms (epoch)", dict(epoch_ms=U64_MAX - 5)),
        ("the time field outlasts u64 ms (epoch, by one)",
         dict(epoch_ms=U64_MAX - ((1 << 41) - 1) + 1)),
        ("the time field outlasts u64 ms (tick_ms)", dict(time_bits=41, tick_ms=1 << 24)),
        ("the time field outlasts u64 ms (tick_ms, 63 bits)",
         dict(time_bits=63, node_bits=0, seq_bits=0, tick_ms=3)),
        ("the time field outlasts u64 ms (tick_ms u64 max)", dict(tick_ms=U64_MAX)),
    ]
    rows = []
    for rule, change in cases:
        l = dict(good, **change)
        assert layout_error(l) is not None, rule
        rows.append({"rule": rule, "layout": layout_json(l), "error": "INVALID_LAYOUT"})
    # The same edges, just inside the rules: each must be accepted.
    valid = [
        dict(time_bits=42, unsigned=True),
        dict(time_bits=63, node_bits=0, seq_bits=0),
        dict(time_bits=63, node_bits=1, seq_bits=0, unsigned=True),
        dict(time_bits=1, node_bits=1, seq_bits=62, unsigned=True),
        dict(time_bits=1, node_bits=63, seq_bits=0, unsigned=True),
        dict(epoch_ms=U64_MAX - ((1 << 41) - 1)),
        dict(time_bits=41, tick_ms=1 << 23),
        dict(time_bits=1, node_bits=0, seq_bits=0, tick_ms=U64_MAX),
        dict(time_bits=63, node_bits=0, seq_bits=0, tick_ms=2),
        dict(order="time_seq_node", time_bits=10, node_bits=0, seq_bits=0),
    ]
    valid_rows = []
    for change in valid:
        l = dict(good, **change)
        assert layout_error(l) is None, change
        valid_rows.append(layout_json(l))
    return rows, valid_rows


def invalid_field_rows():
    compose_bad, new_bad, decompose_bad, bounds_bad = [], [], [], []
    for p in PRESETS:
        l = preset(p[0])
        mt, mn, ms = maxes(l)
        for t, n, s in [(mt + 1, 0, 0), (U64_MAX, 0, 0), (0, mn + 1, 0), (0, U64_MAX, 0),
                        (0, 0, ms + 1), (0, 0, U64_MAX)]:
            err = compose(l, t, n, s)
            assert isinstance(err, str)
            compose_bad.append({"layout": p[0], "tick": str(t), "node": str(n), "seq": str(s),
                                "error": err})
        for n in (mn + 1, U64_MAX):
            new_bad.append({"layout": p[0], "node": str(n), "max_lead_ms": "0",
                            "error": "NODE_OUT_OF_RANGE"})
        total = l["time_bits"] + l["node_bits"] + l["seq_bits"]
        if total < 64:
            for ident in sorted({1 << total, (1 << total) | ((1 << total) - 1), 1 << 63, U64_MAX}):
                decompose_bad.append({"layout": p[0], "id": str(ident),
                                      "error": "INVALID_ARGUMENT"})
        e, tm = l["epoch_ms"], l["tick_ms"]
        for time_ms in (0, e - 1, e + (mt + 1) * tm, U64_MAX):
            assert tick_of(l, time_ms) is None
            bounds_bad.append({"layout": p[0], "time_ms": str(time_ms),
                               "error": "TIME_OUT_OF_RANGE"})
    compose_bad.append({"layout": layout_json(TINY), "tick": "0", "node": "1", "seq": "0",
                        "error": "NODE_OUT_OF_RANGE"})
    compose_bad.append({"layout": layout_json(FULL63), "tick": "0", "node": "0", "seq": "1",
                        "error": "SEQUENCE_OUT_OF_RANGE"})
    new_bad.append({"layout": layout_json(TINY), "node": "1", "max_lead_ms": "0",
                    "error": "NODE_OUT_OF_RANGE"})
    decompose_bad.append({"layout": layout_json(TINY), "id": "32", "error": "INVALID_ARGUMENT"})
    bounds_bad.append({"layout": layout_json(TINY), "time_ms": "1016",
                       "error": "TIME_OUT_OF_RANGE"})
    return compose_bad, new_bad, decompose_bad, bounds_bad


def check_epoch_rows():
    rows = []
    for p in PRESETS:
        e = preset(p[0])["epoch_ms"]
        for now, err in [(e - 1, "EPOCH_IN_FUTURE"), (0, "EPOCH_IN_FUTURE"), (e, None),
                         (e + 1, None), (U64_MAX, None)]:
            rows.append({"layout": p[0], "now_ms": str(now), "error": err})
    rows.append({"layout": layout_json(EDGE_EPOCH), "now_ms": str(1_700_000_000_000),
                 "error": "EPOCH_IN_FUTURE"})
    return rows


def build():
    invalid_layouts, valid_layouts = invalid_layout_rows()
    compose_bad, new_bad, decompose_bad, bounds_bad = invalid_field_rows()
    return {
        "description": (
            "Snowflake layouts, ids and generator runs of idforge-core, generated by "
            "gen_snowflake.py (an independent model; regenerate, never hand-edit). Every 64-bit "
            "quantity (epoch_ms, tick_ms, tick, node, seq, id, time_ms, now_ms, max_lead_ms, "
            "min, max, pending_until_ms) is a decimal string, since it may exceed 2^53. A "
            "\"layout\" is a preset name (looked up like Layout::preset_named) or an object "
            "with the fields of \"presets\" but no name. order is \"time_node_seq\" or "
            "\"time_seq_node\" (most significant field first). \"compose\" rows go both ways: "
            "compose(tick, node, seq) == id and decompose(id) == (tick, time_ms, node, seq). "
            "\"bounds_at\" gives the smallest and largest id of the tick containing time_ms. "
            "Each \"generator\" run is a fresh SnowflakeGen(layout, node, max_lead_ms) called "
            "once per entry of \"calls\" with now_ms (Unix ms), expecting exactly one of "
            "\"id\", \"pending_until_ms\" (Next::Pending: no id taken, retry from that time) or "
            "\"error\"; the lead is rounded up to whole ticks. Errors are idforge error code "
            "names (errors.json)."
        ),
        "presets": presets_rows(),
        "preset_names": [{"input": i, "preset": p} for i, p in PRESET_NAMES],
        "valid_layouts": valid_layouts,
        "compose": compose_rows(),
        "bounds_at": bounds_rows(),
        "generator": generator_rows(),
        "invalid_layouts": invalid_layouts,
        "invalid_compose": compose_bad,
        "invalid_generator_new": new_bad,
        "invalid_decompose": decompose_bad,
        "invalid_bounds_at": bounds_bad,
        "check_epoch": check_epoch_rows(),
    }


def dump(value, indent=""):
    """JSON with two-space indentation, but an object or list of plain values on one line when it
    fits in 100 columns (so a generator call is one line)."""
    flat = json.dumps(value, ensure_ascii=False)
    nested = isinstance(value, (dict, list)) and any(
        isinstance(v, (dict, list)) for v in (value.values() if isinstance(value, dict) else value))
    if not isinstance(value, (dict, list)) or (not nested and len(indent) + len(flat) <= 100):
        return flat
    inner = indent + "  "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {dump(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    items = [inner + dump(v, inner) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + indent + "]"


def main():
    path = Path(__file__).resolve().with_name("snowflake.json")
    text = dump(build()) + "\n"
    if sys.argv[1:] == ["--check"]:
        if path.read_text() != text:
            sys.exit(f"{path} is out of date: run {Path(__file__).name}")
        return
    path.write_text(text)


if __name__ == "__main__":
    main()
